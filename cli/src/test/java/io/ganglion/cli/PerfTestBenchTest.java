package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PerfTestBenchTest {
    @Test
    void shouldReadThePerfTestSummary() {
        String text = "id: test-180001-001, time 29.000 s, sent: 10012 msg/s, received: 9990 msg/s\n"
                + "id: test-180001-001, sending rate avg: 10,123 msg/s\n"
                + "id: test-180001-001, receiving rate avg: 10,087 msg/s\n"
                + "id: test-180001-001, consumer latency min/median/75th/95th/99th 2000/40000/60000/90000/120000 µs\n"
                + "id: test-180001-001, confirm latency min/median/75th/95th/99th 1500/43000/61000/95000/180000 µs\n";

        PerfTestBench.Result result = PerfTestBench.parse("rabbitmq", "a", text).orElseThrow();

        assertThat(result.sentPerSecond()).isEqualTo(10_123);
        assertThat(result.receivedPerSecond()).isEqualTo(10_087);
        assertThat(result.confirmMicros()).containsExactly(1500, 43000, 61000, 95000, 180000);
    }

    @Test
    void shouldFindNoSummaryInAFailedRun() {
        assertThat(PerfTestBench.parse("ganglion", "b", "Connection refused")).isEmpty();
    }

    @Test
    void shouldGiveEachCaseItsQueuesAndBodySize() {
        assertThat(PerfTestBench.caseArgs("b")).containsSequence("-s", "1000");
        assertThat(PerfTestBench.caseArgs("c")).containsSequence("-x", "4", "-y", "4");
    }
}
