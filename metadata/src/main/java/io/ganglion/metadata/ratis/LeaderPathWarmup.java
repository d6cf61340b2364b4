package io.ganglion.metadata.ratis;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DownReason;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a throwaway three-voter metadata group inside this JVM before the broker's own server starts, so that the code a
 * broker runs when it takes over as controller has run once: an election with pre-vote and vote over Netty, a leader's
 * setup, in-process proposals on the leader, proposals through the client from a follower, and the state machine
 * applying live set changes.
 *
 * <p>Why: when the controller dies, every survivor's JVM has never led (the one that led is the one that died), and
 * taking over would run all of that for the first time: class loading, lambda linking, interpreted code. The warm-up
 * takes over 100 ms off the controller failover bench's p50 and p99 (docs/metadata.md, "Tuning"). The group listens
 * on free ports of the broker's host for 1.5 to 3.5 seconds (longer on a loaded machine), keeps its files in a folder
 * below the broker's data folder, and shares nothing with the real group (its own group id, peers and storage). Its
 * servers stop and its files are deleted in the background once it is done. A warm-up that fails or runs past its
 * budget is logged and abandoned; the broker starts anyway, only colder.
 */
public final class LeaderPathWarmup {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderPathWarmup.class);

    private static final int VOTERS = 3;

    /** Proposals, a quarter of them through a follower: enough to run every path a few times. */
    private static final int PROPOSALS = 32;

    private LeaderPathWarmup() {}

    /**
     * Runs the warm-up in {@code directory} (created, then deleted) for the broker of {@code config}, with servers bound
     * to its host and its election timeouts, within about {@code budget}. Only a voter can come to lead: for a listener
     * it does nothing. Returns how long it took, or empty if it did not run, failed or ran out of time.
     */
    public static Optional<Duration> run(Path directory, RatisLogConfig config, Duration budget) {
        if (config.voters().stream().noneMatch(voter -> voter.id().equals(config.nodeId()))) {
            return Optional.empty();
        }
        String host = config.self().host();
        long start = System.nanoTime();
        long deadline = start + budget.toNanos();
        List<RatisMetadataLog> logs = new ArrayList<>();
        // what a warm-up killed with its broker left behind
        deleteRecursively(directory);
        try {
            List<Voter> voters = new ArrayList<>();
            for (int port : freePorts(host, VOTERS)) {
                voters.add(new Voter("warmup-" + (voters.size() + 1), host, port));
            }
            String cluster = "warmup-" + UUID.randomUUID();
            for (Voter voter : voters) {
                RatisLogConfig warm = RatisLogConfig.of(voter.id(), voters, directory.resolve(voter.id()))
                        .withElectionTimeouts(config.electionTimeoutMin(), config.electionTimeoutMax())
                        .withProposeTimeout(budget.plus(config.electionTimeoutMax()));
                logs.add(RatisMetadataLog.start(warm, cluster));
            }
            propose(awaitLeader(logs, deadline), logs, deadline);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            LOG.info("event=metadata_warmup_done took_ms={}", took.toMillis());
            return Optional.of(took);
        } catch (IOException | RuntimeException e) {
            LOG.warn("event=metadata_warmup_failed cause={}", e.toString());
            return Optional.empty();
        } finally {
            // the servers stop (about a second) and their files go while the broker starts; an election a follower
            // began as its leader closed may still read its storage after close returns, so the files go later
            long lingerMs = 2 * config.electionTimeoutMax().toMillis() + 1_000;
            closeLeadersFirst(logs)
                    .whenComplete((ignored, failure) -> CompletableFuture.delayedExecutor(
                                    lingerMs, java.util.concurrent.TimeUnit.MILLISECONDS)
                            .execute(() -> deleteRecursively(directory)));
        }
    }

    /**
     * Closes the leaders of {@code logs} first and the others once no leader is left, all in the background. Closed
     * together, a follower often stopped while its leader still sent it heartbeats, and Ratis logged each refused one
     * as an ERROR with a stack trace ({@code ServerNotReadyException: ... CLOSING}) in the log of a broker starting
     * normally: in most starts of a failover bench run. A leader's close ends its leadership (and its heartbeats)
     * first.
     */
    static CompletableFuture<Void> closeLeadersFirst(List<RatisMetadataLog> logs) {
        List<RatisMetadataLog> leaders =
                logs.stream().filter(RatisMetadataLog::isLeader).toList();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        List<CompletableFuture<Void>> leadershipsEnded = new ArrayList<>();
        for (RatisMetadataLog leader : leaders) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            leader.onLeaderChange(leads -> {
                if (!leads) {
                    ended.complete(null);
                }
            });
            leadershipsEnded.add(ended);
            closing.add(
                    CompletableFuture.runAsync(leader::close).whenComplete((ignored, failure) -> ended.complete(null)));
        }
        CompletableFuture<Void> othersClosing = CompletableFuture.allOf(
                        leadershipsEnded.toArray(CompletableFuture[]::new))
                .thenCompose(ignored -> CompletableFuture.allOf(logs.stream()
                        .filter(log -> !leaders.contains(log))
                        .map(log -> CompletableFuture.runAsync(log::close))
                        .toArray(CompletableFuture[]::new)));
        closing.add(othersClosing);
        return CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new));
    }

    /** {@code count} ports of {@code host} that were free a moment ago (bound to port 0, then released). */
    static int[] freePorts(String host, int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0, 1, InetAddress.getByName(host)));
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    private static RatisMetadataLog awaitLeader(List<RatisMetadataLog> logs, long deadline) {
        while (System.nanoTime() < deadline) {
            for (RatisMetadataLog log : logs) {
                if (log.isLeader()) {
                    return log;
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        throw new IllegalStateException("no leader elected within the warm-up's budget");
    }

    /** Live set changes through the leader (in process) and through a follower (the client), as the controller does. */
    private static void propose(RatisMetadataLog leader, List<RatisMetadataLog> logs, long deadline) {
        RatisMetadataLog follower = logs.stream()
                .filter(log -> log != leader)
                .min(Comparator.comparing(RatisMetadataLog::nodeId))
                .orElse(leader);
        List<CompletableFuture<MetadataImage.Applied>> proposals = new ArrayList<>();
        for (int i = 0; i < PROPOSALS; i++) {
            boolean live = i % 2 == 0;
            NodeState state = new NodeState(
                    new NodeId("warmup-node"),
                    live,
                    i,
                    live ? null : DownReason.EAGER_FAILOVER,
                    new Incarnation(1 + i),
                    false);
            MetadataCommand command =
                    new MetadataCommand.Coordination(new CoordinationCommand.CommitLiveSet(List.of(state)));
            proposals.add((i % 4 == 3 ? follower : leader).propose(command));
        }
        long remaining = Math.max(1, deadline - System.nanoTime());
        CompletableFuture.allOf(proposals.toArray(CompletableFuture[]::new))
                .orTimeout(remaining, TimeUnit.NANOSECONDS)
                .join();
    }

    private static void deleteRecursively(Path directory) {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("event=metadata_warmup_cleanup_failed dir={} cause={}", directory, e.toString());
        }
    }
}
