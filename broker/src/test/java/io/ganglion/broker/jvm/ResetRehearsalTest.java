package io.ganglion.broker.jvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import org.junit.jupiter.api.Test;

class ResetRehearsalTest {

    /** What the listener's side of a rehearsed connection sees: the byte sent, then the end; its stream to read on. */
    private interface AfterEnd {
        void check(InputStream in) throws Exception;
    }

    private static void rehearseAgainstAListener(boolean reset, AfterEnd afterEnd) throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Socket client =
                    ResetRehearsal.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
            try (Socket accepted = server.accept()) {
                InputStream in = accepted.getInputStream();
                assertThat(in.read()).as("the byte sent first").isZero();
                ResetRehearsal.end(client, reset);
                assertThat(client.isClosed()).isTrue();
                afterEnd.check(in);
            }
        }
    }

    @Test
    void shouldLeaveTheListenerAByteToReadThenAConnectionReset() throws Exception {
        // a reset, not an orderly end of stream (read would return -1): the failing read a dead peer causes
        rehearseAgainstAListener(
                true,
                in -> assertThatThrownBy(in::read)
                        .isInstanceOf(SocketException.class)
                        .hasMessageContaining("reset"));
    }

    @Test
    void shouldLeaveTheListenerAByteToReadThenAnEndOfStream() throws Exception {
        rehearseAgainstAListener(
                false,
                in -> assertThat(in.read()).as("an orderly end of stream").isEqualTo(-1));
    }

    @Test
    void shouldRehearseSoonAfterStartThenLessOften() {
        assertThat(ResetRehearsal.DELAYS_SECONDS).isSorted().startsWith(5L);
        assertThat(ResetRehearsal.PERIOD_SECONDS).isGreaterThanOrEqualTo(ResetRehearsal.DELAYS_SECONDS[5]);
    }
}
