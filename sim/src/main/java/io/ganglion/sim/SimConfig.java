package io.ganglion.sim;

import java.util.EnumSet;
import java.util.Set;

/**
 * One simulated cluster: its seed, how many brokers, how often the network drops a message, and the bugs to inject
 * (none in a healthy run).
 */
public record SimConfig(long seed, int nodes, double dropRate, Set<Bug> bugs) {
    public SimConfig {
        if (nodes < 1 || nodes > 9) {
            throw new IllegalArgumentException("nodes must be 1 to 9: " + nodes);
        }
        if (dropRate < 0 || dropRate >= 1) {
            throw new IllegalArgumentException("drop rate must be in [0, 1): " + dropRate);
        }
        bugs = bugs.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(bugs));
    }

    public static SimConfig of(long seed, int nodes) {
        return new SimConfig(seed, nodes, 0.0, Set.of());
    }

    public SimConfig withDropRate(double rate) {
        return new SimConfig(seed, nodes, rate, bugs);
    }

    public SimConfig withBug(Bug bug) {
        EnumSet<Bug> next = bugs.isEmpty() ? EnumSet.noneOf(Bug.class) : EnumSet.copyOf(bugs);
        next.add(bug);
        return new SimConfig(seed, nodes, dropRate, next);
    }

    public boolean has(Bug bug) {
        return bugs.contains(bug);
    }
}
