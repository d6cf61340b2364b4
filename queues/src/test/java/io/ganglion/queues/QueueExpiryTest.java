package io.ganglion.queues;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Message TTL and length limits in the queue machine: expired messages are never handed out and leave once their time
 * comes; over a limit the oldest ready messages go.
 */
class QueueExpiryTest {
    private static final ConsumerKey C1 = new ConsumerKey(1, "c1");
    private static final long NEVER = QueueMachine.NEVER;

    private final QueueMachine queue = new QueueMachine();
    private final ExpiryEffects effects = new ExpiryEffects();

    /** Records expiries apart from other settlements. */
    private static final class ExpiryEffects implements QueueEffects {
        final List<Long> delivered = new ArrayList<>();
        final List<Long> settled = new ArrayList<>();
        final List<Long> expired = new ArrayList<>();

        @Override
        public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
            delivered.add(offset);
        }

        @Override
        public void settle(long offset) {
            settled.add(offset);
        }

        @Override
        public void expired(long offset) {
            expired.add(offset);
        }

        final List<Long> dropped = new ArrayList<>();

        @Override
        public void dropped(long offset) {
            dropped.add(offset);
        }
    }

    @Test
    void shouldExpireAtItsCommitAMessageWhoseTtlPassedBeforeItAndNeverHandItOut() {
        queue.advance(1_000, effects);
        queue.consume(C1, 10, false, false, effects);

        queue.enqueue(1, 100, 600, 0, effects); // TTL 500, committed 400 ms after its time
        queue.enqueue(2, 990, 990, 0, effects); // TTL 0, admitted 10 ms before its commit
        queue.enqueue(3, 900, 1_500, 0, effects);

        assertThat(effects.expired).containsExactly(1L);
        assertThat(effects.delivered).containsExactly(2L, 3L);
        assertThat(queue.lowestUnsettled()).isEqualTo(2);
    }

    @Test
    void shouldDropTheOldestReadyMessagesOverTheLengthLimitButNotTheOnesOut() {
        QueueMachine limited = new QueueMachine(new QueueMachine.Limits(2, -1));
        limited.consume(C1, 1, false, false, effects);
        for (long offset = 1; offset <= 5; offset++) {
            limited.enqueue(offset, NEVER, 10, effects);
        }
        assertThat(effects.delivered).containsExactly(1L); // out with the consumer: not counted
        assertThat(effects.dropped).containsExactly(2L, 3L);
        assertThat(limited.readyCount()).isEqualTo(2);
        limited.cancel(C1);
        limited.requeue(new long[] {1}, effects); // back over the limit: the limit applies at the next enqueue
        assertThat(limited.readyCount()).isEqualTo(3);
        limited.enqueue(6, NEVER, 10, effects);
        assertThat(effects.dropped).containsExactly(2L, 3L, 1L, 4L);
    }

    @Test
    void shouldDropByBodyBytesAndKeepCountingThemThroughDeliveriesAndReturns() {
        QueueMachine limited = new QueueMachine(new QueueMachine.Limits(-1, 100));
        limited.enqueue(1, NEVER, 60, effects);
        limited.enqueue(2, NEVER, 40, effects);
        assertThat(limited.readyBytes()).isEqualTo(100);
        assertThat(effects.dropped).isEmpty();
        limited.enqueue(3, NEVER, 1, effects);
        assertThat(effects.dropped).containsExactly(1L);
        assertThat(limited.readyBytes()).isEqualTo(41);
        QueueMachine.Taken taken = limited.get(false, effects).orElseThrow();
        assertThat(limited.readyBytes()).isEqualTo(1);
        limited.reject(taken.offset(), true, effects);
        assertThat(limited.readyBytes()).isEqualTo(41);
        limited.purge(effects);
        assertThat(limited.readyBytes()).isZero();
    }

    @Test
    void shouldExpireReadyMessagesWhenTheirTimeComesWhereverTheyStand() {
        queue.advance(1_000, effects);
        queue.enqueue(1, NEVER, effects);
        queue.enqueue(2, 1_100, effects);
        queue.enqueue(3, 1_050, effects); // its own, shorter TTL, behind a longer one
        queue.advance(1_049, effects);
        assertThat(effects.expired).isEmpty();
        queue.advance(1_050, effects);
        assertThat(effects.expired).containsExactly(3L);
        assertThat(queue.readyCount()).isEqualTo(2);
        queue.advance(2_000, effects);
        assertThat(effects.expired).containsExactly(3L, 2L);
        assertThat(queue.readyCount()).isEqualTo(1);
        assertThat(queue.get(true, effects)).contains(new QueueMachine.Taken(1, false));
        assertThat(queue.lowestUnsettled()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldDeliverAMessageWithATtlOfZeroOnlyToAConsumerWaitingForIt() {
        queue.advance(1_000, effects);
        queue.enqueue(1, 999, effects); // accepted at 999 with TTL 0, committed at 1,000: no consumer
        assertThat(effects.expired).containsExactly(1L);
        queue.consume(C1, 0, false, false, effects);
        queue.enqueue(2, 999, effects);
        assertThat(effects.delivered).containsExactly(2L);
        assertThat(effects.expired).containsExactly(1L);
    }

    @Test
    void shouldNotExpireAMessageOutWithAConsumerButKeepItsTimeWhenItComesBack() {
        queue.advance(1_000, effects);
        queue.consume(C1, 1, false, false, effects);
        queue.enqueue(1, 1_100, effects);
        queue.advance(1_200, effects);
        assertThat(effects.expired).isEmpty();
        queue.cancel(C1);
        queue.requeue(new long[] {1}, effects); // back after its time: expires, is not handed out again
        assertThat(effects.expired).containsExactly(1L);
        assertThat(queue.get(false, effects)).isEmpty();
    }

    @Test
    void shouldRecoverMessagesWithTheirExpiryTimes() {
        QueueMachine recovered = QueueMachine.recovered(
                new long[] {4, 5, 6}, new long[] {1_500, NEVER, 1_200}, null, QueueMachine.Limits.NONE);
        recovered.advance(1_300, effects);
        assertThat(effects.expired).containsExactly(6L);
        recovered.advance(1_500, effects);
        assertThat(effects.expired).containsExactly(6L, 4L);
        assertThat(recovered.readyCount()).isEqualTo(1);
        assertThat(recovered.expiringCount()).isZero();
    }

    @Test
    void shouldKeepNothingForMessagesThatNeverExpire() {
        for (long offset = 0; offset < 10_000; offset++) {
            queue.enqueue(offset, NEVER, effects);
        }
        queue.consume(C1, 0, true, false, effects);
        assertThat(queue.expiringCount()).isZero();
        assertThat(effects.settled).hasSize(10_000);
    }

    private enum QueueEffectsNone implements QueueEffects {
        INSTANCE;

        @Override
        public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {}

        @Override
        public void settle(long offset) {}
    }

    /**
     * Random enqueues (some with a TTL, some of 0), clock steps, consumers with prefetch, acks, rejects with and
     * without requeue, gets and purges, against a model of the queue: each message is ready, out, or gone (settled
     * or expired), with its expiry time. After every step: nothing expired was handed out (but a TTL-0 message at its
     * enqueue), nothing ready has expired, and the counts agree. At the end every message left exactly once.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("io.ganglion.queues.QueueMachineTest#seeds")
    void shouldAgreeWithAModelOfExpiry(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long maxReady = random.nextBoolean() ? -1 : 1 + random.nextInt(8);
        long maxBytes = random.nextBoolean() ? -1 : 10 + random.nextInt(90);
        QueueMachine machine = new QueueMachine(new QueueMachine.Limits(maxReady, maxBytes));
        machine.advance(0, QueueEffectsNone.INSTANCE);
        Map<Long, Long> sizes = new HashMap<>();
        TreeMap<Long, Long> ready = new TreeMap<>(); // offset -> expires at
        Map<Long, Long> out = new HashMap<>();
        Map<Long, Integer> left = new HashMap<>();
        long[] now = {0};
        long[] enqueuing = {-1};
        long[] rejecting = {-1};
        java.util.function.LongConsumer handOut = offset -> {
            Long expiresAt = ready.remove(offset);
            assertThat(expiresAt).as("handed out %s, not ready", offset).isNotNull();
            assertThat(expiresAt > now[0] || offset == enqueuing[0])
                    .as("handed out %s expired at %s, now %s", offset, expiresAt, now[0])
                    .isTrue();
            assertThat(ready.headMap(offset)).as("the lowest ready first").isEmpty();
            out.put(offset, expiresAt);
        };
        QueueEffects checking = new QueueEffects() {
            @Override
            public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
                handOut.accept(offset);
            }

            @Override
            public void settle(long offset) {
                assertThat(offset).as("a rejected message leaves as rejected").isNotEqualTo(rejecting[0]);
                leave(offset);
            }

            @Override
            public void rejected(long offset) {
                assertThat(offset).as("rejected only when rejected").isEqualTo(rejecting[0]);
                leave(offset);
            }

            @Override
            public void expired(long offset) {
                Long expiresAt = ready.get(offset);
                assertThat(expiresAt).as("expired %s, not ready", offset).isNotNull();
                assertThat(expiresAt).isLessThanOrEqualTo(now[0]);
                leave(offset);
            }

            @Override
            public void dropped(long offset) {
                assertThat(ready.firstKey()).as("the oldest ready goes").isEqualTo(offset);
                long bytes = ready.keySet().stream().mapToLong(sizes::get).sum();
                assertThat((maxReady >= 0 && ready.size() > maxReady) || (maxBytes >= 0 && bytes > maxBytes))
                        .as("over a limit when %s is dropped", offset)
                        .isTrue();
                leave(offset);
            }

            private void leave(long offset) {
                left.merge(offset, 1, Integer::sum);
                ready.remove(offset);
                out.remove(offset);
            }
        };
        long nextOffset = 0;
        boolean consuming = false;
        for (int step = 0; step < 400; step++) {
            int op = random.nextInt(10);
            if (op <= 2) {
                long offset = nextOffset++;
                long expiresAt = switch (random.nextInt(4)) {
                    case 0 -> NEVER;
                    case 1 -> now[0] - random.nextInt(3); // a TTL of 0, accepted a little before the commit
                    default -> now[0] + random.nextInt(60);
                };
                long size = random.nextInt(30);
                sizes.put(offset, size);
                ready.put(offset, expiresAt);
                enqueuing[0] = offset;
                machine.enqueue(offset, expiresAt, size, checking);
                enqueuing[0] = -1;
                long bytes = ready.keySet().stream().mapToLong(sizes::get).sum();
                assertThat(maxReady < 0 || ready.size() <= maxReady)
                        .as("within the length limit")
                        .isTrue();
                assertThat(maxBytes < 0 || bytes <= maxBytes)
                        .as("within the byte limit")
                        .isTrue();
            } else if (op == 3) {
                now[0] += random.nextInt(30);
                machine.advance(now[0], checking);
            } else if (op == 4) {
                if (consuming) {
                    machine.cancel(C1);
                } else {
                    machine.consume(C1, 1 + random.nextInt(3), false, false, checking);
                }
                consuming = !consuming;
            } else if (op <= 7 && !out.isEmpty()) {
                long offset = out.keySet().stream().sorted().toList().get(random.nextInt(out.size()));
                switch (random.nextInt(3)) {
                    case 0 -> machine.ack(offset, checking);
                    case 1 -> {
                        rejecting[0] = offset;
                        machine.reject(offset, false, checking);
                        rejecting[0] = -1;
                        assertThat(left.get(offset))
                                .as("rejected %s left", offset)
                                .isEqualTo(1);
                    }
                    default -> {
                        ready.put(offset, out.remove(offset));
                        machine.reject(offset, true, checking);
                    }
                }
            } else if (op == 8) {
                machine.get(false, checking).ifPresent(taken -> handOut.accept(taken.offset()));
            } else if (random.nextInt(10) == 0) {
                machine.purge(checking);
            }
            assertThat(ready.entrySet().stream().filter(e -> e.getValue() <= now[0]))
                    .as("ready and expired at %s", now[0])
                    .isEmpty();
            assertThat(machine.readyCount()).isEqualTo(ready.size());
            if (maxBytes >= 0) {
                assertThat(machine.readyBytes())
                        .isEqualTo(ready.keySet().stream().mapToLong(sizes::get).sum());
            }
            assertThat(machine.unackedCount()).isEqualTo(out.size());
        }
        if (consuming) {
            machine.cancel(C1);
        }
        for (long offset : out.keySet().stream().sorted().toList()) {
            ready.put(offset, out.remove(offset));
            machine.requeue(new long[] {offset}, checking);
        }
        now[0] = NEVER - 1;
        machine.advance(now[0], checking);
        machine.purge(checking);
        for (long offset = 0; offset < nextOffset; offset++) {
            assertThat(left.get(offset)).as("message %s left once", offset).isEqualTo(1);
        }
        assertThat(machine.expiringCount()).isZero();
        assertThat(machine.lowestUnsettled()).isEqualTo(Long.MAX_VALUE);
    }
}
