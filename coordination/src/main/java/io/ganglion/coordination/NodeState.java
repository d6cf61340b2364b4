package io.ganglion.coordination;

import java.util.Objects;
import java.util.Optional;

/**
 * One node as the live set knows it.
 *
 * @param lastHeartbeatMs the time of the last heartbeat the controller saw: for a down node, since when it is silent
 * @param downReason why the node is down; absent while it is live
 * @param draining the node is alive but leaving: placement moves its copies away and the hold never protects them
 */
public record NodeState(
        NodeId node,
        boolean live,
        long lastHeartbeatMs,
        DownReason downReason,
        Incarnation incarnation,
        boolean draining) {

    public NodeState {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(incarnation, "incarnation");
        if (live != (downReason == null)) {
            throw new IllegalArgumentException("a live node has no down reason and a down node has one: " + node);
        }
    }

    public static NodeState live(NodeId node, Incarnation incarnation, long lastHeartbeatMs, boolean draining) {
        return new NodeState(node, true, lastHeartbeatMs, null, incarnation, draining);
    }

    public Optional<DownReason> reason() {
        return Optional.ofNullable(downReason);
    }

    /** Live and not draining: a node that may receive new copies. */
    public boolean placeable() {
        return live && !draining;
    }

    public NodeState down(DownReason reason) {
        return new NodeState(node, false, lastHeartbeatMs, Objects.requireNonNull(reason), incarnation, draining);
    }

    /**
     * Down, silent since {@code silentSinceMs} at the earliest: the last sign of life the controller has, which may be
     * later than the last heartbeat it recorded (a connection open until then; a controller that took over then).
     */
    public NodeState down(DownReason reason, long silentSinceMs) {
        return new NodeState(
                node,
                false,
                Math.max(lastHeartbeatMs, silentSinceMs),
                Objects.requireNonNull(reason),
                incarnation,
                draining);
    }

    /** Same status, incarnation and draining flag: what is committed to the metadata log, heartbeat times aside. */
    public boolean sameStatus(NodeState other) {
        return live == other.live
                && Objects.equals(downReason, other.downReason)
                && incarnation.equals(other.incarnation)
                && draining == other.draining;
    }
}
