package io.ganglion.broker.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.replication.PublishId;

/**
 * What a {@link ReplicaHost} tells the queue layer of its object: publishes confirmed or refused, how far the log may
 * be delivered, and a storage failure. Called on the host's shard thread, in the order the replica decided; an
 * implementation must not block and must not call back into the host synchronously expecting an answer (events it
 * delivers are queued behind the current one).
 */
public interface ReplicaListener {

    /** The publish is committed at {@code offset} (durable on W copies): confirm it to its publisher. */
    void confirmed(PublishId id, long offset);

    /**
     * The publish was not admitted, or its outcome is unknown here (the host lost the owner role before it committed,
     * or storage failed): its sender re-sends it with the same id when the assignment changes, and the owner then
     * finds it in the log or appends it.
     */
    void refused(PublishId id, String reason);

    /** The commit offset of {@code epoch} advanced to {@code upTo}: records up to it may be delivered. */
    void deliverable(Epoch epoch, long upTo);

    /**
     * Storage failed under the host: it refused every outstanding publish, and from now on refuses publishes and drops
     * every other event. Close it and open a new host from disk to go on.
     */
    default void failed(Throwable cause) {}

    /**
     * The replica may have taken or lost a role (owner or follower of an epoch): after an assignment, a seal, an
     * install, or an epoch taken from an owner's stream.
     */
    default void rolesMayHaveChanged() {}

    /** A listener that ignores everything: for a follower-only host, or tests. */
    ReplicaListener NONE = new ReplicaListener() {
        @Override
        public void confirmed(PublishId id, long offset) {}

        @Override
        public void refused(PublishId id, String reason) {}

        @Override
        public void deliverable(Epoch epoch, long upTo) {}
    };
}
