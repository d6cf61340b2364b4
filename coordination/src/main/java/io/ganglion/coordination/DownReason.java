package io.ganglion.coordination;

/** Why the controller took a node out of the live set. */
public enum DownReason {
    /** No heartbeat within {@code liveness.expiry_ms}. */
    LIVENESS_EXPIRY,
    /** Its connection to the controller closed and did not come back within {@code liveness.eager_failover_ms}. */
    EAGER_FAILOVER
}
