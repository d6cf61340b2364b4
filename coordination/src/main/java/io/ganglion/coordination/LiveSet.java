package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The nodes the controller knows, each live or down, since when, why, with its incarnation and draining flag.
 *
 * <p>Immutable: every transition returns a new live set. The controller runtime feeds it heartbeats and connection
 * losses; the tick reads it.
 */
public record LiveSet(SortedMap<NodeId, NodeState> nodes) {
    public LiveSet {
        nodes = Collections.unmodifiableSortedMap(new TreeMap<>(nodes));
    }

    public static LiveSet empty() {
        return new LiveSet(new TreeMap<>());
    }

    public static LiveSet of(NodeState... states) {
        TreeMap<NodeId, NodeState> nodes = new TreeMap<>();
        for (NodeState state : states) {
            nodes.put(state.node(), state);
        }
        return new LiveSet(nodes);
    }

    public Optional<NodeState> node(NodeId node) {
        return Optional.ofNullable(nodes.get(node));
    }

    public boolean isLive(NodeId node) {
        NodeState state = nodes.get(node);
        return state != null && state.live();
    }

    public boolean isPlaceable(NodeId node) {
        NodeState state = nodes.get(node);
        return state != null && state.placeable();
    }

    /** Live, non-draining nodes in id order. */
    public List<NodeId> placeableNodes() {
        List<NodeId> placeable = new ArrayList<>();
        for (NodeState state : nodes.values()) {
            if (state.placeable()) {
                placeable.add(state.node());
            }
        }
        return List.copyOf(placeable);
    }

    /** A heartbeat from {@code node}: it is live from now, with this incarnation and draining flag. */
    public LiveSet heartbeat(NodeId node, Incarnation incarnation, boolean draining, long nowMs) {
        return with(NodeState.live(node, incarnation, nowMs, draining));
    }

    /**
     * The connection to {@code node} closed and did not come back within the eager failover delay. The node counts as
     * silent since {@code nowMs} at the earliest: its connection was open until just now, and the heartbeat time this
     * live set holds may be far older (a controller that just took over has only the committed one, from when the node
     * last changed status; the follower loss hold is measured from this time).
     */
    public LiveSet eagerFailover(NodeId node, long nowMs) {
        NodeState state = nodes.get(node);
        if (state == null || !state.live()) {
            return this;
        }
        return with(state.down(DownReason.EAGER_FAILOVER, nowMs));
    }

    /**
     * Takes out every live node whose last heartbeat is {@code expiryMs} or more ago. A controller that has watched
     * heartbeats only since {@code watchingSinceMs} (its leadership began then, or it stood still until then) waits one
     * expiry period before declaring anyone down: it has not yet had the chance to hear from every broker.
     */
    public LiveSet expire(long nowMs, long expiryMs, long watchingSinceMs) {
        if (nowMs - watchingSinceMs < expiryMs) {
            return this;
        }
        TreeMap<NodeId, NodeState> next = null;
        for (NodeState state : nodes.values()) {
            if (state.live() && nowMs - state.lastHeartbeatMs() >= expiryMs) {
                if (next == null) {
                    next = new TreeMap<>(nodes);
                }
                // silent since the controller began watching at the earliest: the heartbeat time may predate it
                next.put(state.node(), state.down(DownReason.LIVENESS_EXPIRY, watchingSinceMs));
            }
        }
        return next == null ? this : new LiveSet(next);
    }

    public LiveSet with(NodeState state) {
        TreeMap<NodeId, NodeState> next = new TreeMap<>(nodes);
        next.put(state.node(), state);
        return new LiveSet(next);
    }

    /** The nodes whose status, incarnation or draining flag differ from {@code committed}: what must be committed. */
    public List<NodeState> changesSince(LiveSet committed) {
        List<NodeState> changes = new ArrayList<>();
        for (Map.Entry<NodeId, NodeState> entry : nodes.entrySet()) {
            NodeState before = committed.nodes.get(entry.getKey());
            if (before == null || !before.sameStatus(entry.getValue())) {
                changes.add(entry.getValue());
            }
        }
        return List.copyOf(changes);
    }
}
