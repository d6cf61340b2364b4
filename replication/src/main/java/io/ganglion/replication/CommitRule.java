package io.ganglion.replication;

import java.util.Arrays;

/**
 * The commit rule: the commit offset is the W-th highest durable offset over the eligible set E, the owner counted.
 * Members that never reported (a held follower, a learner) are simply absent, so they never hold the commit back;
 * with fewer than W reports nothing is committed.
 */
public final class CommitRule {
    private CommitRule() {}

    /** The W-th highest of {@code durable}, or -1 when fewer than W members reported. */
    public static long commitOffset(long[] durable, int writeRequirement) {
        if (writeRequirement < 1) {
            throw new IllegalArgumentException("write requirement must be at least 1: " + writeRequirement);
        }
        if (durable.length < writeRequirement) {
            return -1;
        }
        long[] sorted = durable.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length - writeRequirement];
    }
}
