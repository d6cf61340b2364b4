package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.testing.ConsoleRun;
import org.junit.jupiter.api.Test;

class BenchMainTest {

    private static ConsoleRun run(String... args) {
        return ConsoleRun.of(BenchMain::run, args);
    }

    @Test
    void shouldExitTwoOnAnUnknownFailoverScenarioAndNameTheThreeItKnows() {
        ConsoleRun result = run("bench", "failover", "--scenarios", "owner,nothing");
        assertThat(result.status()).isEqualTo(2);
        assertThat(result.err()).contains("unknown scenario 'nothing': owner, controller or none");
    }

    @Test
    void shouldExitTwoOnANegativeProbeIntervalAndOnAnEmptyDiskBench() {
        ConsoleRun probe = run("bench", "failover", "--disk-probe-ms", "-1");
        assertThat(probe.status()).isEqualTo(2);
        assertThat(probe.err()).contains("--disk-probe-ms >= 0");
        ConsoleRun cpu = run("bench", "failover", "--cpu-probe-ms", "-1");
        assertThat(cpu.status()).isEqualTo(2);
        assertThat(cpu.err()).contains("--cpu-probe-ms >= 0");
        ConsoleRun silence = run("bench", "failover", "--silence-ms", "0");
        assertThat(silence.status()).isEqualTo(2);
        assertThat(silence.err()).contains("--silence-ms > 0");
        ConsoleRun twice = run("bench", "perftest", "--targets", "ganglion,rabbitmq", "--targets", "ganglion");
        assertThat(twice.status()).isEqualTo(2);
        assertThat(twice.err()).contains("a target named twice in --targets ganglion,rabbitmq,ganglion");
        ConsoleRun type = run("bench", "perftest", "--queue-type", "classic");
        assertThat(type.status()).isEqualTo(2);
        assertThat(type.err()).contains("--queue-type is quorum or stream, not 'classic'");
        ConsoleRun disk = run("bench", "disk", "--seconds", "0");
        assertThat(disk.status()).isEqualTo(2);
        assertThat(disk.err()).contains("--seconds and --interval-ms must be positive");
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
