package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The steps of a recovery from epoch e to e + 1, read off an object's accepted history.
 *
 * <pre>
 *   seal      every member of E(e) not sealed yet          until R = |E| - W + 1 seals are in
 *   inspect   the recovery point: the highest sealed end    once R seals are in
 *   install   every proposed member not installed yet       once the point is chosen; a member whose seal
 *                                                           showed it durably ends exactly at the point is
 *                                                           installed by that seal
 *   activate  epoch e + 1                                   once W proposed members, the owner among them, are installed
 * </pre>
 *
 * Fewer than R reachable members means waiting: recovery never elects an owner without proof that it has every
 * confirmed record.
 */
public final class RecoveryPlanner {
    private RecoveryPlanner() {}

    /** Members of the committed epoch's E that have not sealed yet; empty when no recovery is pending. */
    public static List<NodeId> sealTargets(AcceptedHistory history) {
        Optional<PendingRecovery> pending = history.pending();
        if (pending.isEmpty() || pending.get().point().isPresent()) {
            return List.of();
        }
        List<NodeId> targets = new ArrayList<>();
        for (NodeId member : history.eligibleSet().members()) {
            if (!pending.get().seals().containsKey(member)) {
                targets.add(member);
            }
        }
        return List.copyOf(targets);
    }

    /** True when R seals of the committed epoch are in. */
    public static boolean sealsSufficient(AcceptedHistory history) {
        return history.pending()
                .map(pending -> pending.seals().size() >= history.recoveryThreshold())
                .orElse(false);
    }

    /**
     * The recovery point to choose: the highest log end among the seals, once R are in and none has been chosen. For an
     * object never activated it is the empty log.
     */
    public static Optional<LogPosition> recoveryPoint(AcceptedHistory history) {
        Optional<PendingRecovery> pending = history.pending();
        if (pending.isEmpty() || pending.get().point().isPresent() || !sealsSufficient(history)) {
            return Optional.empty();
        }
        return Optional.of(pending.get().highestSealedEnd());
    }

    /** Proposed members still to install, owner first; empty until the recovery point is chosen. */
    public static List<NodeId> installTargets(AcceptedHistory history) {
        Optional<PendingRecovery> pending = history.pending();
        if (pending.isEmpty() || pending.get().point().isEmpty()) {
            return List.of();
        }
        List<NodeId> targets = new ArrayList<>();
        for (NodeId member : pending.get().proposed().members()) {
            if (!pending.get().installed().contains(member)) {
                targets.add(member);
            }
        }
        return List.copyOf(targets);
    }

    /**
     * Proposed members not installed yet whose seal already shows what an install would make sure of: the log ends
     * exactly at the recovery point (same epoch and offset, nothing beyond it to cut), durably, and is sealed at the
     * committed epoch. A sealed replica's log does not change until an owner of a later epoch streams to it, so the
     * install request would only copy nothing, cut nothing, force and answer; counting the seal saves that round
     * trip. Empty until the point is chosen.
     */
    public static List<NodeId> installedBySeal(AcceptedHistory history) {
        Optional<PendingRecovery> pending = history.pending();
        if (pending.isEmpty() || pending.get().point().isEmpty()) {
            return List.of();
        }
        LogPosition point = pending.get().recoveryPoint();
        List<NodeId> members = new ArrayList<>();
        for (NodeId member : pending.get().proposed().members()) {
            SealReply seal = pending.get().seals().get(member);
            if (!pending.get().installed().contains(member)
                    && seal != null
                    && seal.logEnd().equals(point)
                    && seal.durableOffset() >= point.offset()) {
                members.add(member);
            }
        }
        return List.copyOf(members);
    }

    /** Members of the activated epoch that are not installed yet: they catch up as learners. */
    public static List<NodeId> catchUpTargets(AcceptedHistory history) {
        Optional<Assignment> active = history.validate();
        if (active.isEmpty()) {
            return List.of();
        }
        List<NodeId> targets = new ArrayList<>();
        for (NodeId member : active.get().members()) {
            if (!history.installedInCommitted().contains(member)) {
                targets.add(member);
            }
        }
        return List.copyOf(targets);
    }

    /** True when the pending epoch may be activated: R seals, a recovery point, W installed members with the owner. */
    public static boolean activationAllowed(AcceptedHistory history) {
        return history.pending()
                .map(pending ->
                        history.activationRefusal(pending.proposed().epoch()).isEmpty())
                .orElse(false);
    }
}
