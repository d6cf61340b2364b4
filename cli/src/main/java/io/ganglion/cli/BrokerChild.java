package io.ganglion.cli;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Void> listening = new CompletableFuture<>();
        Path log = dataDir.resolve("broker.out");
        Thread copier = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                            BufferedWriter out = Files.newBufferedWriter(
                                    log,
                                    StandardCharsets.UTF_8,
                                    StandardOpenOption.CREATE,
                                    StandardOpenOption.APPEND)) {
                        String line;
                        while ((line = in.readLine()) != null) {
                            out.write(line);
                            out.newLine();
                            out.flush();
                            if (line.contains(" listening on amqp://")) {
                                listening.complete(null);
                            }
                        }
                    } catch (IOException e) {
                        listening.completeExceptionally(e);
                    }
                    listening.completeExceptionally(new IOException("broker exited, see " + log));
                },
                "broker-child-output");
        copier.setDaemon(true);
        copier.start();
        try {
            listening.get(60, TimeUnit.SECONDS);
            return this;
        } catch (ExecutionException e) {
            throw new IOException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("broker did not listen within 60 s, see " + log);
        }
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
