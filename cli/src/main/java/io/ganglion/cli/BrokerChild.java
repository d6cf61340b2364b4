package io.ganglion.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A broker in its own JVM, started through the CLI with this program's classpath: for benchmarks and tests. */
final class BrokerChild implements AutoCloseable {
    final Path dataDir;
    final int amqpPort;
    final int httpPort;
    private final List<String> jvmOptions;
    private Process process;

    BrokerChild(Path dataDir, List<String> jvmOptions) throws IOException {
        this.dataDir = dataDir;
        this.amqpPort = freePort();
        this.httpPort = freePort();
        this.jvmOptions = List.copyOf(jvmOptions);
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    BrokerChild start() throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(List.of(
                "server",
                "--set",
                "data.dir=" + dataDir,
                "--set",
                "amqp.port=" + amqpPort,
                "--set",
                "http.port=" + httpPort));
        Files.createDirectories(dataDir);
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dataDir.resolve("broker.out").toFile()))
                .start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException(
                        "broker exited with " + process.exitValue() + ", see " + dataDir.resolve("broker.out"));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", amqpPort), 200);
                return this;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IOException("broker did not listen within 60 s");
    }

    /** SIGKILL: no shutdown hook runs, nothing is flushed. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }
}
