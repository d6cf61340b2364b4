package io.ganglion.replication;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import java.util.ArrayDeque;

/** What the owner knows of one follower. */
final class Peer {
    final NodeId node;
    Incarnation incarnation;
    /** The owner found where the follower's log diverges and feeds it from {@link #next}. */
    boolean synced;
    /** Came back with a new incarnation: a learner, not counted until its lag is small. */
    boolean suspended;

    long next;
    long truncateFrom = -1;
    /**
     * A Replicate told the follower to truncate (or a Snapshot to reseed): it is sent nothing more until it reports
     * again. The owner feeds it from {@link #next} as if it had cut its divergent suffix; if that message was lost, a
     * later record landing just past the old end would follow the suffix, a second log of this epoch.
     */
    boolean cutUnconfirmed;

    long reportedEnd = -1;
    /** The follower's durable offset within the prefix it shares with the owner: what counts for W. */
    long matched = -1;

    long lastHeardMs = Long.MIN_VALUE;
    long lastSentMs = Long.MIN_VALUE;
    /** When the owner last sent this follower a Replicate (with records or as a lease renewal). */
    long lastStampMs = Long.MIN_VALUE;
    /** The highest send time of ours the follower echoed: it grants the owner lease until echo + lease. */
    long echoMs = Long.MIN_VALUE;

    boolean reading;
    /** {offset, bytes} streamed and not yet reported received. */
    final ArrayDeque<long[]> inflight = new ArrayDeque<>();

    long inflightBytes;

    Peer(NodeId node) {
        this.node = node;
    }
}
