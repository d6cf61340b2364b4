package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.NodeId;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.testing.Poll;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiPredicate;
import org.junit.jupiter.api.Test;

class ForwardingClientTest {
    /** No link to another broker: every message to one is refused, as when its link is closed. */
    private static final BiPredicate<NodeId, PeerMessage> NO_LINK = (to, message) -> false;

    /** A client of no replicas whose lanes all live on {@code shard}. */
    private static ForwardingClient client(
            NodeId self,
            java.util.function.LongFunction<LocalQueue> replicas,
            Shard shard,
            long timeoutNanos,
            BiPredicate<NodeId, PeerMessage> sender) {
        return new ForwardingClient(self, replicas, id -> shard, List.of(shard), timeoutNanos, sender);
    }

    @Test
    void shouldFailAForwardedPublishWhoseHomeNeverAnswersAndForgetIt() {
        try (Shard shard = new Shard(0)) {
            failAForwardedPublishWhoseHomeNeverAnswers(shard);
        }
    }

    private static void failAForwardedPublishWhoseHomeNeverAnswers(Shard shard) {
        ForwardingClient remote =
                client(new NodeId("ganglion-1"), id -> null, shard, TimeUnit.MILLISECONDS.toNanos(200), NO_LINK);
        // a replicated queue with no owner in sight: the publish waits for one, then times out
        remote.replication((vhost, queue) -> Optional.empty(), 7);
        remote.startResending();
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
        try (Shard shard = new Shard(0)) {
            ForwardingClient remote =
                    client(new NodeId("ganglion-1"), id -> null, shard, TimeUnit.SECONDS.toNanos(30), NO_LINK);
            remote.startResending();
            CompletableFuture<Void> outcome =
                    remote.publish(new NodeId("ganglion-2"), "/", 42, "orders", false, ByteBuffer.wrap(new byte[] {1}));
            assertThat(outcome).isCompletedExceptionally();
            assertThat(remote.forwardedCount()).isZero();
        }
    }

    /** A replica that records the publishes it is given, in order, and confirms them at once. */
    private static final class RecordingQueue implements LocalQueue {
        final Shard shard;
        final List<Integer> published = new CopyOnWriteArrayList<>();

        RecordingQueue(Shard shard) {
            this.shard = shard;
        }

        @Override
        public String name() {
            return "orders";
        }

        @Override
        public String vhost() {
            return "/";
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> firstServed() {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }

        @Override
        public Shard shard() {
            return shard;
        }

        @Override
        public void publish(ByteBuffer payload, CompletableFuture<Void> done) {
            published.add((int) payload.get(0));
            done.complete(null);
        }

        @Override
        public void consume(ConsumerKey key, QueueConsumer consumer) {}

        @Override
        public void cancel(ConsumerKey key) {}

        @Override
        public Optional<Delivery> get(boolean noAck) {
            return Optional.empty();
        }

        @Override
        public void settle(long[] offsets, Settlement settlement) {}

        @Override
        public long purge() {
            return 0;
        }

        @Override
        public int readyCount() {
            return 0;
        }

        @Override
        public int consumerCount() {
            return 0;
        }
    }

