package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.PeerMessage.Fetch;
import io.ganglion.replication.PeerMessage.FetchReply;
import io.ganglion.replication.PeerMessage.Snapshot;
import io.ganglion.replication.ReplicaEffect.Flush;
import io.ganglion.replication.ReplicaEffect.ReplyInstalled;
import java.util.ArrayList;
import java.util.List;

/**
 * Installing this replica in an epoch a recovery proposes: its log is brought to the recovery point, copying what it
 * lacks from the sources in turn and cutting what lies beyond, then fsynced; the install is answered once the log is
 * durable at the point and the previous epoch's seal is persisted. The role ends when the epoch is activated here (as
 * owner or follower) or the install is answered.
 */
final class Installing implements Role {
    private final LogState log;
    private final Effects out;
    private final NodeId self;

    private final NodeId controller;
    private final Epoch epoch;
    private final LogPosition point;
    private final List<NodeId> sources;
    private int sourceIndex;
    private long askedMs;
    private boolean copied;

    Installing(
            NodeId controller,
            Epoch epoch,
            LogPosition point,
            List<NodeId> sources,
            LogState log,
            Effects out,
            NodeId self) {
        this.controller = controller;
        this.epoch = epoch;
        this.point = point;
        this.sources = sources;
        this.log = log;
        this.out = out;
        this.self = self;
    }

    Epoch epoch() {
        return epoch;
    }

    /**
     * Starts the copy, or finishes it at once when the log holds the point. True when the install is answered (the
     * role is over).
     */
    boolean begin(long persistedSeal, long nowMs) {
        if (log.holds(point)) {
            return finishCopy(persistedSeal);
        }
        askSource(nowMs);
        return false;
    }

    void onTick(long nowMs, long retryMs) {
        if (!copied && nowMs - askedMs >= retryMs) {
            sourceIndex++;
            askSource(nowMs);
        }
    }

    private void askSource(long nowMs) {
        askedMs = nowMs;
        for (int tried = 0; tried < sources.size(); tried++) {
            NodeId source = sources.get(Math.floorMod(sourceIndex, sources.size()));
            if (!source.equals(self)) {
                out.send(source, new Fetch(epoch, log.history(), log.end(), point));
                return;
            }
            sourceIndex++;
        }
    }

    /** The log holds the point: cut what lies beyond it (unconfirmed by construction), fsync, then acknowledge. */
    private boolean finishCopy(long persistedSeal) {
        log.truncate(point.offset() + 1);
        copied = true;
        out.add(new Flush());
        return checkInstalled(persistedSeal);
    }

    /** Answers the install once the copy is durable and the previous epoch's seal persisted: true then. */
    boolean checkInstalled(long persistedSeal) {
        if (!copied) {
            return false;
        }
        if (log.durable() >= point.offset() && persistedSeal >= epoch.value() - 1) {
            out.add(new ReplyInstalled(controller, epoch));
            return true;
        }
        return false;
    }

    void onSnapshot(Snapshot snapshot, long nowMs) {
        if (!copied && snapshot.epoch().equals(epoch)) {
            log.reseed(snapshot.start(), snapshot.history());
            askSource(nowMs);
        }
    }

    /** A source's records: copied past what this log holds of the same epochs. True when the install is answered. */
    boolean onFetchReply(FetchReply reply, long persistedSeal, long nowMs) {
        if (copied || !reply.installEpoch().equals(epoch)) {
            return false;
        }
        // The source computed truncateFrom for the log this replica described when it asked, which may be an older
        // one (a late answer from a source asked before): cut only where a record truly differs from ours. One epoch
        // has one log, so a record of the same epoch at the same offset is the same record; an answer without
        // records cuts nothing (what lies past the point is cut once the copy holds it).
        List<Record> fresh = new ArrayList<>();
        for (Record record : reply.records()) {
            if (fresh.isEmpty() && record.offset() <= log.end()) {
                if (record.offset() < log.start()
                        || log.history().epochAt(record.offset()).equals(record.epoch())) {
                    continue; // held already (or discarded: settled)
                }
                log.truncate(record.offset()); // diverges: the source holds the point, its record is the one
            }
            if (record.offset() != log.end() + 1 + fresh.size()) {
                break;
            }
            fresh.add(record);
        }
        if (!fresh.isEmpty()) {
            log.append(fresh);
        }
        if (log.holds(point)) {
            return finishCopy(persistedSeal);
        }
        askSource(nowMs);
        return false;
    }
}
