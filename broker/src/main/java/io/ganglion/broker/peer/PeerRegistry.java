package io.ganglion.broker.peer;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.netty.channel.Channel;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The established links of a {@link PeerLink}, by peer: at most one outbound link (ours, kept by a {@link PeerDialer})
 * and one inbound link (the peer's) each, and the incarnation they presented. It turns link events into the per-peer
 * {@link PeerHandler#onConnected}/{@link PeerHandler#onDisconnected} alternation.
 *
 * <p>Implementation notes. Links change on many event loops; sends read from any thread.
 *
 * <ul>
 *   <li>A peer's {@link PeerState} is created once and never removed (a cluster has few peers). Its fields change only
 *       under its monitor, and {@link #established}/{@link #closed} call the handler while holding it, so a peer's
 *       lifecycle callbacks are totally ordered. Handlers must not block (they run on event loops anyway).
 *   <li>{@code outbound} and {@code inbound} are volatile so that {@link #route} and {@link #isCurrent} read them
 *       without the lock; a reader may see a link that is being replaced or closed, and a write to it then fails or is
 *       dropped, as any write racing a close would.
 *   <li>A link that presents a new incarnation means the peer restarted: the links of the old incarnation belong to a
 *       dead process (or to a half-open socket) and are closed at once. A second link of one direction replaces the
 *       first (the peer redialled before we saw the old socket die) and the first is closed.
 *   <li>A replaced link is "retired": {@link #isCurrent} is false for it from then on, so nothing it still reads is
 *       delivered, and its {@link #closed} is ignored.
 * </ul>
 */
final class PeerRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(PeerRegistry.class);

    enum Direction {
        OUTBOUND,
        INBOUND;

        String label() {
            return this == OUTBOUND ? "outbound" : "inbound";
        }
    }

    private static final class PeerState {
        /** The incarnation of the current links; null before the first. Guarded by this. */
        private Incarnation incarnation;

        private volatile Channel outbound;
        private volatile Channel inbound;

        private boolean isConnected() {
            return outbound != null || inbound != null;
        }
    }

    private final PeerHandler handler;
    private final ConcurrentMap<NodeId, PeerState> peers = new ConcurrentHashMap<>();

    PeerRegistry(PeerHandler handler) {
        this.handler = handler;
    }

    /**
     * Records that {@code channel} completed its {@code Hello} exchange with {@code peer}. Calls {@link
     * PeerHandler#onConnected} when it is the peer's first link or a new incarnation. On the channel's event loop.
     */
    void established(NodeId peer, Incarnation incarnation, Direction direction, Channel channel) {
        PeerState state = peers.computeIfAbsent(peer, p -> new PeerState());
        synchronized (state) {
            if (state.isConnected() && !incarnation.equals(state.incarnation)) {
                LOG.info(
                        "event=peer_restarted peer={} old_incarnation={} incarnation={}",
                        peer,
                        state.incarnation,
                        incarnation);
                retire(state, state.outbound);
                retire(state, state.inbound);
                LOG.info("event=peer_disconnected peer={} incarnation={}", peer, state.incarnation);
                handler.onDisconnected(peer);
            }
            boolean first = !state.isConnected();
            Channel previous = direction == Direction.OUTBOUND ? state.outbound : state.inbound;
            if (previous != null) {
                LOG.debug("event=peer_link_replaced peer={} direction={} old={}", peer, direction.label(), previous);
                retire(state, previous);
            }
            if (direction == Direction.OUTBOUND) {
                state.outbound = channel;
            } else {
                state.inbound = channel;
            }
            state.incarnation = incarnation;
            LOG.debug(
                    "event=peer_link_up peer={} direction={} remote={}",
                    peer,
                    direction.label(),
                    channel.remoteAddress());
            if (first) {
                LOG.info("event=peer_connected peer={} incarnation={}", peer, incarnation);
                handler.onConnected(peer, incarnation);
            }
        }
    }

    /**
     * Records that {@code channel}, established with {@code peer}, closed. Calls {@link PeerHandler#onDisconnected} when
     * it was the peer's last link; does nothing for a retired link. On the channel's event loop.
     */
    void closed(NodeId peer, Channel channel) {
        PeerState state = peers.get(peer);
        if (state == null) {
            return;
        }
        synchronized (state) {
            Direction direction;
            if (state.outbound == channel) {
                state.outbound = null;
                direction = Direction.OUTBOUND;
            } else if (state.inbound == channel) {
                state.inbound = null;
                direction = Direction.INBOUND;
            } else {
                return;
            }
            LOG.debug("event=peer_link_down peer={} direction={}", peer, direction.label());
            if (!state.isConnected()) {
                LOG.info("event=peer_disconnected peer={} incarnation={}", peer, state.incarnation);
                handler.onDisconnected(peer);
            }
        }
    }

    /** Whether {@code channel} is one of {@code peer}'s current links: its messages are delivered. Any thread. */
    boolean isCurrent(NodeId peer, Channel channel) {
        PeerState state = peers.get(peer);
        return state != null && (state.outbound == channel || state.inbound == channel);
    }

    /**
     * The link to send to {@code peer} on: the outbound one if it is up, else the inbound one; null when neither is. Any
     * thread; a volatile read of each.
     */
    Channel route(NodeId peer) {
        PeerState state = peers.get(peer);
        if (state == null) {
            return null;
        }
        Channel outbound = state.outbound;
        if (outbound != null && outbound.isActive()) {
            return outbound;
        }
        Channel inbound = state.inbound;
        return inbound != null && inbound.isActive() ? inbound : null;
    }

    /** How many established links {@code peer} has: 0, 1 or 2. Any thread; for tests and diagnostics. */
    int linkCount(NodeId peer) {
        PeerState state = peers.get(peer);
        if (state == null) {
            return 0;
        }
        return (state.outbound != null ? 1 : 0) + (state.inbound != null ? 1 : 0);
    }

    /** The peers with at least one established link, in node order: a snapshot. Any thread. */
    Set<NodeId> connectedPeers() {
        Set<NodeId> connected = new TreeSet<>();
        peers.forEach((peer, state) -> {
            if (state.isConnected()) {
                connected.add(peer);
            }
        });
        return Collections.unmodifiableSet(connected);
    }

    // under state's monitor
    private static void retire(PeerState state, Channel channel) {
        if (channel == null) {
            return;
        }
        if (state.outbound == channel) {
            state.outbound = null;
        }
        if (state.inbound == channel) {
            state.inbound = null;
        }
        channel.close();
    }
}
