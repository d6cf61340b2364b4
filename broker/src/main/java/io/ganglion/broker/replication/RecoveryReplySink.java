package io.ganglion.broker.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.SealReply;

/**
 * Where a {@link ReplicaHost} sends its answers to the controller's recovery requests. In production the {@link
 * ReplicationRouter}: a peer frame to the controller's broker, or straight to the local controller. Called on the
 * host's shard thread; must not block.
 */
public interface RecoveryReplySink {
    /** Answers nothing: a copy alone (a classic queue), which no controller asks. */
    RecoveryReplySink NONE = new RecoveryReplySink() {
        @Override
        public void sealed(NodeId controller, ObjectId object, Epoch epoch, SealReply reply) {}

        @Override
        public void installed(NodeId controller, ObjectId object, Epoch epoch, NodeId node) {}

        @Override
        public void dropped(NodeId controller, ObjectId object, Epoch epoch, NodeId node, NodeId follower) {}
    };

    /** The replica durably sealed {@code epoch} (recovery step 1): its log end and durable offset. */
    void sealed(NodeId controller, ObjectId object, Epoch epoch, SealReply reply);

    /** The replica durably holds the recovery point of {@code epoch}, or caught up with its owner. */
    void installed(NodeId controller, ObjectId object, Epoch epoch, NodeId node);

    /** The owner {@code node} of {@code epoch} answers a drop: the members left without {@code follower} suffice. */
    void dropped(NodeId controller, ObjectId object, Epoch epoch, NodeId node, NodeId follower);
}
