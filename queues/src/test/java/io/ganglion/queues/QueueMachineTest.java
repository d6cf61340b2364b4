package io.ganglion.queues;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class QueueMachineTest {
    private static final ConsumerKey C1 = new ConsumerKey(1, "c1");
    private static final ConsumerKey C2 = new ConsumerKey(2, "c2");

    private final QueueMachine queue = new QueueMachine();
    private final RecordingEffects effects = new RecordingEffects();

    private void enqueue(long... offsets) {
        for (long offset : offsets) {
            queue.enqueue(offset, effects);
        }
    }

    @Test
    void shouldDeliverInOrderUpToPrefetch() {
        enqueue(10, 11, 12, 13);
        assertThat(queue.consume(C1, 2, false, false, effects)).isEqualTo(ConsumeOutcome.ADDED);
        assertThat(effects.offsetsTo(C1)).containsExactly(10L, 11L);
        assertThat(queue.readyCount()).isEqualTo(2);
        assertThat(queue.unackedCount()).isEqualTo(2);

        queue.ack(10, effects);
        assertThat(effects.settled).containsExactly(10L);
        assertThat(effects.offsetsTo(C1)).containsExactly(10L, 11L, 12L);
    }

    @Test
    void shouldReportTheLowestUnsettledOffsetOverReadyUnackedAndReturned() {
        assertThat(queue.lowestUnsettled()).isEqualTo(Long.MAX_VALUE);
        enqueue(10, 11, 12, 13);
        assertThat(queue.lowestUnsettled()).isEqualTo(10);
        queue.consume(C1, 2, false, false, effects); // 10 and 11 out, 12 and 13 ready
        queue.ack(10, effects); // 12 goes out
        assertThat(queue.lowestUnsettled()).isEqualTo(11);
        queue.reject(11, true, effects); // 11 returned, and out again at once
        queue.ack(12, effects);
        assertThat(queue.lowestUnsettled()).isEqualTo(11);
        queue.ack(11, effects);
        queue.ack(13, effects);
        assertThat(queue.lowestUnsettled()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldHandOutNothingWhileDeliveryIsHeld() {
        enqueue(1, 2);
        queue.consume(C1, 3, false, false, effects);
        assertThat(effects.offsetsTo(C1)).containsExactly(1L, 2L);
        queue.holdDelivery();
        enqueue(3, 4);
        queue.reject(1, true, effects);
        queue.ack(2, effects);
        assertThat(queue.get(false, effects)).isEmpty();
        assertThat(effects.offsetsTo(C1)).as("held").containsExactly(1L, 2L);
        assertThat(effects.settled).containsExactly(2L);
        assertThat(queue.readyCount()).isEqualTo(3);

        queue.resumeDelivery(effects);
        assertThat(queue.deliveryHeld()).isFalse();
        assertThat(effects.deliveries.subList(2, 5))
                .containsExactly(
                        new RecordingEffects.Delivery(C1, 1, true),
                        new RecordingEffects.Delivery(C1, 3, false),
                        new RecordingEffects.Delivery(C1, 4, false));
    }

    @Test
    void shouldRoundRobinBetweenConsumers() {
        queue.consume(C1, 0, false, false, effects);
        queue.consume(C2, 0, false, false, effects);
        enqueue(1, 2, 3, 4);
        assertThat(effects.offsetsTo(C1)).containsExactly(1L, 3L);
        assertThat(effects.offsetsTo(C2)).containsExactly(2L, 4L);
    }

    @Test
    void shouldRequeueInOriginalOrderMarkedRedelivered() {
        enqueue(1, 2, 3, 4, 5);
        queue.consume(C1, 3, false, false, effects);
        queue.cancel(C1);
        queue.requeue(new long[] {3, 1, 2}, effects);
        assertThat(queue.readyCount()).isEqualTo(5);

        queue.consume(C2, 0, false, false, effects);
        assertThat(effects.deliveries.subList(3, 8))
                .extracting(RecordingEffects.Delivery::offset, RecordingEffects.Delivery::redelivered)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1L, true),
                        org.assertj.core.groups.Tuple.tuple(2L, true),
                        org.assertj.core.groups.Tuple.tuple(3L, true),
                        org.assertj.core.groups.Tuple.tuple(4L, false),
                        org.assertj.core.groups.Tuple.tuple(5L, false));
    }

    @Test
    void shouldSettleOrRequeueOnReject() {
        enqueue(1, 2);
        queue.consume(C1, 1, false, false, effects);
        queue.reject(1, true, effects);
        assertThat(effects.deliveries.get(1)).isEqualTo(new RecordingEffects.Delivery(C1, 1, true));
        queue.reject(1, false, effects);
        assertThat(effects.settled).containsExactly(1L);
        assertThat(effects.deliveries.get(2).offset()).isEqualTo(2);
        assertThat(queue.reject(99, true, effects)).isFalse();
    }

    @Test
    void shouldSettleOnDeliveryForNoAckConsumer() {
        enqueue(1, 2, 3);
        queue.consume(C1, 1, true, false, effects);
        assertThat(effects.offsetsTo(C1)).containsExactly(1L, 2L, 3L);
        assertThat(effects.settled).containsExactly(1L, 2L, 3L);
        assertThat(queue.unackedCount()).isZero();
    }

    @Test
    void shouldGetOneMessageAtATime() {
        assertThat(queue.get(false, effects)).isEmpty();
        enqueue(7, 8);
        assertThat(queue.get(false, effects)).contains(new QueueMachine.Taken(7, false));
        assertThat(queue.get(true, effects)).contains(new QueueMachine.Taken(8, false));
        assertThat(effects.settled).containsExactly(8L);
        queue.requeue(new long[] {7}, effects);
        assertThat(queue.get(false, effects)).contains(new QueueMachine.Taken(7, true, 1));
        assertThat(queue.ack(7, effects)).isTrue();
    }

    @Test
    void shouldRefuseExclusiveConflictsAndDuplicateTags() {
        assertThat(queue.consume(C1, 0, false, true, effects)).isEqualTo(ConsumeOutcome.ADDED);
        assertThat(queue.consume(C2, 0, false, false, effects)).isEqualTo(ConsumeOutcome.EXCLUSIVE_CONFLICT);
        assertThat(queue.consume(C1, 0, false, false, effects)).isEqualTo(ConsumeOutcome.DUPLICATE_TAG);
        queue.cancel(C1);
        assertThat(queue.consume(C2, 0, false, false, effects)).isEqualTo(ConsumeOutcome.ADDED);
        assertThat(queue.consume(C1, 0, false, true, effects)).isEqualTo(ConsumeOutcome.EXCLUSIVE_CONFLICT);
    }

    @Test
    void shouldPurgeReadyButKeepUnacked() {
        enqueue(1, 2, 3);
        queue.consume(C1, 1, false, false, effects);
        queue.cancel(C1);
        assertThat(queue.purge(effects)).isEqualTo(2);
        assertThat(effects.settled).containsExactly(2L, 3L);
        assertThat(queue.unackedCount()).isEqualTo(1);
        assertThat(queue.ack(1, effects)).isTrue();
    }

    @Test
    void shouldMarkRecoveredMessagesRedelivered() {
        QueueMachine recovered = QueueMachine.recovered(new long[] {3, 5, 9});
        recovered.enqueue(12, effects);
        recovered.consume(C1, 0, false, false, effects);
        assertThat(effects.deliveries)
                .extracting(RecordingEffects.Delivery::offset, RecordingEffects.Delivery::redelivered)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(3L, true),
                        org.assertj.core.groups.Tuple.tuple(5L, true),
                        org.assertj.core.groups.Tuple.tuple(9L, true),
                        org.assertj.core.groups.Tuple.tuple(12L, false));
    }

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 300);
    }

    /**
     * Random consumers, acks, rejects, requeues and gets against a model: every enqueued offset is settled at most once,
     * and at the end is settled, ready or unacked, never lost; no consumer ever holds more than its prefetch; fresh
     * messages go out in offset order.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldNeverLoseOrDoubleSettleAMessage(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        QueueMachine machine = new QueueMachine();
        Map<ConsumerKey, Integer> prefetch = new HashMap<>();
        Map<ConsumerKey, Set<Long>> held = new HashMap<>();
        Set<Long> settled = new HashSet<>();
        List<Long> getHeld = new ArrayList<>();
        long[] lastFresh = {-1};
        Set<Long> everDelivered = new HashSet<>();
        QueueEffects checking = new QueueEffects() {
            @Override
            public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
                if (!everDelivered.add(offset)) {
                    assertThat(redelivered)
                            .as("seed %d: second delivery of %d is redelivered", seed, offset)
                            .isTrue();
                } else {
                    assertThat(offset).as("seed %d: fresh order", seed).isGreaterThan(lastFresh[0]);
                    lastFresh[0] = offset;
                }
                held.get(consumer).add(offset);
                int limit = prefetch.get(consumer);
                if (limit > 0) {
                    assertThat(held.get(consumer).size())
                            .as("seed %d: prefetch", seed)
                            .isLessThanOrEqualTo(limit);
                }
            }

            @Override
            public void settle(long offset) {
                assertThat(settled.add(offset))
                        .as("seed %d: settled twice %d", seed, offset)
                        .isTrue();
                held.values().forEach(set -> set.remove(offset));
            }
        };
        long nextOffset = 0;
        long enqueued = 0;
        List<ConsumerKey> live = new ArrayList<>();
        for (int step = 0; step < 500; step++) {
            int op = random.nextInt(10);
            if (op < 4) {
                nextOffset += random.nextInt(1, 3);
                machine.enqueue(nextOffset, checking);
                enqueued++;
            } else if (op == 4 && live.size() < 3) {
                ConsumerKey key = new ConsumerKey(step, "c" + step);
                prefetch.put(key, random.nextInt(0, 4));
                held.put(key, new HashSet<>());
                machine.consume(key, prefetch.get(key), false, false, checking);
                live.add(key);
            } else if (op == 5 && !live.isEmpty()) {
                ConsumerKey key = live.remove(random.nextInt(live.size()));
                machine.cancel(key);
                long[] back = held.get(key).stream().mapToLong(Long::longValue).toArray();
                held.get(key).clear();
                machine.requeue(back, checking);
            } else if (op <= 7) {
                List<Long> all = new ArrayList<>();
                held.values().forEach(all::addAll);
                if (!all.isEmpty()) {
                    long offset = all.get(random.nextInt(all.size()));
                    held.values().forEach(set -> set.remove(offset));
                    if (op == 6) {
                        machine.ack(offset, checking);
                    } else {
                        machine.reject(offset, random.nextBoolean(), checking);
                    }
                }
            } else if (op == 8) {
                machine.get(false, checking).ifPresent(taken -> getHeld.add(taken.offset()));
            } else if (!getHeld.isEmpty()) {
                machine.ack(getHeld.remove(0), checking);
            }
        }
        long inFlight = held.values().stream().mapToLong(Set::size).sum() + getHeld.size();
        assertThat(settled.size() + machine.readyCount() + inFlight)
                .as("seed %d: every message settled, ready or held", seed)
                .isEqualTo(enqueued);
        assertThat(machine.unackedCount()).as("seed %d", seed).isEqualTo((int) inFlight);
    }
}
