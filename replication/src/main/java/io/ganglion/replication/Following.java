package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.PeerMessage.Progress;
import io.ganglion.replication.PeerMessage.Replicate;
import io.ganglion.replication.PeerMessage.Snapshot;
import io.ganglion.replication.ReplicaEffect.Flush;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The follower role of one epoch (a learner, to the owner, until it counts it): takes the owner's stream into the log,
 * cutting a divergent suffix where the owner says, and reports where its log ends and how far it is durable.
 */
final class Following implements Role {
    private final LogState log;
    private final Effects out;
    private final Incarnation incarnation;

    private final Epoch epoch;
    private final NodeId owner;
    private long lastProgressMs = Long.MIN_VALUE;
    /** The highest owner send time received in this role, echoed in every Progress. */
    private long echoMs = Long.MIN_VALUE;

    Following(Epoch epoch, NodeId owner, LogState log, Effects out, Incarnation incarnation) {
        this.epoch = epoch;
        this.owner = owner;
        this.log = log;
        this.out = out;
        this.incarnation = incarnation;
    }

    Epoch epoch() {
        return epoch;
    }

    NodeId owner() {
        return owner;
    }

    void sendProgress(long nowMs, boolean resync) {
        lastProgressMs = nowMs;
        out.send(owner, new Progress(epoch, incarnation, log.history(), log.end(), log.durable(), resync, echoMs));
    }

    void onTick(long nowMs, long progressEveryMs) {
        if (nowMs - lastProgressMs >= progressEveryMs) {
            sendProgress(nowMs, false);
        }
    }

    void onReplicate(NodeId from, Replicate replicate, long nowMs) {
        if (!from.equals(owner) || !replicate.epoch().equals(epoch) || log.fenced(replicate.epoch())) {
            return;
        }
        echoMs = Math.max(echoMs, replicate.sentMs());
        // The owner's retention: what this log holds durably below the owner's start is settled and not needed. Only
        // once this log holds a record of the followed epoch: then all of it is the owner's log (it took the owner's
        // records after any divergent suffix was cut), never a divergent prefix.
        OptionalLong followed = log.history().startOf(epoch);
        long below = Math.min(replicate.discardBelow(), log.durable() + 1);
        if (followed.isPresent() && followed.getAsLong() <= log.end() && below > log.start()) {
            log.discard(below);
        }
        if (replicate.records().isEmpty() && replicate.truncateFrom() < 0) {
            sendProgress(nowMs, false); // a lease renewal: answer at once
            return;
        }
        boolean truncated = false;
        if (replicate.truncateFrom() >= 0 && replicate.truncateFrom() <= log.end() && !staleTruncation(replicate)) {
            log.truncate(replicate.truncateFrom());
            truncated = true;
        }
        if (!takeRecords(replicate.records(), nowMs)) {
            return;
        }
        if (truncated) {
            out.add(new Flush());
            sendProgress(nowMs, false);
        }
    }

    /**
     * Appends the records past this log's end; false (having asked to be fed again) when they cannot follow it: a
     * record held here of another epoch, a gap, or an epoch this log or this role cannot take.
     */
    private boolean takeRecords(List<Record> records, long nowMs) {
        List<Record> fresh = new ArrayList<>(records.size());
        for (Record record : records) {
            if (record.offset() > log.end()) {
                fresh.add(record);
            } else if (record.offset() >= log.start()
                    && !log.history().epochAt(record.offset()).equals(record.epoch())) {
                // This log holds another epoch's record there (one its owner of that epoch wrote and no recovery
                // kept): taking the records after it would leave two logs of the followed epoch. Ask to be fed
                // again: the owner cuts this log back to where it meets its own.
                sendProgress(nowMs, true);
                return false;
            }
        }
        if (!fresh.isEmpty()) {
            Record first = fresh.get(0);
            if (first.offset() != log.end() + 1
                    || first.epoch().compareTo(log.history().lastEpoch()) < 0
                    || fresh.get(fresh.size() - 1).epoch().isAfter(epoch)) {
                sendProgress(nowMs, true); // a gap or a record that cannot follow ours: ask to be fed again
                return false;
            }
            log.append(fresh);
        }
        return true;
    }

    /**
     * Whether the owner's truncation answers a report older than this log: the owner computes it from a Progress, and
     * a second report sent before the first truncation arrived makes it send another, which may reach this log after
     * it truncated, took the owner's records and reported them durable (and the owner counted them). A truncation that
     * would cut records of the epoch this replica follows is stale (only the owner writes them, so its log holds
     * them), and so is one whose first record is the very record this log holds there (same epoch at that offset).
     */
    private boolean staleTruncation(Replicate replicate) {
        OptionalLong followed = log.history().startOf(epoch);
        if (followed.isPresent() && followed.getAsLong() <= log.end()) {
            return true;
        }
        long from = replicate.truncateFrom();
        if (replicate.records().isEmpty()) {
            return false;
        }
        Record first = replicate.records().get(0);
        return first.offset() == from
                && from >= log.start()
                && log.history().epochAt(from).equals(first.epoch());
    }

    void onSnapshot(NodeId from, Snapshot snapshot, long nowMs) {
        if (from.equals(owner) && snapshot.epoch().equals(epoch)) {
            log.reseed(snapshot.start(), snapshot.history());
            sendProgress(nowMs, false);
        }
    }

    /** Whether this log durably holds the followed epoch's start record: the member is caught up. */
    boolean caughtUp() {
        OptionalLong epochStart = log.history().startOf(epoch);
        return epochStart.isPresent() && log.durable() >= epochStart.getAsLong();
    }
}
