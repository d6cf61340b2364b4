package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.SealReply;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link Replica} asks its broker to do. Storage effects run in order on the object's log; each answers with an
 * event where noted.
 */
public sealed interface ReplicaEffect {

    /** Why a log read was asked for. */
    enum ReadPurpose {
        /** The owner feeds a follower that is behind the live stream. */
        FEED,
        /** A sealed replica serves an install. */
        INSTALL
    }

    /** Append records after the log end, and fsync them soon (group commit): answered by AppendDurable. */
    record Append(List<Record> records) implements ReplicaEffect {
        public Append {
            records = List.copyOf(records);
        }
    }

    /** Drop every record at {@code from} and beyond: a divergent or unconfirmed suffix. */
    record Truncate(long from) implements ReplicaEffect {}

    /** Make the log durable as it is (after a truncation that appended nothing): answered by AppendDurable. */
    record Flush() implements ReplicaEffect {}

    /** fsync the log, then durably record the sealed epoch: answered by SealPersisted. */
    record PersistSeal(Epoch epoch) implements ReplicaEffect {}

    /** Whole segments below {@code below} may go: everything there is settled and no protected follower needs it. */
    record Discard(long below) implements ReplicaEffect {}

    /** Replace the log by an empty one that starts at {@code start} with {@code history} (a reseed). */
    record Reseed(long start, EpochHistory history) implements ReplicaEffect {}

    /** Read records {@code from..to} (inclusive): answered by LogRead. */
    record ReadLog(ReadPurpose purpose, NodeId peer, long from, long to) implements ReplicaEffect {}

    /** Send a message to the replica of the same object on {@code to}. */
    record Send(NodeId to, PeerMessage message) implements ReplicaEffect {
        public Send {
            Objects.requireNonNull(to, "to");
            Objects.requireNonNull(message, "message");
        }
    }

    /** Report a durable seal to the controller. */
    record ReplySealed(NodeId controller, Epoch epoch, SealReply reply) implements ReplicaEffect {}

    /** Report to the controller that this replica holds the recovery point of {@code epoch} durably (or caught up). */
    record ReplyInstalled(NodeId controller, Epoch epoch) implements ReplicaEffect {}

    /**
     * Report to the controller that the members of {@code epoch} left without the leaving {@code follower} hold every
     * record this owner confirmed: it may leave E.
     */
    record ReplyDropped(NodeId controller, Epoch epoch, NodeId follower) implements ReplicaEffect {}

    /** The publish is committed at {@code offset}: confirm it to its publisher. */
    record Confirm(PublishId id, long offset) implements ReplicaEffect {}

    /** The publish was not admitted; its sender re-sends it when the assignment changes. */
    record Refuse(PublishId id, String reason) implements ReplicaEffect {}

    /**
     * The commit offset of {@code epoch} advanced to {@code upTo}: the queue may take records up to it, and hand them to
     * consumers while {@link Replica#mayDeliver} holds.
     */
    record Deliverable(Epoch epoch, long upTo) implements ReplicaEffect {}
}
