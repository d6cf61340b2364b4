package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PerfTestBenchTest {
    @Test
    void shouldReadThePerfTestSummary() {
        String text = "id: test-180001-001, time 29.000 s, sent: 10012 msg/s, received: 9990 msg/s\n"
                + "id: test-180001-001, sending rate avg: 10,123 msg/s\n"
                + "id: test-180001-001, receiving rate avg: 10,087 msg/s\n"
                + "id: test-180001-001, consumer latency min/median/75th/95th/99th 2000/40000/60000/90000/120000 µs\n"
                + "id: test-180001-001, confirm latency min/median/75th/95th/99th 1500/43000/61000/95000/180000 µs\n";

        PerfTestBench.Result result =
                PerfTestBench.parse("rabbitmq", "a", 2, text).orElseThrow();

        assertThat(result.sentPerSecond()).isEqualTo(10_123);
        assertThat(result.receivedPerSecond()).isEqualTo(10_087);
        assertThat(result.confirmMicros()).containsExactly(1500, 43000, 61000, 95000, 180000);
        assertThat(result.round()).isEqualTo(2);
    }

    @Test
    void shouldFindNoSummaryInAFailedRun() {
        assertThat(PerfTestBench.parse("ganglion", "b", 1, "Connection refused"))
                .isEmpty();
    }

    @Test
    void shouldGiveEachCaseItsQueuesAndBodySize() {
        assertThat(PerfTestBench.caseArgs("b", 1)).containsSequence("-s", "1000");
        assertThat(PerfTestBench.caseArgs("c", 1)).containsSequence("-x", "4", "-y", "4");
    }

    /** A later round declares queues of its own: nothing left in them from the round before. */
    @Test
    void shouldGiveEachRoundAfterTheFirstQueuesOfItsOwn() {
        assertThat(PerfTestBench.caseArgs("a", 1)).containsSequence("-u", "perf-a");
        assertThat(PerfTestBench.caseArgs("a", 3)).containsSequence("-u", "perf-a-r3");
        assertThat(PerfTestBench.caseArgs("c", 2)).containsSequence("--queue-pattern", "perf-c-r2-%d");
    }

    /** Each round's ratio pairs the two targets' runs of that round; the median over rounds is reported. */
    @Test
    void shouldTakeTheMedianOfEachRoundsRatio() {
        List<PerfTestBench.Result> results = List.of(
                result("ganglion", "a", 1, 20_000, 100_000),
                result("rabbitmq", "a", 1, 10_000, 200_000),
                result("rabbitmq", "a", 2, 5_000, 400_000),
                result("ganglion", "a", 2, 15_000, 100_000),
                result("ganglion", "a", 3, 9_000, 90_000),
                result("rabbitmq", "a", 3, 10_000, 100_000),
                result("ganglion", "b", 1, 8_000, 50_000));

        List<PerfTestBench.Ratio> ratios = PerfTestBench.ratios(results);

        assertThat(ratios).singleElement().satisfies(ratio -> {
            assertThat(ratio.testCase()).isEqualTo("a");
            assertThat(ratio.rounds()).isEqualTo(3);
            assertThat(ratio.throughput()).as("of 2.0, 3.0 and 0.9").isEqualTo(2.0);
            assertThat(ratio.p99()).as("of 0.5, 0.25 and 0.9").isEqualTo(0.5);
        });
    }

    private static PerfTestBench.Result result(String target, String testCase, int round, long rate, long p99) {
        return new PerfTestBench.Result(target, testCase, round, rate, rate, new long[] {0, 0, 0, 0, p99});
    }
}
