package io.ganglion.coordination;

import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A recovery in progress: the proposed assignment (epoch committed + 1, not activated), the seals received from the
 * committed epoch's E, the recovery point once inspected, and the proposed members installed so far.
 */
public record PendingRecovery(
        Assignment proposed, SortedMap<NodeId, SealReply> seals, LogPosition recoveryPoint, Set<NodeId> installed) {

    public PendingRecovery {
        seals = Collections.unmodifiableSortedMap(new TreeMap<>(seals));
        installed = Collections.unmodifiableSet(new TreeSet<>(installed));
    }

    static PendingRecovery start(Assignment proposed) {
        return new PendingRecovery(proposed, new TreeMap<>(), null, Set.of());
    }

    public Optional<LogPosition> point() {
        return Optional.ofNullable(recoveryPoint);
    }

    /** The highest log end among the seals received, or the empty position when there are none. */
    public LogPosition highestSealedEnd() {
        LogPosition highest = LogPosition.EMPTY;
        for (SealReply reply : seals.values()) {
            if (reply.logEnd().compareTo(highest) > 0) {
                highest = reply.logEnd();
            }
        }
        return highest;
    }

    /** Sealed replicas that hold the recovery point: same epoch at their end, at least as long. */
    public List<NodeId> sourcesOf(LogPosition point) {
        return seals.values().stream()
                .filter(reply -> reply.logEnd().epoch().equals(point.epoch())
                        && reply.logEnd().offset() >= point.offset())
                .map(SealReply::node)
                .toList();
    }

    /** Proposed members installed, the proposed owner first if it is among them. */
    public int installedMembers() {
        int count = 0;
        for (NodeId member : proposed.members()) {
            if (installed.contains(member)) {
                count++;
            }
        }
        return count;
    }

    PendingRecovery withProposal(Assignment next) {
        Set<NodeId> stillMembers = new TreeSet<>(installed);
        stillMembers.retainAll(next.members());
        return new PendingRecovery(next, seals, recoveryPoint, stillMembers);
    }

    PendingRecovery withSeal(SealReply reply) {
        TreeMap<NodeId, SealReply> next = new TreeMap<>(seals);
        next.put(reply.node(), reply);
        return new PendingRecovery(proposed, next, recoveryPoint, installed);
    }

    PendingRecovery withPoint(LogPosition point) {
        return new PendingRecovery(proposed, seals, point, installed);
    }

    PendingRecovery withInstalled(NodeId node) {
        TreeSet<NodeId> next = new TreeSet<>(installed);
        next.add(node);
        return new PendingRecovery(proposed, seals, recoveryPoint, next);
    }
}
