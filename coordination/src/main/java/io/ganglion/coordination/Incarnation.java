package io.ganglion.coordination;

/**
 * A random 64-bit id a broker draws at each process start: its heartbeat label. A follower that comes back with the same
 * incarnation only lost its network; one with a new incarnation restarted and lost whatever it had not fsynced.
 */
public record Incarnation(long value) {
    @Override
    public String toString() {
        return Long.toHexString(value);
    }
}
