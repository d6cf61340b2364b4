package io.ganglion.replication;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** What happens to a {@link Replica}: its broker's view changed, a client or peer spoke, storage finished, time passed. */
public sealed interface ReplicaEvent {

    /**
     * The broker's projected view holds an activated assignment of the object. {@code writeRequirement} is W of the
     * object's spec; {@code installed} the members installed in this epoch (the others catch up as learners and are
     * not counted until installed); {@code leaving} the followers leaving the epoch (never counted again). Sent again
     * when any of them changes.
     */
    record Assigned(
            Assignment assignment,
            int writeRequirement,
            Set<NodeId> installed,
            Set<NodeId> leaving,
            long retentionProtectMs)
            implements ReplicaEvent {
        public Assigned {
            Objects.requireNonNull(assignment, "assignment");
            installed = Set.copyOf(installed);
            leaving = Set.copyOf(leaving);
        }

        /** An assignment with no follower leaving. */
        public Assigned(Assignment assignment, int writeRequirement, Set<NodeId> installed, long retentionProtectMs) {
            this(assignment, writeRequirement, installed, Set.of(), retentionProtectMs);
        }
    }

    /** The object has no validated assignment in the broker's view (a recovery is pending), or this broker left it. */
    record Unassigned() implements ReplicaEvent {}

    /** A publish admitted under {@code epoch}, from this broker or forwarded by another one. */
    record PublishAdmitted(PublishId id, Epoch epoch, ByteBuffer body) implements ReplicaEvent {
        public PublishAdmitted {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(body, "body");
        }
    }

    /** The queue settled the messages at {@code offsets}: log one settle record (not confirmed to anyone). */
    record SettleAdmitted(long[] offsets) implements ReplicaEvent {
        public SettleAdmitted {
            if (offsets.length == 0) {
                throw new IllegalArgumentException("nothing settled");
            }
        }

        public SettleAdmitted(long offset) {
            this(new long[] {offset});
        }
    }

    /** The queue returned the messages at {@code offsets} after a delivery: log one returned record. */
    record ReturnAdmitted(long[] offsets) implements ReplicaEvent {
        public ReturnAdmitted {
            if (offsets.length == 0) {
                throw new IllegalArgumentException("nothing returned");
            }
        }
    }

    /** The queue dead-letters the messages at {@code offsets} at least once, for {@code reason}: log the decision. */
    record DeadLetterAdmitted(long[] offsets, int reason) implements ReplicaEvent {
        public DeadLetterAdmitted {
            if (offsets.length == 0) {
                throw new IllegalArgumentException("nothing dead-lettered");
            }
        }
    }

    /** Every message below {@code offset} is settled: the owner may discard below it (see retention). */
    record SettledLowWater(long offset) implements ReplicaEvent {}

    /** Storage: every record up to {@code offset} is durable. */
    record AppendDurable(long offset) implements ReplicaEvent {}

    /** Storage: the sealed epoch is durable, and so is every record appended before the seal. */
    record SealPersisted(Epoch epoch) implements ReplicaEvent {}

    /** Storage: the records a {@link ReplicaEffect.ReadLog} asked for (fewer if the log changed meanwhile). */
    record LogRead(ReplicaEffect.ReadPurpose purpose, NodeId peer, List<Record> records) implements ReplicaEvent {
        public LogRead {
            records = List.copyOf(records);
        }
    }

    /** A peer replica's message. */
    record Received(NodeId from, PeerMessage message) implements ReplicaEvent {}

    /** The controller asks for a seal of {@code epoch} (recovery, step 1). */
    record SealRequested(NodeId controller, Epoch epoch) implements ReplicaEvent {}

    /** The controller asks this replica to hold {@code point} for the proposed {@code epoch} (recovery, step 4). */
    record InstallRequested(NodeId controller, Epoch epoch, LogPosition point, List<NodeId> sources)
            implements ReplicaEvent {
        public InstallRequested {
            sources = List.copyOf(sources);
        }
    }

    /** The controller asks a member of the activated {@code epoch} that is not installed to catch up with the owner. */
    record CatchUpRequested(NodeId controller, Epoch epoch, NodeId owner) implements ReplicaEvent {}

    /**
     * The controller asks the owner of {@code epoch} to answer once the members left without the leaving {@code
     * follower} hold every record it confirmed.
     */
    record DropRequested(NodeId controller, Epoch epoch, NodeId follower) implements ReplicaEvent {}

    /** Time passed (the broker ticks every few tens of milliseconds). */
    record Tick() implements ReplicaEvent {}
}
