package io.ganglion.coordination;

/**
 * Whether a follower counts as lost within the hold: it is down, through liveness expiry or eager failover, it was not
 * draining, and its last heartbeat is less than {@code replication.follower_loss_hold_ms} ago. A hold of 0 protects
 * nobody. Built by the controller every tick from the live set and the runtime settings.
 */
public record FollowerLossHold(LiveSet liveSet, long holdMs, long nowMs) {
    public FollowerLossHold {
        if (holdMs < 0) {
            throw new IllegalArgumentException("hold must not be negative: " + holdMs);
        }
    }

    /**
     * True when {@code follower} stopped heartbeating less than the hold ago and was not leaving. A live follower, even
     * a draining one, is not lost; neither is a node the live set never saw.
     */
    public boolean isLostWithinHold(NodeId follower) {
        return liveSet.node(follower)
                .filter(state -> !state.live() && !state.draining())
                .filter(state -> nowMs - state.lastHeartbeatMs() < holdMs)
                .isPresent();
    }

    /** True when {@code follower} is down and was not leaving (draining), however long ago it stopped heartbeating. */
    public boolean isLost(NodeId follower) {
        return liveSet.node(follower)
                .filter(state -> !state.live() && !state.draining())
                .isPresent();
    }

    /** When the hold of {@code follower} ends: its last heartbeat plus the hold. */
    public long endsAtMs(NodeId follower) {
        return liveSet.node(follower).map(NodeState::lastHeartbeatMs).orElse(nowMs) + holdMs;
    }
}
