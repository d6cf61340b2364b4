package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.testing.ConsoleRun;
import org.junit.jupiter.api.Test;

class MainTest {

    private static ConsoleRun run(String... args) {
        return ConsoleRun.of(Main::run, args);
    }

    @Test
    void shouldAnswerHelpOnEveryCommandWithExamplesWhereAFirstUserLooks() {
        ConsoleRun top = run("--help");
        assertThat(top.status()).isZero();
        assertThat(top.out()).contains("server", "local", "ctl", "bench", "Examples:", "bin/ganglion local");
        for (String[] command : new String[][] {{"server"}, {"local"}, {"ctl"}}) {
            ConsoleRun help = run(command[0], "--help");
            assertThat(help.status()).as(command[0]).isZero();
            assertThat(help.out()).as(command[0]).contains("Usage: ganglion " + command[0], "Examples:");
        }
        for (String[] command : new String[][] {{"ctl", "queues"}, {"ctl", "settings"}}) {
            String[] args = java.util.Arrays.copyOf(command, command.length + 1);
            args[command.length] = "--help";
            ConsoleRun help = run(args);
            assertThat(help.status()).as(String.join(" ", command)).isZero();
            assertThat(help.out())
                    .as(String.join(" ", command))
                    .contains("Usage: ganglion " + String.join(" ", command));
        }
    }

    @Test
    void shouldExitTwoOnUnknownSetting() {
        ConsoleRun result = run("server", "--set", "amqp.prot=5672");
        assertThat(result.status()).isEqualTo(2);
        assertThat(result.err()).contains("unknown setting 'amqp.prot'");
    }

    @Test
    void shouldExitTwoOnBadHold() {
        ConsoleRun result = run("server", "--set", "replication.follower_loss_hold_ms=-1");
        assertThat(result.status()).isEqualTo(2);
        assertThat(result.err()).contains("replication.follower_loss_hold_ms: -1 is out of range");
    }

    @Test
    void shouldExitTwoOnUnknownCommandAndMissingFile() {
        assertThat(run("serve").status()).isEqualTo(2);
        ConsoleRun missing = run("server", "--config", "/nonexistent/ganglion.conf");
        assertThat(missing.status()).isEqualTo(2);
        assertThat(missing.err()).contains("cannot read config file");
    }

    @Test
    void shouldFailCtlClearlyWithoutABroker() {
        ConsoleRun result = run("ctl", "--http-port", "1", "status");
        assertThat(result.status()).isEqualTo(1);
        assertThat(result.err()).contains("cannot reach a broker at 127.0.0.1:1");
    }

    @Test
    void shouldPrintVersion() {
        ConsoleRun result = run("--version");
        assertThat(result.status()).isZero();
        assertThat(result.out()).contains("0.1.0");
    }

    @Test
    void shouldTurnNettysLeakDetectorOffForAServerUnlessTheLevelIsSet() {
        String netty = Main.Server.LEAK_DETECTION_LEVELS.get(0);
        String ratis = Main.Server.LEAK_DETECTION_LEVELS.get(1);
        String nettyBefore = System.getProperty(netty);
        String ratisBefore = System.getProperty(ratis);
        try {
            System.clearProperty(netty);
            System.setProperty(ratis, "paranoid");
            Main.Server.leakDetectionOffUnlessSet();
            assertThat(System.getProperty(netty)).isEqualTo("disabled");
            assertThat(System.getProperty(ratis))
                    .as("an operator's level stays")
                    .isEqualTo("paranoid");
        } finally {
            restore(netty, nettyBefore);
            restore(ratis, ratisBefore);
        }
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }
}
