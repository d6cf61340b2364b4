package io.ganglion.broker.replication;

import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.NodeId;

/**
 * Sends a peer frame to another broker: {@link io.ganglion.broker.peer.PeerLink#send} in production, an in-memory link
 * in tests. Called from shard threads; must not block. Messages to one peer must arrive in the order sent (the peer
 * link keeps order per link, and the cluster uses one link per pair of brokers); a message may be lost (no link),
 * which the replication state machines recover from by their timers.
 */
@FunctionalInterface
public interface PeerSender {

    /**
     * @return true when the message was handed to a link, false when no link to {@code to} is up (it is dropped)
     * @throws IllegalArgumentException when the frame would exceed the link's max frame length
     */
    boolean send(NodeId to, PeerMessage message);
}
