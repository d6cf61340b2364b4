package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FailoverBenchTest {

    private static FailoverBench.QueueResult result(String role, double pauseSeconds, boolean censored, double p99Ms) {
        return result(role, pauseSeconds, censored, pauseSeconds, censored, Double.NaN, p99Ms, Double.NaN, Double.NaN);
    }

    private static FailoverBench.QueueResult withDisk(double pauseSeconds, double p99Ms, double diskForceMs) {
        return result("follower", pauseSeconds, false, pauseSeconds, false, Double.NaN, p99Ms, diskForceMs, Double.NaN);
    }

    private static FailoverBench.QueueResult withCpu(double pauseSeconds, double p99Ms, double cpuWaitMs) {
        return result("follower", pauseSeconds, false, pauseSeconds, false, Double.NaN, p99Ms, Double.NaN, cpuWaitMs);
    }

    private static FailoverBench.QueueResult result(
            String role,
            double pauseSeconds,
            boolean censored,
            double toRestartSeconds,
            boolean toRestartCensored,
            double fromRestartSeconds,
            double p99Ms,
            double diskForceMs,
            double cpuWaitMs) {
        return new FailoverBench.QueueResult(
                "q1",
                "ganglion-1",
                List.of("ganglion-1", "ganglion-2", "ganglion-3"),
                role,
                "ganglion-2",
                pauseSeconds,
                censored,
                0.1,
                toRestartSeconds,
                toRestartCensored,
                fromRestartSeconds,
                0.01,
                0.03,
                -5,
                1000,
                0,
                new FailoverStats.Accounting(1000, 1000, 0, 0, 0, 0, 0, 0),
                1.0,
                p99Ms,
                1.0,
                p99Ms,
                new double[0],
                new long[0][],
                diskForceMs,
                cpuWaitMs);
    }

    @Test
    void shouldVoidATrialWhoseControllerOrOwnersMovedBeforeTheKill() {
        Map<String, FailoverTarget.Placement> start = Map.of(
                "q1", new FailoverTarget.Placement("n1", List.of("n1", "n2", "n3")),
                "q2", new FailoverTarget.Placement("n2", List.of("n1", "n2", "n3")));
        Map<String, FailoverTarget.Placement> q2Moved = Map.of(
                "q1", new FailoverTarget.Placement("n1", List.of("n1", "n2", "n3")),
                "q2", new FailoverTarget.Placement("n3", List.of("n1", "n2", "n3")));

        assertThat(FailoverTrial.rolesMoved(Optional.of("n1"), Optional.of("n1"), start, start))
                .isNull();
        assertThat(FailoverTrial.rolesMoved(Optional.of("n1"), Optional.of("n2"), start, start))
                .isEqualTo("the controller moved from n1 to n2 before the kill");
        assertThat(FailoverTrial.rolesMoved(Optional.of("n1"), Optional.empty(), start, start))
                .isEqualTo("the controller moved from n1 to none before the kill");
        assertThat(FailoverTrial.rolesMoved(Optional.of("n1"), Optional.of("n1"), start, q2Moved))
                .isEqualTo("q2's owner moved from n2 to n3 before the kill");
        assertThat(FailoverTrial.rolesMoved(Optional.of("n1"), Optional.of("n1"), start, Map.of()))
                .startsWith("q")
                .endsWith("to none before the kill");
    }

    @Test
    void shouldNoteWhenTheWatchedBrokerClosesItsSocketAndOnlyAfterTheKill() throws Exception {
        try (java.net.ServerSocket server =
                new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            long origin = System.nanoTime();
            try (ExitWatch watch = ExitWatch.open("amqp://127.0.0.1:" + server.getLocalPort(), origin)) {
                java.net.Socket accepted = server.accept();
                assertThat(watch.closedNanos()).isEqualTo(ExitWatch.NONE);
                assertThat(FailoverTrial.victimClosedSeconds(watch, 0)).isNaN();
                long killed = System.nanoTime() - origin;
                accepted.close();
                Poll.within(Duration.ofSeconds(5), Duration.ofMillis(1), () -> watch.closedNanos() != ExitWatch.NONE);
                assertThat(watch.closedNanos()).isGreaterThanOrEqualTo(killed);
                assertThat(FailoverTrial.victimClosedSeconds(watch, killed)).isBetween(0.0, 5.0);
                // closed before the kill: it measured something else
                assertThat(FailoverTrial.victimClosedSeconds(watch, watch.closedNanos() + 1))
                        .isNaN();
            }
        }
        assertThat(FailoverTrial.victimClosedSeconds(null, 0)).isNaN();
    }

    @Test
    void shouldCountThePausesWithinTwiceTheirOwnP99AndNeverACensoredOne() {
        List<FailoverBench.QueueResult> samples = List.of(
                result("follower", 0.040, false, 20.0), // 40 ms against 40: within
                result("follower", 0.041, false, 20.0), // over
                result("none", 0.015, false, 10.0), // within
                result("follower", 0.001, true, 10.0)); // never came back in the window: not within
        assertThat(FailoverReport.withinTwiceP99(samples)).isEqualTo(2);
    }

    @Test
    void shouldCountTheKillsPauseAndTheReturnsGapApart() {
        List<FailoverBench.QueueResult> samples = List.of(
                // the longest silence at the return: the kill's own pause within, the return's over
                result("follower", 0.090, false, 0.030, false, 0.090, 20.0, Double.NaN, Double.NaN),
                // within at both
                result("follower", 0.035, false, 0.035, false, 0.020, 20.0, Double.NaN, Double.NaN),
                // no confirm between the kill and the restart: censored, never within
                result("follower", 5.0, false, 5.0, true, 0.010, 20.0, Double.NaN, Double.NaN));
        assertThat(FailoverReport.withinTwiceP99(samples)).isEqualTo(1);
        assertThat(FailoverReport.withinTwiceP99ToRestart(samples)).isEqualTo(2);
        assertThat(FailoverReport.withinTwiceP99FromRestart(samples)).isEqualTo(2);
        assertThat(FailoverReport.killAndReturn(samples)).isEqualTo("2|2/3");
    }

    @Test
    void shouldShowNoReturnCountWhenNoSampleRestartedInItsWindow() {
        List<FailoverBench.QueueResult> control = List.of(result("none", 0.01, false, 10.0));
        assertThat(FailoverReport.restartedWithin(control)).isZero();
        assertThat(FailoverReport.killAndReturn(control)).isEqualTo("1|-");
    }

    @Test
    void shouldCountThePausesInWhichTheDiskAloneStalledLongerThanTheBound() {
        List<FailoverBench.QueueResult> samples = List.of(
                withDisk(0.060, 10.0, 35.0), // a 35 ms force against a 20 ms bound: the disk alone breaks it
                withDisk(0.060, 10.0, 12.0), // a miss the disk does not explain
                withDisk(0.015, 10.0, 20.0), // a force as long as the bound, not longer
                withDisk(0.015, 10.0, 0.0)); // no force overlapped the pause
        assertThat(FailoverReport.diskOverTwiceP99(samples)).isEqualTo(1);
        assertThat(FailoverReport.diskOverTwiceP99(List.of(result("none", 0.01, false, 10.0))))
                .as("a run without the probe")
                .isEqualTo(-1);
    }

    @Test
    void shouldCountThePausesInWhichAThreadThatWokeWaitedForACoreLongerThanTheBound() {
        List<FailoverBench.QueueResult> samples = List.of(
                withCpu(0.050, 8.0, 41.0), // 41 ms waiting for a core against a 16 ms bound: the machine was full
                withCpu(0.050, 8.0, 2.0), // a miss the cores do not explain
                withCpu(0.020, 8.0, 16.0)); // as long as the bound, not longer
        assertThat(FailoverReport.cpuOverTwiceP99(samples)).isEqualTo(1);
        assertThat(FailoverReport.diskOverTwiceP99(samples))
                .as("no disk probe in these")
                .isEqualTo(-1);
        assertThat(FailoverReport.cpuOverTwiceP99(List.of(withDisk(0.06, 10.0, 35.0))))
                .as("a run without the cpu probe")
                .isEqualTo(-1);
    }

    @Test
    void shouldWriteASilenceWithoutAProbeOrASendAsNullsInsteadOfFailing() {
        long ms = 1_000_000L;
        Map<String, Object> measured =
                FailoverReport.silence(new long[] {-2_000 * ms, -1_960 * ms, 7 * ms, 41 * ms, 3 * ms, 22 * ms});
        assertThat(measured)
                .containsEntry("from_s", -2.0)
                .containsEntry("ms", 40.0)
                .containsEntry("longest_send_gap_ms", 7.0)
                .containsEntry("latency_at_end_ms", 41.0)
                .containsEntry("disk_force_ms", 3.0)
                .containsEntry("cpu_wait_ms", 22.0);

        // --disk-probe-ms 0 (no force measured) and a silence with no send in it: the run's JSON is still written
        Map<String, Object> unmeasured = FailoverReport.silence(new long[] {
            -2_000 * ms, -1_960 * ms, FailoverStats.NONE, FailoverStats.NONE, FailoverStats.NONE, FailoverStats.NONE
        });
        assertThat(unmeasured)
                .containsEntry("longest_send_gap_ms", null)
                .containsEntry("latency_at_end_ms", null)
                .containsEntry("disk_force_ms", null)
                .containsEntry("cpu_wait_ms", null);
    }

    @Test
    void shouldDeleteTheBrokersTemporaryDataAtTheEndKeepingTheirLogs(@TempDir Path tmp) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("ganglion-failover-bench1/ganglion-1/storage"))
                .getParent()
                .getParent();
        Files.writeString(root.resolve("ganglion-1/broker.out"), "event=broker_started");
        Files.write(root.resolve("ganglion-1/storage/journal-0"), new byte[4096]);
        Path out = Files.createDirectories(tmp.resolve("out"));
        FailoverBench bench = new FailoverBench();

        bench.removeTemporaryData(out);
        assertThat(root).as("not made by the bench: kept").exists();

        bench.temporaryRoot = root;
        bench.removeTemporaryData(out);
        assertThat(root).doesNotExist();
        assertThat(out.resolve("broker-ganglion-1.out")).hasContent("event=broker_started");
    }
}
