package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.testing.ConsoleRun;
import org.junit.jupiter.api.Test;

class BenchMainTest {

    private static ConsoleRun run(String... args) {
        return ConsoleRun.of(BenchMain::run, args);
    }

    /** The command line exits 2 (a usage error) and says {@code message} on stderr. */
    private static void assertUsageError(String message, String... args) {
        ConsoleRun result = run(args);
        assertThat(result.status()).isEqualTo(2);
        assertThat(result.err()).contains(message);
    }

    @Test
    void shouldExitTwoOnAnUnknownFailoverScenarioAndNameTheThreeItKnows() {
        assertUsageError(
                "unknown scenario 'nothing': owner, controller or none",
                "bench",
                "failover",
                "--scenarios",
                "owner,nothing");
    }

    @Test
    void shouldExitTwoOnANegativeProbeIntervalAndOnAnEmptyDiskBench() {
        assertUsageError("--disk-probe-ms >= 0", "bench", "failover", "--disk-probe-ms", "-1");
        assertUsageError("--cpu-probe-ms >= 0", "bench", "failover", "--cpu-probe-ms", "-1");
        assertUsageError("--silence-ms > 0", "bench", "failover", "--silence-ms", "0");
        assertUsageError(
                "a target named twice in --targets ganglion,rabbitmq,ganglion",
                "bench",
                "perftest",
                "--targets",
                "ganglion,rabbitmq",
                "--targets",
                "ganglion");
        assertUsageError(
                "--queue-type is quorum or stream, not 'classic'", "bench", "perftest", "--queue-type", "classic");
        assertUsageError("--seconds and --interval-ms must be positive", "bench", "disk", "--seconds", "0");
    }

    @Test
    void shouldAnswerHelpOnEveryBenchCommandWithExamplesOnTheList() {
        ConsoleRun list = run("bench", "--help");
        assertThat(list.status()).isZero();
        assertThat(list.out())
                .contains("Usage: ganglion bench", "failover", "perftest", "disk", "backlog", "controller-failover")
                .contains("Examples:", "bin/ganglion bench failover --trials 3");
        for (String command : new String[] {"failover", "perftest", "disk", "backlog", "controller-failover"}) {
            ConsoleRun help = run("bench", command, "--help");
            assertThat(help.status()).as(command).isZero();
            assertThat(help.out()).as(command).contains("Usage: ganglion bench " + command);
        }
        assertThat(run("server", "--help").out())
                .as("the CLI's other commands are still there")
                .contains("Usage: ganglion server");
    }
}
