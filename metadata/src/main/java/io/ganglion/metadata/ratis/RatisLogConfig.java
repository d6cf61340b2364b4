package io.ganglion.metadata.ratis;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * How one broker runs its part of the Ratis metadata log.
 *
 * @param nodeId this broker's id; it must be one of {@code voters}
 * @param voters every broker of the voter set, this one included; all brokers must be given the same set
 * @param storageDirectory where Ratis keeps this broker's log, its metadata and the snapshots
 * @param electionTimeoutMin a follower that hears no leader for a random time between min and max starts an election;
 *     the leader heartbeats every min / 2
 * @param electionTimeoutMax see {@code electionTimeoutMin}
 * @param proposeTimeout roughly how long {@code propose} keeps retrying (no leader, leader lost) before it fails
 * @param snapshotThreshold take a snapshot every this many log entries
 * @param purgeUpToSnapshot after a snapshot, drop the log up to it even if a peer still needs it (that peer then gets
 *     the snapshot); by default the log is kept back to the lowest index every peer has committed
 * @param logSegmentBytes the size at which a log segment is closed; only closed segments are ever purged
 * @param listeners brokers that follow the log without voting (Ratis listeners): every broker beyond the first three
 *     or five of the seed list
 */
public record RatisLogConfig(
        String nodeId,
        List<Voter> voters,
        Path storageDirectory,
        Duration electionTimeoutMin,
        Duration electionTimeoutMax,
        Duration proposeTimeout,
        long snapshotThreshold,
        boolean purgeUpToSnapshot,
        long logSegmentBytes,
        List<Voter> listeners) {

    public static final Duration DEFAULT_ELECTION_TIMEOUT_MIN = Duration.ofMillis(150);
    public static final Duration DEFAULT_ELECTION_TIMEOUT_MAX = Duration.ofMillis(300);
    public static final Duration DEFAULT_PROPOSE_TIMEOUT = Duration.ofSeconds(10);
    public static final long DEFAULT_SNAPSHOT_THRESHOLD = 10_000;
    public static final long DEFAULT_LOG_SEGMENT_BYTES = 8L << 20;

    public RatisLogConfig {
        Objects.requireNonNull(nodeId, "nodeId");
        voters = List.copyOf(voters);
        Objects.requireNonNull(storageDirectory, "storageDirectory");
        listeners = List.copyOf(listeners);
        Set<String> ids = new HashSet<>();
        for (Voter voter : listOfAll(voters, listeners)) {
            if (!ids.add(voter.id())) {
                throw new IllegalArgumentException("voter " + voter.id() + " is listed twice");
            }
        }
        if (!ids.contains(nodeId)) {
            throw new IllegalArgumentException("node " + nodeId + " is not among the voters or listeners " + ids);
        }
        if (electionTimeoutMin.isNegative()
                || electionTimeoutMin.isZero()
                || electionTimeoutMax.compareTo(electionTimeoutMin) <= 0) {
            throw new IllegalArgumentException(
                    "election timeouts must satisfy 0 < min < max: " + electionTimeoutMin + ", " + electionTimeoutMax);
        }
        if (proposeTimeout.compareTo(electionTimeoutMax) <= 0) {
            throw new IllegalArgumentException("propose timeout must exceed the election timeout: " + proposeTimeout);
        }
        if (snapshotThreshold < 1) {
            throw new IllegalArgumentException("snapshot threshold must be positive: " + snapshotThreshold);
        }
        if (logSegmentBytes < 1024) {
            throw new IllegalArgumentException("log segments must be at least 1 KiB: " + logSegmentBytes);
        }
    }

    /** A configuration with the default timeouts and snapshot threshold. */
    public static RatisLogConfig of(String nodeId, List<Voter> voters, Path storageDirectory) {
        return of(nodeId, voters, List.of(), storageDirectory);
    }

    /** A configuration with non-voting listeners, the default timeouts and snapshot threshold. */
    public static RatisLogConfig of(String nodeId, List<Voter> voters, List<Voter> listeners, Path storageDirectory) {
        return new RatisLogConfig(
                nodeId,
                voters,
                storageDirectory,
                DEFAULT_ELECTION_TIMEOUT_MIN,
                DEFAULT_ELECTION_TIMEOUT_MAX,
                DEFAULT_PROPOSE_TIMEOUT,
                DEFAULT_SNAPSHOT_THRESHOLD,
                false,
                DEFAULT_LOG_SEGMENT_BYTES,
                listeners);
    }

    public RatisLogConfig withElectionTimeouts(Duration min, Duration max) {
        return new RatisLogConfig(
                nodeId,
                voters,
                storageDirectory,
                min,
                max,
                proposeTimeout,
                snapshotThreshold,
                purgeUpToSnapshot,
                logSegmentBytes,
                listeners);
    }

    public RatisLogConfig withProposeTimeout(Duration timeout) {
        return new RatisLogConfig(
                nodeId,
                voters,
                storageDirectory,
                electionTimeoutMin,
                electionTimeoutMax,
                timeout,
                snapshotThreshold,
                purgeUpToSnapshot,
                logSegmentBytes,
                listeners);
    }

    public RatisLogConfig withSnapshots(long threshold, boolean purgeUpToSnapshot) {
        return new RatisLogConfig(
                nodeId,
                voters,
                storageDirectory,
                electionTimeoutMin,
                electionTimeoutMax,
                proposeTimeout,
                threshold,
                purgeUpToSnapshot,
                logSegmentBytes,
                listeners);
    }

    public RatisLogConfig withLogSegmentBytes(long bytes) {
        return new RatisLogConfig(
                nodeId,
                voters,
                storageDirectory,
                electionTimeoutMin,
                electionTimeoutMax,
                proposeTimeout,
                snapshotThreshold,
                purgeUpToSnapshot,
                bytes,
                listeners);
    }

    /** A configuration with these non-voting listeners. */
    public RatisLogConfig withListeners(List<Voter> listeners) {
        return new RatisLogConfig(
                nodeId,
                voters,
                storageDirectory,
                electionTimeoutMin,
                electionTimeoutMax,
                proposeTimeout,
                snapshotThreshold,
                purgeUpToSnapshot,
                logSegmentBytes,
                listeners);
    }

    private static List<Voter> listOfAll(List<Voter> voters, List<Voter> listeners) {
        List<Voter> all = new java.util.ArrayList<>(voters);
        all.addAll(listeners);
        return all;
    }

    /** This broker's entry in the voter or listener set. */
    public Voter self() {
        return listOfAll(voters, listeners).stream()
                .filter(voter -> voter.id().equals(nodeId))
                .findFirst()
                .orElseThrow();
    }
}
