package io.ganglion.coordination;

import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import java.util.List;

/** What promotion does with placement's proposal for one object. */
public sealed interface PromotionDecision {

    /** The proposal matches what the object has (committed or pending): nothing to write. */
    record Unchanged() implements PromotionDecision {}

    /**
     * The proposal only drops followers lost within the hold, and the rest still meet W: keep the assignment, epoch and
     * activation, write no pending recovery.
     */
    record Held(List<NodeId> lostFollowers) implements PromotionDecision {
        public Held {
            lostFollowers = List.copyOf(lostFollowers);
        }
    }

    /**
     * The proposal keeps owner and followers and only adds followers after them: they join the activated epoch
     * ({@link HistoryRecord.FollowerAdded}), with no recovery and no pause.
     */
    record AddFollowers(List<NodeId> followers) implements PromotionDecision {
        public AddFollowers {
            followers = List.copyOf(followers);
        }
    }

    /**
     * The proposal only drops followers lost past the hold (or leaving already), and the rest still meet W: these start
     * leaving the activated epoch ({@link HistoryRecord.FollowerLeaving}, then {@link HistoryRecord.FollowerDropped} on
     * the owner's word), with no recovery and no pause.
     */
    record DropFollowers(List<NodeId> followers) implements PromotionDecision {
        public DropFollowers {
            followers = List.copyOf(followers);
        }
    }

    /** Keep the committed assignment and write this pending recovery (a new one, or a new proposal for the pending). */
    record Recover(RecoveryPending pending) implements PromotionDecision {}
}
