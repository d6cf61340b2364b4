package io.ganglion.metadata.ratis;

import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataImageCodec;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/** Ratis metadata logs on loopback ports in one JVM, each with its own storage directory, for tests. */
final class RatisTestCluster implements AutoCloseable {
    static final Duration DEADLINE = Duration.ofSeconds(20);

    private final List<Voter> voters;
    private final Path root;
    private final UnaryOperator<RatisLogConfig> tune;
    private final Map<String, RatisMetadataLog> running = new LinkedHashMap<>();

    private RatisTestCluster(List<Voter> voters, Path root, UnaryOperator<RatisLogConfig> tune) {
        this.voters = voters;
        this.root = root;
        this.tune = tune;
    }

    /** {@code size} voters n1..n{size} on free loopback ports, none started. */
    static RatisTestCluster create(Path root, int size, UnaryOperator<RatisLogConfig> tune) throws IOException {
        List<Voter> voters = new ArrayList<>();
        for (int port : freePorts(size)) {
            voters.add(new Voter("n" + (voters.size() + 1), "127.0.0.1", port));
        }
        return new RatisTestCluster(List.copyOf(voters), root, tune);
    }

    static int[] freePorts(int count) throws IOException {
        return LeaderPathWarmup.freePorts("127.0.0.1", count);
    }

    List<String> ids() {
        return voters.stream().map(Voter::id).toList();
    }

    /**
     * Election timeouts of 300-600 ms rather than the 150-300 ms default: these tests check what the log does, not how
     * fast it fails over (that is {@code LeaderFailoverBench}), and three servers in one JVM on two cores shared with
     * other builds miss 150 ms deadlines often enough to change leaders at random.
     */
    RatisLogConfig config(String id) {
        return tune.apply(RatisLogConfig.of(id, voters, root.resolve(id))
                .withElectionTimeouts(Duration.ofMillis(300), Duration.ofMillis(600)));
    }

    Path storage(String id) {
        return root.resolve(id);
    }

    RatisMetadataLog start(String id) {
        try {
            RatisMetadataLog log = RatisMetadataLog.start(config(id));
            running.put(id, log);
            return log;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void startAll() {
        ids().forEach(this::start);
    }

    void stop(String id) {
        RatisMetadataLog log = running.remove(id);
        if (log != null) {
            log.close();
        }
    }

    RatisMetadataLog log(String id) {
        return running.get(id);
    }

    List<RatisMetadataLog> running() {
        return List.copyOf(running.values());
    }

    /** The one running log that leads, once there is exactly one. */
    RatisMetadataLog awaitLeader() {
        return await("a single leader among " + running.keySet(), () -> {
            List<RatisMetadataLog> leaders =
                    running.values().stream().filter(RatisMetadataLog::isLeader).toList();
            return leaders.size() == 1 ? Optional.of(leaders.get(0)) : Optional.empty();
        });
    }

    RatisMetadataLog aFollower() {
        return running.values().stream()
                .filter(log -> !log.isLeader())
                .findFirst()
                .orElseThrow();
    }

    /** Waits until every running log holds the same image, and returns it. */
    MetadataImage awaitConverged() {
        return await("every running log to hold the same image", () -> {
            List<MetadataImage> images =
                    running.values().stream().map(RatisMetadataLog::image).toList();
            byte[] first = MetadataImageCodec.encode(images.get(0));
            for (MetadataImage image : images) {
                if (!Arrays.equals(first, MetadataImageCodec.encode(image))) {
                    return Optional.empty();
                }
            }
            return Optional.of(images.get(0));
        });
    }

    /** Polls {@code probe} every 10 ms until it gives a value, failing after {@link #DEADLINE}. */
    static <T> T await(String what, Supplier<Optional<T>> probe) {
        return Poll.untilPresent(DEADLINE, probe::get, () -> "waiting for " + what);
    }

    @Override
    public void close() {
        new ArrayList<>(running.keySet()).forEach(this::stop);
    }
}
