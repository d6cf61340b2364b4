package io.ganglion.sim;

import io.ganglion.queues.QueueMachine;
import java.util.EnumSet;
import java.util.Set;

/**
 * One simulated cluster: its seed, how many brokers, how often the network drops a message, the message TTL of its
 * queues ({@link #NO_TTL}: none), and the bugs to inject (none in a healthy run).
 */
public record SimConfig(long seed, int nodes, double dropRate, long messageTtlMs, Set<Bug> bugs) {
    /** The message TTL of queues that have none: their messages never expire. */
    public static final long NO_TTL = -1;

    public SimConfig {
        if (nodes < 1 || nodes > 9) {
            throw new IllegalArgumentException("nodes must be 1 to 9: " + nodes);
        }
        if (dropRate < 0 || dropRate >= 1) {
            throw new IllegalArgumentException("drop rate must be in [0, 1): " + dropRate);
        }
        if (messageTtlMs < NO_TTL) {
            throw new IllegalArgumentException("message TTL must be NO_TTL or at least 0: " + messageTtlMs);
        }
        bugs = bugs.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(bugs));
    }

    public static SimConfig of(long seed, int nodes) {
        return new SimConfig(seed, nodes, 0.0, NO_TTL, Set.of());
    }

    public SimConfig withDropRate(double rate) {
        return new SimConfig(seed, nodes, rate, messageTtlMs, bugs);
    }

    /** Every queue's messages expire {@code ttlMs} after their owner admitted them ({@code x-message-ttl}). */
    public SimConfig withMessageTtl(long ttlMs) {
        return new SimConfig(seed, nodes, dropRate, ttlMs, bugs);
    }

    public SimConfig withBug(Bug bug) {
        EnumSet<Bug> next = bugs.isEmpty() ? EnumSet.noneOf(Bug.class) : EnumSet.copyOf(bugs);
        next.add(bug);
        return new SimConfig(seed, nodes, dropRate, messageTtlMs, next);
    }

    public boolean has(Bug bug) {
        return bugs.contains(bug);
    }

    public boolean hasMessageTtl() {
        return messageTtlMs != NO_TTL;
    }

    /**
     * When a queue message admitted by its owner at {@code admittedMs} expires, by the simulated clock ({@link
     * QueueMachine#NEVER}: never): what the broker's {@code ReplicatedQueue.expiresAtMs} computes from the admission
     * time and the queue's TTL.
     */
    public long expiresAtMs(long admittedMs) {
        return hasMessageTtl() ? admittedMs + messageTtlMs : QueueMachine.NEVER;
    }
}
