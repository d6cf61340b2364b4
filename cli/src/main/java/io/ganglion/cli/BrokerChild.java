package io.ganglion.cli;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A broker in its own JVM, started through the CLI with this program's classpath: for benchmarks and tests. */
public final class BrokerChild implements AutoCloseable {
    final Path dataDir;
    public final int amqpPort;
    public final int httpPort;
    private final List<String> jvmOptions;
    private final Map<String, String> settings;
    private Process process;
    private CompletableFuture<Void> listening;

    public BrokerChild(Path dataDir, List<String> jvmOptions) throws IOException {
        this(dataDir, jvmOptions, freePort(), freePort(), Map.of());
    }

    /** A broker with these ports and extra settings ({@code node.id}, {@code cluster.seeds}, runtime settings). */
    BrokerChild(Path dataDir, List<String> jvmOptions, int amqpPort, int httpPort, Map<String, String> settings) {
        this.dataDir = dataDir;
        this.amqpPort = amqpPort;
        this.httpPort = httpPort;
        this.jvmOptions = List.copyOf(jvmOptions);
        this.settings = new LinkedHashMap<>(settings);
    }

    /**
     * Brokers {@code ganglion-1..n} of one cluster on loopback, data under {@code root}: AMQP, HTTP, peer and metadata
     * ports from the given bases (each + i), or free ports where a base is 0. Not started.
     */
    public static List<BrokerChild> cluster(
            Path root, int brokers, int amqpBase, int httpBase, int peerBase, int metadataBase, List<String> jvmOptions)
            throws IOException {
        List<String> seeds = new ArrayList<>();
        int[][] ports = new int[brokers][];
        for (int i = 0; i < brokers; i++) {
            ports[i] = new int[] {
                amqpBase == 0 ? freePort() : amqpBase + i,
                httpBase == 0 ? freePort() : httpBase + i,
                peerBase == 0 ? freePort() : peerBase + i,
                metadataBase == 0 ? freePort() : metadataBase + i
            };
            seeds.add("ganglion-" + (i + 1) + "@127.0.0.1:" + ports[i][2] + ":" + ports[i][3]);
        }
        List<BrokerChild> children = new ArrayList<>();
        for (int i = 0; i < brokers; i++) {
            String id = "ganglion-" + (i + 1);
            children.add(new BrokerChild(
                    root.resolve(id),
                    jvmOptions,
                    ports[i][0],
                    ports[i][1],
                    Map.of("node.id", id, "cluster.seeds", String.join(",", seeds))));
        }
        return children;
    }

    /** Starts it (next time) with {@code key = value} too: a broker key or a runtime setting. */
    public BrokerChild with(String key, String value) {
        settings.put(key, value);
        return this;
    }

    /** A setting this broker was started with ({@code cluster.seeds}, ...), or null. */
    String setting(String key) {
        return settings.get(key);
    }

    public String nodeId() {
        return settings.getOrDefault("node.id", "ganglion-1");
    }

