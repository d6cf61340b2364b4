package io.ganglion.coordination;

import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The members whose copies may hold confirmed records of the current epoch: owner and followers, held followers
 * included, learners never.
 *
 * <p>Recovery needs {@link #recoveryThreshold R} = |E| - W + 1 seals from this set. Since R + W > |E|, every set of R
 * sealed replicas shares at least one replica with every set of W replicas that confirmed a record, so a recovery that
 * inspects R seals sees every confirmed record.
 */
public record EligibleSet(SortedSet<NodeId> members) {
    public EligibleSet {
        members = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(members));
    }

    public static EligibleSet of(List<NodeId> members) {
        return new EligibleSet(new TreeSet<>(members));
    }

    public static EligibleSet empty() {
        return new EligibleSet(new TreeSet<>());
    }

    public int size() {
        return members.size();
    }

    public boolean contains(NodeId node) {
        return members.contains(node);
    }

    /**
     * R = |E| - W + 1, the seals recovery needs before it may inspect. An empty set (an object never activated) needs
     * none: there is no earlier epoch that could hold a confirmed record.
     *
     * @throws IllegalArgumentException when W is below 1
     */
    public int recoveryThreshold(int writeRequirement) {
        if (writeRequirement < 1) {
            throw new IllegalArgumentException("write requirement must be at least 1: " + writeRequirement);
        }
        return Math.max(0, members.size() - writeRequirement + 1);
    }
}
