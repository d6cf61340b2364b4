package io.ganglion.coordination;

import java.util.List;

/**
 * What the controller asks a broker to do for a recovery. The broker answers with a seal reply, an install
 * acknowledgement or a drop acknowledgement, which the controller records in the metadata log; an unanswered request is sent again with backoff.
 */
public sealed interface RecoveryRequest {
    ObjectId object();

    NodeId node();

    /** Durably seal {@code epoch}, reply with the log end, then refuse appends of that epoch or earlier. */
    record Seal(ObjectId object, Epoch epoch, NodeId node) implements RecoveryRequest {}

    /**
     * Truncate any suffix that diverges from {@code point} (by the epoch history), copy what is missing up to {@code
     * point} from one of {@code sources}, fsync, and acknowledge as installed for {@code epoch}.
     */
    record Install(ObjectId object, Epoch epoch, NodeId node, LogPosition point, List<NodeId> sources)
            implements RecoveryRequest {
        public Install {
            sources = List.copyOf(sources);
        }
    }

    /**
     * To the owner of the activated {@code epoch}, {@code node}: answer once every record you confirmed before you
     * stopped counting the leaving {@code follower} is durable on W of the members left (they hold everything confirmed
     * without it), so it may leave E.
     */
    record Drop(ObjectId object, Epoch epoch, NodeId node, NodeId follower) implements RecoveryRequest {}

    /** Catch up with {@code owner} of the activated {@code epoch} as a learner, then acknowledge as installed. */
    record CatchUp(ObjectId object, Epoch epoch, NodeId node, NodeId owner) implements RecoveryRequest {}
}
