package io.ganglion.broker.replication;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.ReplicationConfig;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * What every {@link ReplicaHost} of one broker shares: who it is, the data path tuning, the tick period and the clock.
 *
 * @param self this broker's node id
 * @param incarnation this process's incarnation: a follower that reports a new one is suspended as a learner
 * @param config flow control, fetch sizes and timers of the state machines
 * @param tickMs how often each host ticks its replica (resends, progress reports, retention, install retries)
 * @param clockMs the clock handed to the state machines, in milliseconds
 */
public record ReplicationContext(
        NodeId self, Incarnation incarnation, ReplicationConfig config, long tickMs, LongSupplier clockMs) {
    public static final long DEFAULT_TICK_MS = 20;

    /** A broker's context with the default tuning and tick. */
    public static ReplicationContext withDefaults(NodeId self, Incarnation incarnation, LongSupplier clockMs) {
        return new ReplicationContext(self, incarnation, ReplicationConfig.defaults(), DEFAULT_TICK_MS, clockMs);
    }

    public ReplicationContext {
        Objects.requireNonNull(self, "self");
        Objects.requireNonNull(incarnation, "incarnation");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(clockMs, "clockMs");
        if (tickMs < 1) {
            throw new IllegalArgumentException("tick must be at least 1 ms: " + tickMs);
        }
    }
}
