package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.protocol.BasicMethod;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PublisherConfirmsTest {
    private final PublisherConfirms confirms = new PublisherConfirms();

    private void assign(int count) {
        for (int i = 0; i < count; i++) {
            confirms.assign();
        }
    }

    @Test
    void shouldNumberPublishesFromOne() {
        assertThat(confirms.assign()).isEqualTo(1);
        assertThat(confirms.assign()).isEqualTo(2);
    }

    @Test
    void shouldAckALoneDecisionWithoutMultipleAsRabbitMq() {
        assign(3);
        confirms.decide(1, true);

        assertThat(confirms.drain()).containsExactly(new BasicMethod.Ack(1, false));
    }

    @Test
    void shouldAckTheRunBelowTheSmallestUnconfirmedWithOneMultiple() {
        assign(6);
        for (long seq : new long[] {5, 2, 1, 3}) {
            confirms.decide(seq, true);
        }

        assertThat(confirms.drain()).containsExactly(new BasicMethod.Ack(3, true), new BasicMethod.Ack(5, false));
        assertThat(confirms.allDecided()).isFalse();
    }

    @Test
    void shouldNeverCoverANackWithAMultipleAck() {
        assign(3);
        confirms.decide(1, true);
        confirms.decide(2, false);
        confirms.decide(3, true);

        assertThat(confirms.drain())
                .containsExactly(
                        new BasicMethod.Ack(1, true),
                        new BasicMethod.Ack(3, false),
                        new BasicMethod.Nack(2, false, false));
    }

    @Test
    void shouldIgnoreDecisionsOutsideTheWindowOrTwice() {
        assign(2);
        confirms.decide(1, true);
        confirms.decide(1, false);
        confirms.decide(7, true);

        assertThat(confirms.drain()).containsExactly(new BasicMethod.Ack(1, false));
        assertThat(confirms.hasDecisions()).isFalse();
    }

    @Test
    void shouldGrowPastItsInitialWindowKeepingDecisions() {
        assign(1000);
        for (long seq = 1000; seq >= 2; seq--) {
            confirms.decide(seq, true);
        }
        assertThat(confirms.allDecided()).isFalse();
        confirms.decide(1, true);

        assertThat(confirms.drain()).containsExactly(new BasicMethod.Ack(1000, true));
        assertThat(confirms.allDecided()).isTrue();
    }

    static LongStream seeds() {
        return LongStream.range(0, 200);
    }

    /**
     * Random publishes, decisions and flushes, read by a model of a client that keeps its outstanding sequence numbers
     * (as the Java client does): every ack or nack it reads must concern only publishes decided that way, and at the end
     * every publish is settled on the client exactly as the broker decided.
     */
    @ParameterizedTest
    @MethodSource("seeds")
    void shouldTellTheClientExactlyWhatWasDecided(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        PublisherConfirms subject = new PublisherConfirms();
        Map<Long, Boolean> decided = new HashMap<>();
        List<Long> undecided = new ArrayList<>();
        TreeSet<Long> outstanding = new TreeSet<>();
        Map<Long, Boolean> seenByClient = new HashMap<>();
        for (int step = 0; step < 400; step++) {
            int action = random.nextInt(10);
            if (action < 4) {
                long seq = subject.assign();
                undecided.add(seq);
                outstanding.add(seq);
            } else if (action < 8 && !undecided.isEmpty()) {
                long seq = undecided.remove(random.nextInt(undecided.size()));
                boolean ack = random.nextInt(8) != 0;
                decided.put(seq, ack);
                subject.decide(seq, ack);
            } else {
                apply(subject.drain(), outstanding, decided, seenByClient, seed);
            }
        }
        undecided.forEach(seq -> {
            decided.put(seq, true);
            subject.decide(seq, true);
        });
        apply(subject.drain(), outstanding, decided, seenByClient, seed);

        assertThat(outstanding).as("seed %d", seed).isEmpty();
        assertThat(seenByClient).as("seed %d", seed).isEqualTo(decided);
    }

    private static void apply(
            List<BasicMethod> methods,
            TreeSet<Long> outstanding,
            Map<Long, Boolean> decided,
            Map<Long, Boolean> seenByClient,
            long seed) {
        for (BasicMethod method : methods) {
            boolean ack = method instanceof BasicMethod.Ack;
            long tag = ack ? ((BasicMethod.Ack) method).deliveryTag() : ((BasicMethod.Nack) method).deliveryTag();
            boolean multiple = ack ? ((BasicMethod.Ack) method).multiple() : ((BasicMethod.Nack) method).multiple();
            List<Long> covered = multiple ? new ArrayList<>(outstanding.headSet(tag, true)) : List.of(tag);
            assertThat(covered).as("seed %d: %s covers something", seed, method).isNotEmpty();
            for (long seq : covered) {
                assertThat(outstanding).as("seed %d: %s", seed, method).contains(seq);
                assertThat(decided.get(seq))
                        .as("seed %d: %s on %d", seed, method, seq)
                        .isEqualTo(ack);
                outstanding.remove(seq);
                seenByClient.put(seq, ack);
            }
        }
    }
}
