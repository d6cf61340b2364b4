package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.NodeId;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class RemoteQueuesTest {

    @Test
    void shouldFailAForwardedPublishWhoseHomeNeverAnswersAndForgetIt() {
        RemoteQueues remote =
                new RemoteQueues(new NodeId("ganglion-1"), id -> null, TimeUnit.MILLISECONDS.toNanos(200));
        // a replicated queue with no owner in sight: the publish waits for one, then times out
        remote.replication((vhost, queue) -> Optional.empty(), 7);
        remote.attach(null);
        long started = System.nanoTime();
        CompletableFuture<Void> outcome = remote.publish(
                new NodeId("ganglion-2"), "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertThat(remote.forwardedCount()).isEqualTo(1);

        assertThatThrownBy(() -> outcome.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("queue 'orders' did not answer the publish in time");
        assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(remote.forwardedCount()).isZero();
    }

    @Test
    void shouldFailAtOnceAPublishToAnUnreachableHomeOfAQueueThatIsNotReplicated() {
        RemoteQueues remote = new RemoteQueues(new NodeId("ganglion-1"), id -> null, TimeUnit.SECONDS.toNanos(30));
        remote.attach(null);
        CompletableFuture<Void> outcome =
                remote.publish(new NodeId("ganglion-2"), "/", 42, "orders", false, ByteBuffer.wrap(new byte[] {1}));
        assertThat(outcome).isCompletedExceptionally();
        assertThat(remote.forwardedCount()).isZero();
    }
}
