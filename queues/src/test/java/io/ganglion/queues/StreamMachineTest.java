package io.ganglion.queues;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StreamMachineTest {
    private static final ConsumerKey A = new ConsumerKey(1, "a");
    private static final ConsumerKey B = new ConsumerKey(2, "b");

    /** A log whose offsets in {@code notMessages} hold no message (an epoch start); records what each consumer got. */
    private static final class Log implements StreamEffects {
        final TreeSet<Long> notMessages = new TreeSet<>();
        final Map<ConsumerKey, List<Long>> delivered = new LinkedHashMap<>();
        int reads;

        @Override
        public long deliver(ConsumerKey consumer, long from, long upTo, int max, LongConsumer onDelivered) {
            reads++;
            assertThat(max).isPositive();
            long offset = from;
            int count = 0;
            while (offset <= upTo && count < max) {
                if (!notMessages.contains(offset)) {
                    delivered.computeIfAbsent(consumer, c -> new ArrayList<>()).add(offset);
                    onDelivered.accept(offset);
                    count++;
                }
                offset++;
            }
            return offset;
        }

        List<Long> to(ConsumerKey consumer) {
            return delivered.getOrDefault(consumer, List.of());
        }
    }

    private static List<Long> range(long from, long to) {
        List<Long> offsets = new ArrayList<>();
        for (long o = from; o <= to; o++) {
            offsets.add(o);
        }
        return offsets;
    }

    @Test
    void shouldDeliverEveryCommittedMessageToEveryConsumerFromItsStart() {
        Log log = new Log();
        log.notMessages.add(0L); // the first epoch's start
        StreamMachine stream = new StreamMachine(9);

        assertThat(stream.consume(A, 100, false, 0, log)).isEqualTo(ConsumeOutcome.ADDED);
        assertThat(stream.consume(B, 100, false, 5, log)).isEqualTo(ConsumeOutcome.ADDED);

        assertThat(log.to(A)).isEqualTo(range(1, 9));
        assertThat(log.to(B)).isEqualTo(range(5, 9));
        stream.advance(12, log);
        assertThat(log.to(A)).isEqualTo(range(1, 12));
        assertThat(log.to(B)).isEqualTo(range(5, 12));
    }

    @Test
    void shouldNeverReadPastTheReadableEnd() {
        Log log = new Log();
        StreamMachine stream = new StreamMachine(-1);
        stream.consume(A, 10, false, 0, log);
        assertThat(log.to(A)).isEmpty();
        stream.advance(2, log);
        assertThat(log.to(A)).containsExactly(0L, 1L, 2L);
        stream.advance(1, log); // an end never moves back
        assertThat(stream.end()).isEqualTo(2);
        assertThat(stream.cursor(A)).isEqualTo(3);
    }

    @Test
    void shouldHoldAtMostThePrefetchUnacknowledgedAndReadOnWithEachAck() {
        Log log = new Log();
        StreamMachine stream = new StreamMachine(99);
        stream.consume(A, 3, false, 0, log);
        assertThat(log.to(A)).containsExactly(0L, 1L, 2L);

        stream.ack(1, log);
        assertThat(log.to(A)).containsExactly(0L, 1L, 2L, 3L);
        stream.ack(1, log); // settled twice: no credit made up
        assertThat(log.to(A)).hasSize(4);
        stream.ack(0, log);
        stream.ack(2, log);
        assertThat(log.to(A)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void shouldGiveTheCreditOfAnOffsetHeldByTwoConsumersBackOnceEach() {
        Log log = new Log();
        StreamMachine stream = new StreamMachine(99);
        stream.consume(A, 1, false, 0, log);
        stream.consume(B, 1, false, 0, log);
        assertThat(log.to(A)).containsExactly(0L);
        assertThat(log.to(B)).containsExactly(0L);

        stream.ack(0, log);
        stream.ack(0, log);

        assertThat(log.to(A)).containsExactly(0L, 1L);
        assertThat(log.to(B)).containsExactly(0L, 1L);
    }

    @Test
    void shouldDeliverNothingWhileHeldAndCatchUpOnResume() {
        Log log = new Log();
        StreamMachine stream = new StreamMachine(4);
        stream.hold();
        stream.consume(A, 10, false, 0, log);
        stream.advance(6, log);
        assertThat(log.to(A)).isEmpty();
        stream.resume(log);
        assertThat(log.to(A)).isEqualTo(range(0, 6));
    }

    @Test
    void shouldRefuseADuplicateTagAndExclusiveConflicts() {
        Log log = new Log();
        StreamMachine stream = new StreamMachine(-1);
        assertThat(stream.consume(A, 1, false, 0, log)).isEqualTo(ConsumeOutcome.ADDED);
        assertThat(stream.consume(A, 1, false, 0, log)).isEqualTo(ConsumeOutcome.DUPLICATE_TAG);
        assertThat(stream.consume(B, 1, true, 0, log)).isEqualTo(ConsumeOutcome.EXCLUSIVE_CONFLICT);
        stream.cancel(A);
        assertThat(stream.consume(B, 1, true, 0, log)).isEqualTo(ConsumeOutcome.ADDED);
        assertThat(stream.consume(A, 1, false, 0, log)).isEqualTo(ConsumeOutcome.EXCLUSIVE_CONFLICT);
        assertThat(stream.consumerCount()).isEqualTo(1);
        assertThatThrownBy(() -> stream.consume(new ConsumerKey(3, "c"), 0, false, 0, log))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldStopReadingForACancelledConsumer() {
        Log log = new Log();
        StreamMachine stream = new StreamMachine(9);
        stream.consume(A, 2, false, 0, log);
        stream.cancel(A);
        stream.ack(0, log);
        stream.advance(20, log);
        assertThat(log.to(A)).containsExactly(0L, 1L);
        assertThat(stream.cursor(A)).isEqualTo(-1);
    }

    @Test
    void shouldWaitWhenTheLogHasNothingReadableYet() {
        StreamMachine stream = new StreamMachine(9);
        StreamEffects empty = (consumer, from, upTo, max, delivered) -> from;
        stream.consume(A, 5, false, 0, empty); // returns rather than spinning
        assertThat(stream.cursor(A)).isZero();
    }

    /** Random commits, acks and consumers: each consumer gets every message from its start, once, in order. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void shouldDeliverEachMessageOnceInOrderUnderRandomSchedules(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Log log = new Log();
        StreamMachine stream = new StreamMachine(-1);
        Map<ConsumerKey, Long> starts = new LinkedHashMap<>();
        long end = -1;
        for (int step = 0; step < 2_000; step++) {
            int action = random.nextInt(10);
            if (action < 3) {
                end += random.nextInt(1, 5);
                if (random.nextInt(4) == 0) {
                    log.notMessages.add(end);
                }
                stream.advance(end, log);
            } else if (action < 4 && starts.size() < 4) {
                ConsumerKey key = new ConsumerKey(step, "c" + step);
                long from = end < 0 ? 0 : random.nextLong(0, end + 2);
                starts.put(key, from);
                stream.consume(key, random.nextInt(1, 8), false, from, log);
            } else {
                List<Long> out = new ArrayList<>();
                log.delivered.values().forEach(out::addAll);
                if (!out.isEmpty()) {
                    stream.ack(out.get(random.nextInt(out.size())), log);
                }
            }
        }
        // everyone acks everything it has, repeatedly, until all are through
        for (int round = 0; round < 10_000; round++) {
            boolean behind = false;
            for (ConsumerKey key : starts.keySet()) {
                for (long offset : List.copyOf(log.to(key))) {
                    stream.ack(offset, log);
                }
                behind |= stream.cursor(key) <= end;
            }
            if (!behind) {
                break;
            }
        }
        long last = end;
        starts.forEach((key, from) -> {
            List<Long> expected = new ArrayList<>();
            for (long o = from; o <= last; o++) {
                if (!log.notMessages.contains(o)) {
                    expected.add(o);
                }
            }
            assertThat(log.to(key)).as("consumer from %d", from).isEqualTo(expected);
        });
    }
}
