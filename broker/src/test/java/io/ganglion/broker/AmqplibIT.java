package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Node's amqplib (tests/amqplib) against a real broker: test.js (connect, declare, publish with confirms, consume, ack,
 * and a stream read from first and from an offset) and callback.js (every operation of the callback API, on a plain
 * and a confirm channel).
 */
class AmqplibIT {
    private static final Path SCRIPT_DIR =
            Path.of("..", "tests", "amqplib").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void shouldServeNodeAmqplib() throws Exception {
        if (!Files.isDirectory(SCRIPT_DIR.resolve("node_modules").resolve("amqplib"))) {
            run(List.of("npm", "ci", "--no-audit", "--no-fund"), 300);
        }
        try (TestBroker broker = new TestBroker(dir.resolve("b"))) {
            String url = "amqp://guest:guest@127.0.0.1:" + broker.amqpPort;
            assertThat(run(List.of("node", "test.js", url), 60)).contains("amqplib: 8 passed, 0 failed");
            // every operation of the callback API, each answer RabbitMQ 3.10.8's
            assertThat(run(List.of("node", "callback.js", url), 120))
                    .contains("amqplib callback: 101 passed, 0 failed");
        }
    }

    private static String run(List<String> command, int timeoutSeconds) throws Exception {
        Path log = Files.createTempFile("amqplib", ".log");
        Process process = new ProcessBuilder(command)
                .directory(SCRIPT_DIR.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        boolean finished = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        String output = Files.readString(log);
        if (!finished) {
            process.destroyForcibly();
        }
        assertThat(finished).as("%s finished: %s", command, output).isTrue();
        assertThat(process.exitValue()).as("%s: %s", command, output).isZero();
        return output;
    }
}
