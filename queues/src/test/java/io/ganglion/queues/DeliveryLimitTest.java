package io.ganglion.queues;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The delivery limit in the queue machine: every return after a delivery counts, a message returned more often than
 * the limit leaves instead of going back, and counts carried into a rebuilt machine go on from where they were.
 */
class DeliveryLimitTest {
    private static final ConsumerKey C1 = new ConsumerKey(1, "c1");

    /** Records returns and deliveries over the limit apart from other settlements. */
    private static final class LimitEffects implements QueueEffects {
        final List<Long> settled = new ArrayList<>();
        final List<Long> returned = new ArrayList<>();
        final List<Long> overLimit = new ArrayList<>();

        @Override
        public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {}

        @Override
        public void settle(long offset) {
            settled.add(offset);
        }

        @Override
        public void returned(long offset) {
            returned.add(offset);
        }

        @Override
        public void overDeliveryLimit(long offset) {
            overLimit.add(offset);
        }
    }

    private final LimitEffects effects = new LimitEffects();

    @Test
    void shouldCountEachReturnAndLetAMessageGoBackAsOftenAsTheLimit() {
        QueueMachine queue = new QueueMachine(new QueueMachine.Limits(-1, -1, 2));
        queue.enqueue(1, effects);

        for (int round = 1; round <= 2; round++) {
            QueueMachine.Taken taken = queue.get(false, effects).orElseThrow();
            assertThat(taken.deliveryCount()).isEqualTo(round - 1);
            queue.reject(1, true, effects);
            assertThat(queue.deliveryCount(1)).isEqualTo(round);
        }
        assertThat(queue.get(false, effects).orElseThrow().deliveryCount()).isEqualTo(2);
        queue.reject(1, true, effects); // the third return is one more than the limit

        assertThat(effects.overLimit).containsExactly(1L);
        assertThat(effects.returned).containsExactly(1L, 1L);
        assertThat(queue.readyCount()).isZero();
        assertThat(queue.lowestUnsettled()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldCountTheMessagesAClosedChannelGivesBack() {
        QueueMachine queue = new QueueMachine(new QueueMachine.Limits(-1, -1, 0));
        queue.enqueue(1, effects);
        queue.enqueue(2, effects);
        queue.consume(C1, 0, false, false, effects);

        queue.requeue(new long[] {1, 2}, effects); // a limit of 0: the first return is over it

        assertThat(effects.overLimit).containsExactly(1L, 2L);
        assertThat(queue.readyCount()).isZero();
    }

    @Test
    void shouldNeverLimitWithoutALimitButStillCount() {
        QueueMachine queue = new QueueMachine();
        queue.enqueue(1, effects);
        for (int i = 0; i < 50; i++) {
            queue.get(false, effects);
            queue.reject(1, true, effects);
        }

        assertThat(effects.overLimit).isEmpty();
        assertThat(queue.deliveryCount(1)).isEqualTo(50);
    }

    @Test
    void shouldForgetTheCountOfAMessageThatLeaves() {
        QueueMachine queue = new QueueMachine();
        queue.enqueue(1, effects);
        queue.get(false, effects);
        queue.reject(1, true, effects);
        queue.get(false, effects);
        queue.ack(1, effects);

        assertThat(queue.deliveryCount(1)).isZero();
    }

    @Test
    void shouldGoOnFromTheCountsARebuildCarries() {
        QueueMachine queue = QueueMachine.recovered(
                new long[] {4, 5}, null, null, new long[] {2, 0}, new QueueMachine.Limits(-1, -1, 2));

        QueueMachine.Taken first = queue.get(false, effects).orElseThrow();
        assertThat(first).isEqualTo(new QueueMachine.Taken(4, true, 2));
        queue.reject(4, true, effects);

        assertThat(effects.overLimit).containsExactly(4L);
        assertThat(queue.get(false, effects).orElseThrow()).isEqualTo(new QueueMachine.Taken(5, true, 0));
    }

    static List<Long> seeds() {
        return new SplittableRandom(40).longs(200).boxed().toList();
    }

    /**
     * Random enqueues, gets, acks, rejects with and without requeue, channel closes and rebuilds (a new owner from the
     * counts the log would hold) against a model that counts returns per message.
     */
    @ParameterizedTest
    @MethodSource("seeds")
    void shouldMatchAModelThatCountsReturns(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long limit = random.nextInt(4) == 0 ? -1 : random.nextInt(4);
        QueueMachine.Limits limits = new QueueMachine.Limits(-1, -1, limit);
        QueueMachine queue = new QueueMachine(limits);
        TreeSet<Long> ready = new TreeSet<>();
        TreeSet<Long> unacked = new TreeSet<>();
        Map<Long, Long> counts = new HashMap<>();
        List<Long> expectedOverLimit = new ArrayList<>();
        long next = 0;
        for (int step = 0; step < 400; step++) {
            int op = random.nextInt(10);
            String at = "seed " + seed + " step " + step;
            if (op < 3) {
                queue.enqueue(next, effects);
                ready.add(next++);
            } else if (op < 5) {
                var taken = queue.get(false, effects);
                assertThat(taken.isPresent()).as(at).isEqualTo(!ready.isEmpty());
                if (taken.isPresent()) {
                    long offset = ready.pollFirst();
                    assertThat(taken.get().offset()).as(at).isEqualTo(offset);
                    assertThat(taken.get().deliveryCount()).as(at).isEqualTo(counts.getOrDefault(offset, 0L));
                    unacked.add(offset);
                }
            } else if (op < 8 && !unacked.isEmpty()) {
                long offset = op == 5 ? unacked.first() : unacked.last();
                unacked.remove(offset);
                if (op == 5) {
                    queue.ack(offset, effects);
                    counts.remove(offset);
                } else if (op == 6) {
                    queue.reject(offset, false, effects);
                    counts.remove(offset);
                } else {
                    queue.reject(offset, true, effects);
                    returnInModel(offset, limit, ready, counts, expectedOverLimit);
                }
            } else if (op == 8 && !unacked.isEmpty()) {
                long[] held = unacked.stream().mapToLong(Long::longValue).toArray();
                unacked.clear();
                queue.requeue(held, effects);
                for (long offset : held) {
                    returnInModel(offset, limit, ready, counts, expectedOverLimit);
                }
            } else if (op == 9) {
                // a new owner: what was out with a consumer is ready again, uncounted; counts come from the log
                ready.addAll(unacked);
                unacked.clear();
                long[] unsettled = ready.stream().mapToLong(Long::longValue).toArray();
                long[] returnCounts = ready.stream()
                        .mapToLong(offset -> counts.getOrDefault(offset, 0L))
                        .toArray();
                queue = QueueMachine.recovered(unsettled, null, null, returnCounts, limits);
            }
            assertThat(queue.readyCount()).as(at).isEqualTo(ready.size());
            assertThat(effects.overLimit).as(at).isEqualTo(expectedOverLimit);
            for (long offset : ready) {
                assertThat(queue.deliveryCount(offset)).as(at).isEqualTo(counts.getOrDefault(offset, 0L));
            }
        }
    }

    private static void returnInModel(
            long offset, long limit, TreeSet<Long> ready, Map<Long, Long> counts, List<Long> overLimit) {
        long count = counts.getOrDefault(offset, 0L) + 1;
        if (limit >= 0 && count > limit) {
            counts.remove(offset);
            overLimit.add(offset);
        } else {
            counts.put(offset, count);
            ready.add(offset);
        }
    }
}
