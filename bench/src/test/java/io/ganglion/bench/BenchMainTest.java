package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BenchMainTest {

    private record Result(int status, String out, String err) {}

    private static Result run(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(outBytes, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(errBytes, true, StandardCharsets.UTF_8));
            int status = BenchMain.run(args);
            return new Result(
                    status, outBytes.toString(StandardCharsets.UTF_8), errBytes.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    @Test
    void shouldExitTwoOnAnUnknownFailoverScenarioAndNameTheThreeItKnows() {
        Result result = run("bench", "failover", "--scenarios", "owner,nothing");
        assertThat(result.status()).isEqualTo(2);
        assertThat(result.err()).contains("unknown scenario 'nothing': owner, controller or none");
    }

    @Test
    void shouldExitTwoOnANegativeProbeIntervalAndOnAnEmptyDiskBench() {
        Result probe = run("bench", "failover", "--disk-probe-ms", "-1");
        assertThat(probe.status()).isEqualTo(2);
        assertThat(probe.err()).contains("--disk-probe-ms >= 0");
        Result cpu = run("bench", "failover", "--cpu-probe-ms", "-1");
        assertThat(cpu.status()).isEqualTo(2);
        assertThat(cpu.err()).contains("--cpu-probe-ms >= 0");
        Result silence = run("bench", "failover", "--silence-ms", "0");
        assertThat(silence.status()).isEqualTo(2);
        assertThat(silence.err()).contains("--silence-ms > 0");
        Result twice = run("bench", "perftest", "--targets", "ganglion,rabbitmq", "--targets", "ganglion");
        assertThat(twice.status()).isEqualTo(2);
        assertThat(twice.err()).contains("a target named twice in --targets ganglion,rabbitmq,ganglion");
        Result type = run("bench", "perftest", "--queue-type", "classic");
        assertThat(type.status()).isEqualTo(2);
        assertThat(type.err()).contains("--queue-type is quorum or stream, not 'classic'");
        Result disk = run("bench", "disk", "--seconds", "0");
        assertThat(disk.status()).isEqualTo(2);
        assertThat(disk.err()).contains("--seconds and --interval-ms must be positive");
    }

    @Test
    void shouldAnswerHelpOnEveryBenchCommandWithExamplesOnTheList() {
        Result list = run("bench", "--help");
        assertThat(list.status()).isZero();
        assertThat(list.out())
                .contains("Usage: ganglion bench", "failover", "perftest", "disk", "backlog", "controller-failover")
                .contains("Examples:", "bin/ganglion bench failover --trials 3");
        for (String command : new String[] {"failover", "perftest", "disk", "backlog", "controller-failover"}) {
            Result help = run("bench", command, "--help");
            assertThat(help.status()).as(command).isZero();
            assertThat(help.out()).as(command).contains("Usage: ganglion bench " + command);
        }
        assertThat(run("server", "--help").out())
                .as("the CLI's other commands are still there")
                .contains("Usage: ganglion server");
    }
}
