package io.ganglion.bench;

import static io.ganglion.bench.FailoverStats.CONFIRMED;
import static io.ganglion.bench.FailoverStats.NACKED;
import static io.ganglion.bench.FailoverStats.NONE;
import static io.ganglion.bench.FailoverStats.TIMED_OUT;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FailoverStatsTest {

    @Test
    void shouldFindTheLongestGapAroundTheKill() {
        // confirms every 10 before the kill at 100, then silence until 450, then every 10 again
        long[] confirms = {70, 80, 90, 100, 450, 460, 470, 480, 490, 500};
        FailoverStats.Pause pause = FailoverStats.pause(confirms, 95, 500);
        assertThat(pause.nanos()).isEqualTo(350);
        assertThat(pause.endNanos()).isEqualTo(450);
        assertThat(pause.censored()).isFalse();
    }

    @Test
    void shouldIgnoreGapsThatEndedBeforeTheKill() {
        long[] confirms = {0, 1000, 1010, 1020, 1030, 1040};
        FailoverStats.Pause pause = FailoverStats.pause(confirms, 1015, 1040);
        assertThat(pause.nanos()).isEqualTo(10);
        assertThat(pause.censored()).isFalse();
    }

    @Test
    void shouldCensorThePauseOfAQueueThatDidNotComeBack() {
        long[] confirms = {NONE, 10, 20, 30, 31, NONE};
        FailoverStats.Pause pause = FailoverStats.pause(confirms, 30, 1000);
        assertThat(pause.nanos()).isEqualTo(969);
        assertThat(pause.endNanos()).isEqualTo(1000);
        assertThat(pause.censored()).isTrue();
    }

    @Test
    void shouldCountFromTheKillWhenNothingWasConfirmedBefore() {
        FailoverStats.Pause pause = FailoverStats.pause(new long[] {300, 301}, 100, 302);
        assertThat(pause.nanos()).isEqualTo(200);
        assertThat(pause.censored()).isFalse();
    }

    @Test
    void shouldListEverySilenceOfAtLeastTheMinimumInTheWindow() {
        long[] confirms = {NONE, 40, 0, 10, 90, 95, 200, 300, 301};
        assertThat(FailoverStats.silences(confirms, 5, 300, 50)).isDeepEqualTo(new long[][] {{40, 90}, {95, 200}});
        assertThat(FailoverStats.silences(confirms, 5, 300, 200)).isEmpty();
    }

    @Test
    void shouldTellAStalledPublisherFromMessagesThatWaitedInTheBrokers() {
        // sends every 10 until 100, none until 150, then every 10; a silence of the confirms from 110 to 170
        long[] sends = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 150, 160};
        long[] confirms = {5, 15, 25, 35, 45, 55, 65, 75, 85, 95, 110, 170, 170};
        assertThat(FailoverStats.describeSilence(sends, confirms, 13, 110, 170, 20))
                .containsExactly(50, 20);
        // the publisher went on sending and the brokers held everything from 100 on
        long[] held = {5, 15, 25, 35, 45, 55, 65, 75, 85, 95, 180, 180, 180};
        long[] steady = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120};
        assertThat(FailoverStats.describeSilence(steady, held, 13, 95, 180, 20)).containsExactly(10, 80);
        assertThat(FailoverStats.describeSilence(steady, held, 13, 95, 181, 20)[1])
                .isEqualTo(NONE);
    }

    @Test
    void shouldTakeTheFirstConfirmOfAMessageSentAfterTheKill() {
        long[] sends = {90, 95, 120, 130};
        long[] confirms = {101, 500, 400, NONE};
        assertThat(FailoverStats.firstConfirmAfter(sends, confirms, 4, 100)).isEqualTo(400);
        assertThat(FailoverStats.firstConfirmAfter(sends, new long[] {101, 102, NONE, NONE}, 4, 100))
                .isEqualTo(NONE);
    }

    @Test
    void shouldTakeNearestRankPercentiles() {
        long[] sorted = new long[100];
        Arrays.setAll(sorted, i -> i + 1);
        assertThat(FailoverStats.percentile(sorted, 0.50)).isEqualTo(50);
        assertThat(FailoverStats.percentile(sorted, 0.99)).isEqualTo(99);
        assertThat(FailoverStats.percentile(new long[] {7}, 0.99)).isEqualTo(7);
        assertThat(FailoverStats.percentile(new long[0], 0.5)).isEqualTo(NONE);
        assertThat(FailoverStats.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(FailoverStats.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42, 1234})
    void shouldMatchASortedCopyForAnyPercentile(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] values = random.longs(1 + random.nextInt(500), 0, 1_000_000).toArray();
        Arrays.sort(values);
        double p = random.nextDouble();
        long value = FailoverStats.percentile(values, p);
        long atOrBelow = Arrays.stream(values).filter(v -> v <= value).count();
        assertThat(atOrBelow).as("seed %d", seed).isGreaterThanOrEqualTo((long) Math.ceil(p * values.length));
        long below = Arrays.stream(values).filter(v -> v < value).count();
        assertThat(below).as("seed %d", seed).isLessThan((long) Math.max(1, Math.ceil(p * values.length)));
    }

    @Test
    void shouldSelectLatenciesBySendTime() {
        long[] sends = {0, 10, 20, 30};
        long[] confirms = {5, 40, NONE, 31};
        assertThat(FailoverStats.latencies(sends, confirms, 4, 0, 30)).containsExactly(5, 30);
    }

    @Test
    void shouldAccountLostAndDuplicatedMessages() {
        byte[] outcomes = {CONFIRMED, CONFIRMED, CONFIRMED, NACKED, TIMED_OUT, CONFIRMED};
        int[] deliveries = {1, 0, 3, 1, 0, 2};
        int[] redelivered = {0, 0, 1, 0, 0, 0};
        FailoverStats.Accounting accounting = FailoverStats.account(outcomes, deliveries, redelivered, 6);
        assertThat(accounting.sent()).isEqualTo(6);
        assertThat(accounting.confirmed()).isEqualTo(4);
        assertThat(accounting.lost()).isEqualTo(1); // message 1: confirmed, never consumed
        assertThat(accounting.unknown()).isEqualTo(2);
        assertThat(accounting.nacked()).isEqualTo(1);
        assertThat(accounting.unknownDelivered()).isEqualTo(1); // message 3: nacked yet delivered
        assertThat(accounting.duplicates()).isEqualTo(3); // 2 extra of message 2, 1 of message 5
        assertThat(accounting.duplicatesRedelivered()).isEqualTo(1);
        assertThat(accounting.duplicatesNotRedelivered()).isEqualTo(2);
    }

    @Test
    void shouldBucketConfirmsPerSecond() {
        long second = 1_000_000_000L;
        long[] confirms = {0, second / 2, second + 1, 3 * second, NONE};
        double[] rate = FailoverStats.confirmRate(confirms, 0, 2 * second, second);
        assertThat(rate).containsExactly(2.0, 1.0);
    }
}