    /**
     * An owner lost with publishes in flight to it: they wait, later publishes of the same queue (forwarded or this
     * broker's own) wait behind them, and all reach the next owner, here this broker, in the order they were sent.
     */
    @Test
    void shouldKeepAQueuesPublishesInOrderAcrossAChangeOfOwner() throws Exception {
        NodeId self = new NodeId("ganglion-1");
        try (Shard shard = new Shard(0)) {
            RecordingQueue queue = new RecordingQueue(shard);
            // no link: whatever is sent to another broker waits, as when its link closes
            ForwardingClient remote =
                    client(self, id -> id == 42 ? queue : null, shard, TimeUnit.SECONDS.toNanos(30), NO_LINK);
            AtomicReference<Optional<NodeId>> owner = new AtomicReference<>(Optional.empty());
            remote.replication((vhost, name) -> owner.get(), 7);
            remote.startResending();

            List<CompletableFuture<Void>> outcomes = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                outcomes.add(remote.publish(
                        new NodeId("ganglion-2"), "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {(byte) i})));
            }
            assertThat(remote.laneOf(42)[1]).as("waiting").isEqualTo(60);
            // this broker's own publish, should it own the queue now, may not pass them
            outcomes.add(remote.publishToOwnReplica("/", 42, "orders", queue, ByteBuffer.wrap(new byte[] {60})));
            assertThat(remote.laneOf(42)[1]).as("waiting").isEqualTo(61);
            assertThat(queue.published).isEmpty();

            owner.set(Optional.of(self)); // the next owner is this broker
            remote.ownersMayHaveChanged();
            CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i <= 60; i++) {
                expected.add(i);
            }
            assertThat(queue.published).isEqualTo(expected);
            assertThat(remote.laneOf(42)).containsExactly(0, 0);
            // nothing left before it: the own publish goes straight to the replica
            remote.publishToOwnReplica("/", 42, "orders", queue, ByteBuffer.wrap(new byte[] {61}))
                    .get(10, TimeUnit.SECONDS);
            assertThat(queue.published).endsWith(60, 61);
            assertThat(remote.laneOf(42)).containsExactly(0, 0);
            remote.forgetLanesExcept(java.util.Set.of(42L));
            assertThat(remote.laneCount())
                    .as("the lane of a live queue is kept")
                    .isEqualTo(1);
            remote.forgetLanesExcept(java.util.Set.of());
            assertThat(remote.laneCount())
                    .as("an idle lane of a deleted queue goes")
                    .isZero();
        }
    }

    /**
     * An owner that stops answering (frozen) while publishes are in flight to it: once the image names the next owner,
     * they are all sent to it again, in order, and the publishes after them follow them there; nothing waits for the
     * frozen broker's timeout.
     */
    @Test
    void shouldSendPublishesInFlightToAFrozenOwnerToTheNextOneInOrder() throws Exception {
        NodeId frozen = new NodeId("ganglion-2");
        NodeId next = new NodeId("ganglion-3");
        List<String> sent = new CopyOnWriteArrayList<>();
        try (Shard shard = new Shard(0)) {
            sendToTheNextOwner(shard, frozen, next, sent);
        }
    }

    private static void sendToTheNextOwner(Shard shard, NodeId frozen, NodeId next, List<String> sent)
            throws Exception {
        ForwardingClient remote =
                client(new NodeId("ganglion-1"), id -> null, shard, TimeUnit.SECONDS.toNanos(30), (to, message) -> {
                    if (message instanceof io.ganglion.broker.peer.PeerMessage.PublishToHome publish) {
                        sent.add(to.value() + ":" + publish.message()[0]);
                    }
                    return true;
                });
        AtomicReference<Optional<NodeId>> owner = new AtomicReference<>(Optional.of(frozen));
        remote.replication((vhost, name) -> owner.get(), 7);
        remote.startResending();
        List<CompletableFuture<Void>> outcomes = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            outcomes.add(remote.publish(frozen, "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {(byte) i})));
        }
        assertThat(remote.laneOf(42)[0]).as("in flight").isEqualTo(10);

        owner.set(Optional.of(next)); // recovered elsewhere; the frozen broker's link stays open
        remote.ownersMayHaveChanged();
        Poll.within(
                Duration.ofSeconds(10),
                Duration.ofMillis(5),
                () -> sent.stream().filter(s -> s.startsWith("ganglion-3")).count() >= 10);
        outcomes.add(remote.publish(next, "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {10})));
        // the publish passes its lane on the lane's shard: sent once that task ran
        Poll.within(Duration.ofSeconds(10), Duration.ofMillis(5), () -> sent.size() >= 21);

        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            expected.add("ganglion-2:" + i);
        }
        for (int i = 0; i <= 10; i++) {
            expected.add("ganglion-3:" + i);
        }
        assertThat(sent).isEqualTo(expected);
        // the next owner answers them all (it finds any the frozen one committed in its log: the same ids)
        for (long sequence = 1; sequence <= 11; sequence++) {
            remote.onMessage(next, new io.ganglion.broker.peer.PeerMessage.PublishToHomeOutcome(sequence, 0, ""));
        }
        CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
        assertThat(remote.forwardedCount()).isZero();
        assertThat(remote.laneOf(42)).containsExactly(0, 0);
    }
}