    /** Ports {@link #freePort} handed out in this JVM. */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The ports {@link #freePort} hands out: below the kernel's ephemeral range (32768-60999 on Linux by default). */
    static final int FIRST_PORT = 20_000;

    static final int LAST_PORT = 32_000;

    /**
     * A port free now, and never handed out before by this JVM. It is taken below the ephemeral range, because the
     * broker binds it only later: a port the kernel handed out for port 0 can be taken meanwhile by any outgoing
     * connection or any other port-0 listener of the machine (a broker's metadata warm-up group listens on such ports),
     * and a cluster test then fails at start ("Failed to start NettyRpcService"). Nor is a port the kernel just gave
     * handed out again once the probing socket closed (two of a cluster's ports can collide so). The search
     * starts at a place of its own per process, so that test JVMs running at once seldom probe the same ports.
     */
    public static int freePort() throws IOException {
        int span = LAST_PORT - FIRST_PORT;
        int start = (int) Math.floorMod(ProcessHandle.current().pid() * 7919L, span);
        for (int i = 0; i < span; i++) {
            int port = FIRST_PORT + (start + i) % span;
            if (HANDED_OUT.contains(port)) {
                continue;
            }
            try (ServerSocket socket = new ServerSocket(port)) {
                if (HANDED_OUT.add(socket.getLocalPort())) {
                    return port;
                }
            } catch (java.net.BindException e) {
                // in use: the next one
            }
        }
        throw new IOException("no free port between " + FIRST_PORT + " and " + LAST_PORT);
    }

    /** Starts the process and waits until it listens (a broker of a cluster waits for a metadata quorum first). */
    public BrokerChild start() throws IOException, InterruptedException {
        launch();
        return awaitListening();
    }

    /** Starts the process without waiting: start every broker of a cluster, then {@link #awaitListening()} on each. */
    public BrokerChild launch() throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JvmFlags.flags(JvmFlags.Jvm.BROKER_CHILD, jvmOptions));
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
        settings.forEach((key, value) -> command.addAll(List.of("--set", key + "=" + value)));
        Files.createDirectories(dataDir);
        Path log = dataDir.resolve("broker.out");
        long from = Files.exists(log) ? Files.size(log) : 0; // a restart appends to the file of the run before
        // straight into the file: read through a pipe by a thread of this JVM (a bench beside its clients), the pipe
        // filled whenever that thread fell behind, and the broker's threads blocked in logging (the failover bench: the
        // controller 20-45 ms on three log lines, right after a kill, when the brokers log most)
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        CompletableFuture<Void> listening = new CompletableFuture<>();
        this.listening = listening;
        Process started = process;
        Thread watcher = new Thread(() -> watchForListening(started, log, from, listening), "broker-child-watch");
        watcher.setDaemon(true);
        watcher.start();
        return this;
    }

    /**
     * Reads {@code log} from byte {@code from} as the broker writes it, until it says it listens (completes {@code
     * listening}) or the process exits (fails it with the last lines). Woken by the file system's change events on the
     * log's folder (inotify), and by the process's exit, which closes the watch.
     */
    private static void watchForListening(Process process, Path log, long from, CompletableFuture<Void> listening) {
        java.util.ArrayDeque<String> last = new java.util.ArrayDeque<>();
        try (java.nio.file.WatchService changes = log.getFileSystem().newWatchService();
                java.io.InputStream in = new java.io.BufferedInputStream(Files.newInputStream(log))) {
            log.getParent().register(changes, java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY);
            process.onExit().thenRun(() -> closeQuietly(changes));
            in.skipNBytes(from);
            java.io.ByteArrayOutputStream partial = new java.io.ByteArrayOutputStream();
            while (true) {
                boolean exited = !process.isAlive();
                int b;
                while ((b = in.read()) >= 0) {
                    if (b != '\n') {
                        partial.write(b);
                        continue;
                    }
                    String line = partial.toString(StandardCharsets.UTF_8);
                    partial.reset();
                    last.addLast(line);
                    if (last.size() > 15) {
                        last.removeFirst();
                    }
                    if (line.contains(" listening on amqp://")) {
                        listening.complete(null);
                        return;
                    }
                }
                if (exited) {
                    break;
                }
                try {
                    java.nio.file.WatchKey key = changes.take();
                    key.pollEvents();
                    key.reset();
                } catch (java.nio.file.ClosedWatchServiceException e) {
                    // the process exited: read what it wrote last, then stop
                }
            }
        } catch (IOException e) {
            listening.completeExceptionally(e);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        listening.completeExceptionally(
                new IOException("broker exited, see " + log + "; its last lines:\n" + String.join("\n", last)));
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException e) {
            // nothing to do: the watch is gone either way
        }
    }

    public BrokerChild awaitListening() throws IOException, InterruptedException {
        Path log = dataDir.resolve("broker.out");
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
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /**
     * SIGKILLs every one of {@code brokers} before waiting for any: brokers that die together. Killed one after the
     * other, the survivors see the first close within tens of milliseconds and may finish a recovery (a new epoch on
     * the second one) before the second kill, which waits for the first process to be reaped (100 ms or more).
     */
    static void killTogether(BrokerChild... brokers) throws InterruptedException {
        for (BrokerChild broker : brokers) {
            broker.process.destroyForcibly();
        }
        for (BrokerChild broker : brokers) {
            broker.process.waitFor();
        }
    }

    /** {@link #kill()} for callers that cannot throw (an asynchronous kill beside a running workload). */
    void killQuietly() {
        try {
            kill();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        stopTogether(List.of(this));
    }

    /**
     * SIGTERMs every one of {@code brokers} before waiting for any (each up to 10 s, then SIGKILL): a cluster stopped as
     * one. Stopped one after the other, the brokers still running see each stop as a peer's failure and log it (a
     * metadata leader's failed appends, a peer unreachable) for every broker but the last.
     */
    public static void stopTogether(List<BrokerChild> brokers) throws InterruptedException {
        for (BrokerChild broker : brokers) {
            if (broker.process != null && broker.process.isAlive()) {
                broker.process.destroy();
            }
        }
        for (BrokerChild broker : brokers) {
            if (broker.process != null && !broker.process.waitFor(10, TimeUnit.SECONDS)) {
                broker.process.destroyForcibly().waitFor();
            }
        }
    }
}
