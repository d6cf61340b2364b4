package io.ganglion.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ResetRehearsalTest {

    @Test
    void shouldLeaveTheListenerAByteToReadThenAConnectionReset() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> rehearsal = CompletableFuture.runAsync(() -> {
                try {
                    ResetRehearsal.rehearse(
                            new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), true);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try (Socket accepted = server.accept()) {
                InputStream in = accepted.getInputStream();
                assertThat(in.read()).as("the byte sent first").isZero();
                rehearsal.get(5, TimeUnit.SECONDS);
                // a reset, not an orderly end of stream (read would return -1): the failing read a dead peer causes
                assertThatThrownBy(in::read).isInstanceOf(SocketException.class).hasMessageContaining("reset");
            }
        }
    }

    @Test
    void shouldLeaveTheListenerAByteToReadThenAnEndOfStream() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> rehearsal = CompletableFuture.runAsync(() -> {
                try {
                    ResetRehearsal.rehearse(
                            new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), false);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try (Socket accepted = server.accept()) {
                InputStream in = accepted.getInputStream();
                assertThat(in.read()).as("the byte sent first").isZero();
                rehearsal.get(5, TimeUnit.SECONDS);
                assertThat(in.read()).as("an orderly end of stream").isEqualTo(-1);
            }
        }
    }

    @Test
    void shouldRehearseSoonAfterStartThenLessOften() {
        assertThat(ResetRehearsal.DELAYS_SECONDS).isSorted().startsWith(5L);
        assertThat(ResetRehearsal.PERIOD_SECONDS).isGreaterThanOrEqualTo(ResetRehearsal.DELAYS_SECONDS[5]);
    }
}
