package io.ganglion.broker.replication;

import io.ganglion.broker.Shard;
import io.ganglion.broker.peer.PeerMessage.Replication;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.replication.PeerMessage;
import io.ganglion.replication.PeerMessage.Replicate;
import io.ganglion.replication.Record;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ReplicaHost}'s messages to its peers, as {@link Replication} frames through its {@link PeerSender}, with the
 * replica's {@code Replicate}s to one peer held back until the shard is idle and joined (see {@link #send}). On the
 * host's shard thread.
 */
final class PeerOutbox {
    private static final Logger LOG = LoggerFactory.getLogger(PeerOutbox.class);
    /** Records one Replicate carries at most when the outbox joins the replica's Replicates (see {@link #send}). */
    private static final int BATCH_RECORDS = 1024;

    private final ObjectId object;
    private final Shard shard;
    private final PeerSender sender;
    /** Replicates held back per peer until the shard is idle. */
    private final Map<NodeId, OutgoingRecords> outgoing = new LinkedHashMap<>();

    private final Runnable flushAtIdle = this::flushAtIdle;
    private boolean flushRegistered;

    PeerOutbox(ObjectId object, Shard shard, PeerSender sender) {
        this.object = object;
        this.shard = shard;
        this.sender = sender;
    }

    /**
     * Sends {@code message} to {@code to}, holding Replicates back until the shard is idle ({@link Shard#whenIdle}) so
     * that the records of many publishes go out in one message: a Replicate that continues the one held for the same
     * peer (same epoch, no truncation, the next offsets, within {@link #BATCH_RECORDS} and {@link
     * HostLog#READ_LIMIT_BYTES}) joins it, taking its later stamp, which is what the follower would have echoed had
     * they gone one by one. Any other message to that peer first sends what is held, so the peer sees every message in
     * the order the replica sent it.
     */
    void send(NodeId to, PeerMessage message) {
        OutgoingRecords held = outgoing.get(to);
        if (message instanceof Replicate replicate) {
            if (held == null || !held.join(replicate)) {
                if (held != null) {
                    transmit(to, held.message());
                }
                outgoing.put(to, new OutgoingRecords(replicate));
            }
            if (!flushRegistered) {
                flushRegistered = true;
                shard.whenIdle(flushAtIdle);
            }
            return;
        }
        if (held != null) {
            outgoing.remove(to);
            transmit(to, held.message());
        }
        transmit(to, message);
    }

    /**
     * At the shard's idle point: sends what is held, except a batch of acknowledgements alone ({@link
     * OutgoingRecords#lingers}), which waits for the next publish to that peer to join it, or for the replica's tick
     * ({@link #flushAll}). A consumer acknowledges about as often as publishers publish, and its Settle records going
     * out on their own would double the Replicates, the followers' journal appends and their progress replies; no
     * client waits for a Settle to be replicated, and the next message's records carry it at no cost to that message
     * (it was appended first, so its commit waited for it anyway).
     */
    private void flushAtIdle() {
        flushRegistered = false;
        Iterator<Map.Entry<NodeId, OutgoingRecords>> entries =
                outgoing.entrySet().iterator();
        while (entries.hasNext()) {
            Map.Entry<NodeId, OutgoingRecords> entry = entries.next();
            if (!entry.getValue().lingers()) {
                entries.remove();
                transmit(entry.getKey(), entry.getValue().message());
            }
        }
    }

    /** At the replica's tick: sends everything held, lingering acknowledgements too (held one tick at most). */
    void flushAll() {
        for (Map.Entry<NodeId, OutgoingRecords> entry : outgoing.entrySet()) {
            transmit(entry.getKey(), entry.getValue().message());
        }
        outgoing.clear();
    }

    private void transmit(NodeId to, PeerMessage message) {
        try {
            if (!sender.send(to, new Replication(object, message))) {
                LOG.debug("event=replication_send_dropped object={} to={} reason=no_link", object, to);
            }
        } catch (IllegalArgumentException e) {
            // too large for a frame (reads are bounded by READ_LIMIT_BYTES, so only a record near the frame limit):
            // the message is lost, as on a link that went down; the state machine's timers try again
            LOG.warn("event=replication_send_refused object={} to={} cause={}", object, to, e.getMessage());
        }
    }

    /** A Replicate held back for one peer, growing as the replica streams on. */
    private static final class OutgoingRecords {
        private final Epoch epoch;
        private final long truncateFrom;
        private final List<Record> records;
        private long sentMs;
        private long discardBelow;
        private long bytes;
        /** Every Replicate joined so far carried records, all of them Settles. */
        private boolean settlesOnly;

        OutgoingRecords(Replicate first) {
            this.epoch = first.epoch();
            this.truncateFrom = first.truncateFrom();
            this.records = new ArrayList<>(first.records());
            this.sentMs = first.sentMs();
            this.discardBelow = first.discardBelow();
            for (Record record : records) {
                bytes += record.size();
            }
            this.settlesOnly = settlesOnly(first);
        }

        private static boolean settlesOnly(Replicate replicate) {
            if (replicate.records().isEmpty() || replicate.truncateFrom() >= 0) {
                return false; // a heartbeat, or a truncation: these go at once
            }
            for (Record record : replicate.records()) {
                if (record instanceof Record.Message || record instanceof Record.EpochStart) {
                    return false;
                }
            }
            return true;
        }

        /** Whether this batch may wait past the shard's idle point: acknowledgements alone. */
        boolean lingers() {
            return settlesOnly;
        }

        boolean join(Replicate next) {
            if (!next.epoch().equals(epoch) || next.truncateFrom() >= 0) {
                return false;
            }
            long nextBytes = 0;
            for (Record record : next.records()) {
                nextBytes += record.size();
            }
            if (records.size() + next.records().size() > BATCH_RECORDS
                    || bytes + nextBytes > HostLog.READ_LIMIT_BYTES) {
                return false;
            }
            if (!records.isEmpty()
                    && !next.records().isEmpty()
                    && records.get(records.size() - 1).offset() + 1
                            != next.records().get(0).offset()) {
                return false;
            }
            records.addAll(next.records());
            settlesOnly = settlesOnly && settlesOnly(next);
            bytes += nextBytes;
            sentMs = Math.max(sentMs, next.sentMs());
            discardBelow = Math.max(discardBelow, next.discardBelow());
            return true;
        }

        Replicate message() {
            return new Replicate(epoch, truncateFrom, records, sentMs, discardBelow);
        }
    }
}
