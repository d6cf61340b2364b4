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

    @Test
    void shouldFailAForwardedPublishWhoseHomeNeverAnswersAndForgetIt() {
        ForwardingClient remote =
                new ForwardingClient(new NodeId("ganglion-1"), id -> null, TimeUnit.MILLISECONDS.toNanos(200), NO_LINK);
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
        ForwardingClient remote =
                new ForwardingClient(new NodeId("ganglion-1"), id -> null, TimeUnit.SECONDS.toNanos(30), NO_LINK);
        remote.startResending();
        CompletableFuture<Void> outcome =
                remote.publish(new NodeId("ganglion-2"), "/", 42, "orders", false, ByteBuffer.wrap(new byte[] {1}));
        assertThat(outcome).isCompletedExceptionally();
        assertThat(remote.forwardedCount()).isZero();
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
                    new ForwardingClient(self, id -> id == 42 ? queue : null, TimeUnit.SECONDS.toNanos(30), NO_LINK);
            AtomicReference<Optional<NodeId>> owner = new AtomicReference<>(Optional.empty());
            remote.replication((vhost, name) -> owner.get(), 7);
            remote.startResending();

            List<CompletableFuture<Void>> outcomes = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                outcomes.add(remote.publish(
                        new NodeId("ganglion-2"), "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {(byte) i})));
            }
            assertThat(remote.laneOf(42).waiting()).isEqualTo(60);
            assertThat(remote.publishLocallyNow(42))
                    .as("this broker's own publish may not pass them")
                    .isFalse();
            // as the publish router then sends it: behind the others
            outcomes.add(remote.publish(self, "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {60})));
            assertThat(queue.published).isEmpty();

            owner.set(Optional.of(self)); // the next owner is this broker
            remote.ownersMayHaveChanged();
            CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i <= 60; i++) {
                expected.add(i);
            }
            assertThat(queue.published).isEqualTo(expected);
            assertThat(remote.laneOf(42).waiting()).isZero();
            assertThat(remote.laneOf(42).inFlight()).isZero();
            assertThat(remote.publishLocallyNow(42))
                    .as("nothing left before it")
                    .isTrue();
            remote.forgetLanesExcept(java.util.Set.of());
            assertThat(remote.laneCount()).as("a lane in use is kept").isEqualTo(1);
            remote.decidedLocally(42);
            assertThat(remote.laneOf(42).inFlight()).isZero();
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
        ForwardingClient remote = new ForwardingClient(
                new NodeId("ganglion-1"), id -> null, TimeUnit.SECONDS.toNanos(30), (to, message) -> {
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
        assertThat(remote.laneOf(42).inFlight()).isEqualTo(10);

        owner.set(Optional.of(next)); // recovered elsewhere; the frozen broker's link stays open
        remote.ownersMayHaveChanged();
        Poll.within(
                Duration.ofSeconds(10),
                Duration.ofMillis(5),
                () -> sent.stream().filter(s -> s.startsWith("ganglion-3")).count() >= 10);
        outcomes.add(remote.publish(next, "/", 42, "orders", true, ByteBuffer.wrap(new byte[] {10})));

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
        assertThat(remote.laneOf(42).inFlight()).isZero();
        assertThat(remote.laneOf(42).waiting()).isZero();
    }

    /** A lane lets a publish through to the broker every earlier one went to, and holds it for another. */
    @Test
    void shouldLetAPublishPassOnlyToTheBrokerItsQueuesEarlierPublishesWentTo() {
        PublishLane lane = new PublishLane();
        NodeId one = new NodeId("ganglion-1");
        NodeId two = new NodeId("ganglion-2");
        assertThat(lane.sendNow(one)).isTrue();
        assertThat(lane.sendNow(one)).isTrue();
        assertThat(lane.sendNow(two)).as("two in flight to another broker").isFalse();
        assertThat(lane.inFlight()).isEqualTo(2);
        lane.decidedInFlight();
        assertThat(lane.sendNow(two)).as("one still in flight elsewhere").isFalse();
        lane.decidedInFlight();
        assertThat(lane.sendNow(two)).as("nothing before it").isTrue();
        assertThat(lane.inFlight()).isEqualTo(1);
        assertThat(lane.waiting()).isZero();
    }
}
