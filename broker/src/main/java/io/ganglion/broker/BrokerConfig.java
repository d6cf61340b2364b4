package io.ganglion.broker;

import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A broker's configuration: a {@code key = value} file, overridden by command-line flags. Broker keys are listed below;
 * every other key must be a runtime setting name (see {@link RuntimeSettings}). An unknown key, a value of the wrong
 * type or out of range is refused with a message naming the key.
 *
 * <pre>
 *   node.id       = ganglion-1        this broker's stable id (default: ganglion@hostname-less "ganglion-1")
 *   cluster.name  = ganglion          reported to clients as cluster_name
 *   data.dir      = ./data/ganglion-1 storage, metadata log
 *   amqp.host     = 127.0.0.1         interface the AMQP listener binds
 *   amqp.port     = 5672
 *   http.port     = 15672             the HTTP API ({@code bin/ganglion ctl}), on amqp.host
 *   default.user  = guest             created with default.pass on first start, loopback only when it is guest
 *   default.pass  = guest
 *   cluster.seeds = a@127.0.0.1:25672:25680, b@...   every broker of the cluster (id@host:peerPort:metadataPort);
 *                                      empty: a single broker with a file metadata log. The first three (or five)
 *                                      vote in the metadata quorum; this broker's own ports come from its entry.
 *   storage.segment_bytes = 67108864  a replica's log rolls to a new segment file at this size; retention discards
 *                                      whole segments, so smaller ones free space sooner (4096 to 1 GiB)
 *   storage.group_commit_us = 2000    under load the journal starts its forces at least this far apart, one force
 *                                      for what arrived meanwhile; an idle journal forces at once (0 to 1000000;
 *                                      0: a force as soon as the previous one ended)
 *   metadata.warmup = true            a voter runs a throwaway metadata group at start (1.5-3.5 s) so taking
 *                                      over as controller later runs warm code (LeaderPathWarmup)
 *   jit.compiler_nice = 0             `ganglion server` runs the JVM's C2 compiler threads at this nice value
 *                                      (0 to 19; 0: the JVM's own) so that compiling yields the cores to the
 *                                      broker's threads (CompilerPriority; Linux). Off by default: a broker killed
 *                                      while a niced thread lives is torn down at that thread's priority
 *   heap.soft_max_percent = 70        `ganglion server` asks the collector to keep the heap within this share of
 *                                      the maximum heap while it can (the JVM's SoftMaxHeapSize, unless the JVM
 *                                      options set it; 0: the JVM's own): a small resident broker is torn down
 *                                      sooner when it is killed, and its death is seen sooner (SoftMaxHeap)
 * </pre>
 */
public record BrokerConfig(
        String nodeId,
        String clusterName,
        Path dataDir,
        String amqpHost,
        int amqpPort,
        int httpPort,
        String defaultUser,
        String defaultPass,
        Settings settings,
        List<io.ganglion.broker.cluster.Seed> seeds,
        long electionTimeoutMinMs,
        long electionTimeoutMaxMs,
        int segmentBytes,
        long groupCommitMicros,
        boolean metadataWarmup,
        int compilerNice,
        int softMaxHeapPercent) {

    /** Whether this broker is one of a cluster (a seed list is configured). */
    public boolean clustered() {
        return !seeds.isEmpty();
    }

    /** This broker's own seed entry; only when {@link #clustered()}. */
    public io.ganglion.broker.cluster.Seed self() {
        return seeds.stream().filter(s -> s.id().equals(nodeId)).findFirst().orElseThrow();
    }

    /** A copy with another seed list (tests, {@code ganglion local}). */
    public BrokerConfig withSeeds(List<io.ganglion.broker.cluster.Seed> next) {
        return new BrokerConfig(
                nodeId,
                clusterName,
                dataDir,
                amqpHost,
                amqpPort,
                httpPort,
                defaultUser,
                defaultPass,
                settings,
                next,
                electionTimeoutMinMs,
                electionTimeoutMaxMs,
                segmentBytes,
                groupCommitMicros,
                metadataWarmup,
                compilerNice,
                softMaxHeapPercent);
    }

    private static final List<String> BROKER_KEYS = List.of(
            "node.id",
            "cluster.name",
            "data.dir",
            "amqp.host",
            "amqp.port",
            "http.port",
            "default.user",
            "default.pass",
            "cluster.seeds",
            "metadata.election_timeout_min_ms",
            "metadata.election_timeout_max_ms",
            "storage.segment_bytes",
            "storage.group_commit_us",
            "metadata.warmup",
            "jit.compiler_nice",
            "heap.soft_max_percent");

    /**
     * The metadata quorum's election timeouts: a follower that hears no leader for a random time in [min, max] runs for
     * election, and the leader heartbeats every min / 2. Shorter fails over faster; too short for the machine (GC or
     * CPU starvation pauses near max) changes leaders without need.
     */
    public static final long DEFAULT_ELECTION_TIMEOUT_MIN_MS = 100;

    public static final long DEFAULT_ELECTION_TIMEOUT_MAX_MS = 200;

    public static final int DEFAULT_SEGMENT_BYTES = 64 << 20;

    public static final long DEFAULT_GROUP_COMMIT_MICROS =
            io.ganglion.storage.StorageConfig.DEFAULT_GROUP_COMMIT_NANOS / 1000;

    /**
     * The nice value of the C2 compiler threads of a broker started by {@code ganglion server} (see above): 0, the
     * JVM's own. A process killed with SIGKILL is torn down by whichever of its threads exits last, and at that
     * thread's priority: a niced C2 thread is scheduled last on busy cores, so the killed broker's sockets, from which
     * its peers learn of the death, close up to a second later than with the JVM's priority (docs/operations.md, "What
     * {@code ganglion server} sets in its own JVM").
     */
    public static final int DEFAULT_COMPILER_NICE = 0;

    /** The share of the maximum heap a broker started by {@code ganglion server} asks its collector to keep to. */
    public static final int DEFAULT_SOFT_MAX_HEAP_PERCENT = 70;

    /** A configuration problem; the CLI prints the message and exits with status 2. */
    public static final class ConfigException extends Exception {
        public ConfigException(String message) {
            super(message);
        }
    }

    public static BrokerConfig defaults() {
        return new BrokerConfig(
                "ganglion-1",
                "ganglion",
                Path.of("data", "ganglion-1"),
                "127.0.0.1",
                5672,
                15672,
                "guest",
                "guest",
                Settings.defaults(),
                List.of(),
                DEFAULT_ELECTION_TIMEOUT_MIN_MS,
                DEFAULT_ELECTION_TIMEOUT_MAX_MS,
                DEFAULT_SEGMENT_BYTES,
                DEFAULT_GROUP_COMMIT_MICROS,
                true,
                DEFAULT_COMPILER_NICE,
                DEFAULT_SOFT_MAX_HEAP_PERCENT);
    }

    /** Reads {@code file} (if given) then applies {@code overrides}, in that order. */
    public static BrokerConfig load(Path file, Map<String, String> overrides) throws ConfigException {
        Map<String, String> values = new LinkedHashMap<>();
        if (file != null) {
            values.putAll(parseFile(file));
        }
        values.putAll(overrides);
        return from(values);
    }

    static Map<String, String> parseFile(Path file) throws ConfigException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + file + ": " + e.getMessage());
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int equals = line.indexOf('=');
            if (equals <= 0) {
                throw new ConfigException(file + " line " + (i + 1) + ": expected 'key = value', got '" + line + "'");
            }
            values.put(
                    line.substring(0, equals).strip(),
                    line.substring(equals + 1).strip());
        }
        return values;
    }

    static BrokerConfig from(Map<String, String> values) throws ConfigException {
        BrokerConfig base = defaults();
        String nodeId = base.nodeId;
        String clusterName = base.clusterName;
        Path dataDir = null;
        String host = base.amqpHost;
        int port = base.amqpPort;
        int httpPort = base.httpPort;
        String user = base.defaultUser;
        String pass = base.defaultPass;
        Map<String, String> settings = new LinkedHashMap<>();
        List<io.ganglion.broker.cluster.Seed> seeds = List.of();
        long electionMin = DEFAULT_ELECTION_TIMEOUT_MIN_MS;
        long electionMax = DEFAULT_ELECTION_TIMEOUT_MAX_MS;
        int segmentBytes = DEFAULT_SEGMENT_BYTES;
        long groupCommitMicros = DEFAULT_GROUP_COMMIT_MICROS;
        boolean warmup = base.metadataWarmup;
        int compilerNice = base.compilerNice;
        int softMaxHeapPercent = base.softMaxHeapPercent;
        for (Map.Entry<String, String> entry : values.entrySet()) {
            String key = entry.getKey();
            String value = entry.getValue();
            switch (key) {
                case "node.id" -> nodeId = nonEmpty(key, value);
                case "cluster.name" -> clusterName = nonEmpty(key, value);
                case "data.dir" -> dataDir = Path.of(nonEmpty(key, value));
                case "amqp.host" -> host = nonEmpty(key, value);
                case "amqp.port" -> port = port(key, value);
                case "http.port" -> httpPort = port(key, value);
                case "default.user" -> user = nonEmpty(key, value);
                case "default.pass" -> pass = value;
                case "metadata.election_timeout_min_ms" -> electionMin = millis(key, value);
                case "metadata.election_timeout_max_ms" -> electionMax = millis(key, value);
                case "storage.segment_bytes" -> segmentBytes = (int) number(key, value, 4096, 1L << 30);
                case "storage.group_commit_us" -> groupCommitMicros = number(key, value, 0, 1_000_000);
                case "metadata.warmup" -> warmup = bool(key, value);
                case "jit.compiler_nice" -> compilerNice = (int) number(key, value, 0, 19);
                case "heap.soft_max_percent" -> softMaxHeapPercent = (int) number(key, value, 0, 100);
                case "cluster.seeds" -> {
                    try {
                        seeds = io.ganglion.broker.cluster.Seed.parseList(value);
                    } catch (IllegalArgumentException e) {
                        throw new ConfigException("setting cluster.seeds: " + e.getMessage());
                    }
                }
                default -> {
                    if (RuntimeSettings.find(key).isEmpty()) {
                        throw new ConfigException("unknown setting '" + key + "'; broker keys are "
                                + String.join(", ", BROKER_KEYS) + ", runtime settings are "
                                + String.join(
                                        ", ",
                                        RuntimeSettings.all().stream()
                                                .map(s -> s.name())
                                                .toList()));
                    }
                    settings.put(key, value);
                }
            }
        }
        Settings parsed;
        try {
            parsed = Settings.defaults().withAll(settings);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        if (dataDir == null) {
            dataDir = Path.of("data", nodeId);
        }
        String self = nodeId;
        if (!seeds.isEmpty() && seeds.stream().noneMatch(s -> s.id().equals(self))) {
            throw new ConfigException(
                    "setting cluster.seeds: this broker's node.id '" + nodeId + "' is not in the seed list "
                            + seeds.stream().map(s -> s.id()).toList());
        }
        if (electionMax <= electionMin) {
            throw new ConfigException("metadata.election_timeout_max_ms (" + electionMax
                    + ") must exceed metadata.election_timeout_min_ms (" + electionMin + ")");
        }
        return new BrokerConfig(
                nodeId,
                clusterName,
                dataDir,
                host,
                port,
                httpPort,
                user,
                pass,
                parsed,
                seeds,
                electionMin,
                electionMax,
                segmentBytes,
                groupCommitMicros,
                warmup,
                compilerNice,
                softMaxHeapPercent);
    }

    private static boolean bool(String key, String value) throws ConfigException {
        return switch (value.strip()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ConfigException("setting " + key + ": expected true or false, got '" + value + "'");
        };
    }

    private static String nonEmpty(String key, String value) throws ConfigException {
        if (value.isBlank()) {
            throw new ConfigException("setting " + key + ": must not be empty");
        }
        return value;
    }

    private static long number(String key, String value, long min, long max) throws ConfigException {
        long parsed;
        try {
            parsed = Long.parseLong(value.strip().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new ConfigException("setting " + key + ": expected a whole number, got '" + value + "'");
        }
        if (parsed < min || parsed > max) {
            throw new ConfigException("setting " + key + ": " + parsed + " is outside " + min + " to " + max);
        }
        return parsed;
    }

    private static long millis(String key, String value) throws ConfigException {
        try {
            long millis = Long.parseLong(value);
            if (millis >= 10 && millis <= 60_000) {
                return millis;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ConfigException(
                "setting " + key + ": expected milliseconds between 10 and 60000, got '" + value + "'");
    }

    private static int port(String key, String value) throws ConfigException {
        try {
            int port = Integer.parseInt(value);
            if (port < 0 || port > 65535) {
                throw new ConfigException("setting " + key + ": " + port + " is not a port (0 to 65535)");
            }
            return port;
        } catch (NumberFormatException e) {
            throw new ConfigException("setting " + key + ": expected a port number, got '" + value + "'");
        }
    }
}
