package io.ganglion.coordination;

import java.util.List;
import java.util.Objects;

/**
 * One entry of an object's accepted history in the metadata log. A history reads:
 *
 * <pre>
 *   Created
 *   RecoveryPending(1, members)          the first epoch is a recovery from nothing: no seals needed
 *   RecoveryPointChosen(1, EMPTY)
 *   MemberInstalled(1, n) ...            at least W, the owner among them
 *   Activated(1)
 *   MemberInstalled(1, n) ...            late members catch up; all installed = enrolled
 *   FollowerAdded(1, n)                  a follower joins the activated epoch, not installed: it catches up
 *   MemberInstalled(1, n)                and is counted from here on
 *   FollowerLeaving(1, n)                a follower lost past the hold: the owner stops counting it, E keeps it
 *   FollowerDropped(1, n)                the owner proved E without n holds every confirmed record: n leaves E
 *   RecoveryPending(2, members)          an unproven change: the committed assignment stays beside it
 *   SealReceived(1, reply) ...           at least R = |E| - W + 1 from E of epoch 1
 *   RecoveryPointChosen(2, point)
 *   MemberInstalled(2, n) ...
 *   Activated(2)
 * </pre>
 */
public sealed interface HistoryRecord {

    /** The object was declared. */
    record Created(ObjectSpec spec) implements HistoryRecord {
        public Created {
            Objects.requireNonNull(spec, "spec");
        }
    }

    /**
     * A proposed assignment of epoch committed + 1, kept beside the committed one until activated. A later pending
     * record for the same epoch replaces the proposal; seals and the recovery point stay.
     */
    record RecoveryPending(Epoch proposedEpoch, NodeId owner, List<NodeId> followers) implements HistoryRecord {
        public RecoveryPending {
            Objects.requireNonNull(proposedEpoch, "proposedEpoch");
            Objects.requireNonNull(owner, "owner");
            followers = List.copyOf(followers);
        }

        public Assignment proposed() {
            return new Assignment(proposedEpoch, owner, followers, false);
        }
    }

    /** A member of the committed epoch's E durably sealed that epoch and reported its log end. */
    record SealReceived(Epoch sealedEpoch, SealReply reply) implements HistoryRecord {
        public SealReceived {
            Objects.requireNonNull(sealedEpoch, "sealedEpoch");
            Objects.requireNonNull(reply, "reply");
        }
    }

    /** Inspect chose the recovery point: the highest log end among the seals; every confirmed record is at or below it. */
    record RecoveryPointChosen(Epoch proposedEpoch, LogPosition point) implements HistoryRecord {
        public RecoveryPointChosen {
            Objects.requireNonNull(proposedEpoch, "proposedEpoch");
            Objects.requireNonNull(point, "point");
        }
    }

    /** A member holds the recovery point durably (pending epoch) or caught up after activation (committed epoch). */
    record MemberInstalled(Epoch epoch, NodeId node) implements HistoryRecord {
        public MemberInstalled {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(node, "node");
        }
    }

    /**
     * A follower joins the committed, activated {@code epoch} without a new epoch: the learner-based way back to the
     * full number of copies (a broker that returned after the queue recovered without it). It enters E at once, not
     * installed: it catches up from the owner as a learner and counts for W only once {@link MemberInstalled}.
     *
     * <p>Safe without seals because E only grows: W stays, so R = |E| - W + 1 grows by one, and a seal set of R + 1 from
     * the larger E holds at least R members of the old E, which meet every confirm set of the old E. The new member
     * never counts for a confirm before its install commits, so no confirm set ever relied on it unknown to E.
     */
    record FollowerAdded(Epoch epoch, NodeId node) implements HistoryRecord {
        public FollowerAdded {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(node, "node");
        }
    }

    /**
     * A follower of the committed, activated {@code epoch} starts leaving it without a new epoch: the way a queue lets
     * go of a follower lost past the follower loss hold instead of fencing itself through a recovery. From the commit on
     * the owner no longer counts the follower for W, so every later confirm rests on E' = E without it; the follower
     * stays in E (and R stays as it was) until {@link FollowerDropped}, because records confirmed before the owner
     * learned of this may rest on it.
     *
     * <p>Accepted only while E' still holds W members: the owner goes on confirming from them.
     */
    record FollowerLeaving(Epoch epoch, NodeId node) implements HistoryRecord {
        public FollowerLeaving {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(node, "node");
        }
    }

    /**
     * A leaving follower leaves E of the committed {@code epoch}: the owner, which stopped counting it when {@link
     * FollowerLeaving} committed, reported that W members of E' are durable at or past its commit offset of that moment,
     * so every record confirmed under E is on W members of E', and any R' = |E'| - W + 1 of them that a later recovery
     * seals include one that holds it. The owner, the epoch and its sessions stay: nothing is fenced.
     */
    record FollowerDropped(Epoch epoch, NodeId node) implements HistoryRecord {
        public FollowerDropped {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(node, "node");
        }
    }

    /** The pending assignment becomes the committed, activated one. */
    record Activated(Epoch epoch) implements HistoryRecord {
        public Activated {
            Objects.requireNonNull(epoch, "epoch");
        }
    }
}
