package io.ganglion.coordination;

import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import io.ganglion.coordination.PromotionDecision.AddFollowers;
import io.ganglion.coordination.PromotionDecision.DropFollowers;
import io.ganglion.coordination.PromotionDecision.Held;
import io.ganglion.coordination.PromotionDecision.Recover;
import io.ganglion.coordination.PromotionDecision.Unchanged;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Turns placement's proposal into what the metadata log records: nothing, a held follower, followers that leave or
 * join the activated epoch, or a pending recovery.
 *
 * <p>The follower loss hold. A queue that only lost followers which stopped heartbeating less than the hold ago keeps
 * its current assignment instead of starting a recovery, as long as it still meets its write requirement without them.
 * This is safe because neither quantity recovery depends on changes: the held follower keeps its slot in E, so E, W and
 * R = |E| - W + 1 stay as they were and every seal set still meets every confirm set; and W comes from the unchanged
 * assignment, so a confirm still needs W durable copies, now drawn from the remaining ones.
 *
 * <p>After the hold. A follower still lost when its hold ends leaves the activated epoch in two steps instead of a new
 * epoch ({@link #lostFollowersLeaving}): {@link HistoryRecord.FollowerLeaving} stops the owner counting it, and {@link
 * HistoryRecord.FollowerDropped}, once the owner reports that the members left hold every record it confirmed, takes it
 * out of E. The owner keeps confirming throughout; a replacement joins afterwards as a learner.
 */
public final class Promotion {
    private Promotion() {}

    /**
     * Promotion for one object: {@link #lostFollowersHeld} first, then {@link #lostFollowersLeaving}, then {@link
     * #followersJoining}, then {@link #retainUnprovenAssignments}.
     */
    public static PromotionDecision decide(AcceptedHistory history, Proposal proposal, FollowerLossHold hold) {
        List<NodeId> held = lostFollowersHeld(history, proposal, hold::isLostWithinHold);
        if (held.isEmpty()) {
            Optional<List<NodeId>> leaving = lostFollowersLeaving(history, proposal, hold);
            if (leaving.isPresent()) {
                return leaving.get().isEmpty() ? new Unchanged() : new DropFollowers(leaving.get());
            }
        }
        List<NodeId> joining = held.isEmpty() ? followersJoining(history, proposal) : List.of();
        if (!joining.isEmpty()) {
            return new AddFollowers(joining);
        }
        Optional<RecoveryPending> pending = retainUnprovenAssignments(history, proposal, unused -> !held.isEmpty());
        if (pending.isPresent()) {
            return new Recover(pending.get());
        }
        return held.isEmpty() ? new Unchanged() : new Held(held);
    }

    /**
     * The followers a proposal drops, if it only drops followers lost within the hold; otherwise an empty list.
     *
     * <p>All of these must hold: the object is a queue, activated and enrolled, with no recovery pending; W >= 2; the
     * proposal keeps the owner; the followers left number at least W - 1; and every dropped follower is lost within the
     * hold by {@code lostWithinHold}. Followers the proposal adds, replacements for the lost ones, wait for the hold to
     * end: adding them now would need a recovery.
     */
    public static List<NodeId> lostFollowersHeld(
            AcceptedHistory history, Proposal proposal, Predicate<NodeId> lostWithinHold) {
        ObjectSpec spec = history.spec();
        Optional<Assignment> active = history.validate();
        if (spec.kind() != ObjectKind.QUEUE || active.isEmpty() || !history.enrolled()) {
            return List.of();
        }
        Assignment current = active.get();
        int w = spec.writeRequirement();
        if (w < 2 || !proposal.owner().equals(current.owner())) {
            return List.of();
        }
        List<NodeId> dropped = new ArrayList<>();
        int left = 0;
        for (NodeId follower : current.followers()) {
            if (proposal.followers().contains(follower)) {
                left++;
            } else {
                dropped.add(follower);
            }
        }
        if (dropped.isEmpty() || left < w - 1) {
            return List.of();
        }
        for (NodeId follower : dropped) {
            if (!lostWithinHold.test(follower)) {
                return List.of();
            }
        }
        return List.copyOf(dropped);
    }

    /**
     * The followers that should start leaving the activated epoch, if the followers a proposal drops may all leave it
     * without a new epoch (an empty list when those are leaving already, or some are still within the hold); empty
     * when a recovery is needed.
     *
     * <p>As for {@link #lostFollowersHeld}: the object is a queue, activated and enrolled, with no recovery pending; W
     * >= 2; the proposal keeps the owner; and the followers left, not counting those leaving, number at least W - 1.
     * Every follower the proposal drops is leaving already or lost ({@link FollowerLossHold#isLost}: down, not
     * draining); the lost ones past their hold start leaving. Followers the proposal adds join once the drop is done
     * ({@link #followersJoining}).
     */
    public static Optional<List<NodeId>> lostFollowersLeaving(
            AcceptedHistory history, Proposal proposal, FollowerLossHold hold) {
        ObjectSpec spec = history.spec();
        Optional<Assignment> active = history.validate();
        if (spec.kind() != ObjectKind.QUEUE || active.isEmpty() || !history.enrolled()) {
            return Optional.empty();
        }
        Assignment current = active.get();
        int w = spec.writeRequirement();
        if (w < 2 || !proposal.owner().equals(current.owner())) {
            return Optional.empty();
        }
        Set<NodeId> alreadyLeaving = history.leavingInCommitted();
        List<NodeId> starting = new ArrayList<>();
        int dropped = 0;
        int left = 0;
        for (NodeId follower : current.followers()) {
            if (proposal.followers().contains(follower) && !alreadyLeaving.contains(follower)) {
                left++;
            } else if (!proposal.followers().contains(follower)) {
                dropped++;
                if (alreadyLeaving.contains(follower)) {
                    continue;
                }
                if (!hold.isLost(follower)) {
                    return Optional.empty();
                }
                if (!hold.isLostWithinHold(follower)) {
                    starting.add(follower);
                }
            }
        }
        if (dropped == 0 || left < w - 1) {
            return Optional.empty();
        }
        return Optional.of(List.copyOf(starting));
    }

    /**
     * The followers a proposal adds to the activated epoch, if that is all it changes; otherwise an empty list.
     *
     * <p>The object is activated with no recovery pending, the proposal keeps the owner and every follower in their
     * order, and it only appends followers (placement appends copies it adds after the ones it keeps). E grows, which
     * never needs a seal (see {@link HistoryRecord.FollowerAdded}); only a change that drops or moves a member needs a
     * new epoch. This is how a queue takes back a broker that returned after it recovered without it: a new epoch would
     * fence the healthy queue for a round of seals and installs.
     */
    public static List<NodeId> followersJoining(AcceptedHistory history, Proposal proposal) {
        Optional<Assignment> active = history.validate();
        if (active.isEmpty() || !proposal.owner().equals(active.get().owner())) {
            return List.of();
        }
        List<NodeId> kept = active.get().followers();
        List<NodeId> proposed = proposal.followers();
        if (proposed.size() <= kept.size()
                || !proposed.subList(0, kept.size()).equals(kept)
                || proposal.members().size() > history.spec().copies()) {
            return List.of();
        }
        return List.copyOf(proposed.subList(kept.size(), proposed.size()));
    }

    /**
     * The pending recovery to write for a proposal, or empty when the object keeps what it has.
     *
     * <ul>
     *   <li>Never activated and nothing pending: the first epoch, as a recovery from nothing.
     *   <li>A recovery pending: a new proposal for the same proposed epoch if placement now wants other members (a
     *       proposed member was lost); seals and the recovery point stay valid, since they concern the committed epoch.
     *   <li>Activated: any change of members is unproven and becomes a pending recovery with epoch + 1, unless {@code
     *       held} says the proposal only drops followers lost within the hold.
     * </ul>
     */
    public static Optional<RecoveryPending> retainUnprovenAssignments(
            AcceptedHistory history, Proposal proposal, Predicate<Proposal> held) {
        Optional<PendingRecovery> pending = history.pending();
        if (pending.isPresent()) {
            Assignment proposed = pending.get().proposed();
            return proposal.sameMembersAs(proposed)
                    ? Optional.empty()
                    : Optional.of(new RecoveryPending(proposed.epoch(), proposal.owner(), proposal.followers()));
        }
        Optional<Assignment> committed = history.committed();
        if (committed.isPresent() && (proposal.sameMembersAs(committed.get()) || held.test(proposal))) {
            return Optional.empty();
        }
        return Optional.of(
                new RecoveryPending(history.committedEpoch().next(), proposal.owner(), proposal.followers()));
    }
}
