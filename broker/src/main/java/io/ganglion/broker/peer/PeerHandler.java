package io.ganglion.broker.peer;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;

/**
 * What the broker does with the peer link's events. The link calls these on its Netty event loop threads, so an
 * implementation <b>must not block</b>: hand the work to a shard or the controller thread and return. A callback that
 * throws is logged ({@code event=peer_handler_failed}) and the link stays up.
 *
 * <p>Per peer, {@link #onConnected} and {@link #onDisconnected} alternate, starting with {@code onConnected}, however
 * many links (outbound and inbound) that peer has: connected means at least one link is up. They are called under a
 * per-peer lock, so they are totally ordered for one peer, possibly from different threads. {@link #onMessage} for a
 * peer comes only between its {@code onConnected} and {@code onDisconnected}; messages that arrive on one link are
 * delivered in the order they were sent, but two links to one peer are two independent streams.
 */
public interface PeerHandler {

    /**
     * The first link to {@code peer} completed its {@code Hello} exchange, or {@code peer} came back with a new {@code
     * incarnation} (it restarted: {@link #onDisconnected} was called first for the old one).
     */
    void onConnected(NodeId peer, Incarnation incarnation);

    /** A message from {@code peer}, never a {@link PeerMessage.Hello} (the link consumes those). */
    void onMessage(NodeId from, PeerMessage message);

    /** The last link to {@code peer} closed, or {@code peer} restarted and its old links were closed. */
    void onDisconnected(NodeId peer);
}
