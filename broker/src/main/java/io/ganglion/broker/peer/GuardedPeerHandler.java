package io.ganglion.broker.peer;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where a failing {@link PeerHandler} callback is handled: it is logged with its stack trace ({@code
 * event=peer_handler_failed}) and the link goes on. A handler bug must not close links or kill an event loop.
 */
final class GuardedPeerHandler implements PeerHandler {
    private static final Logger LOG = LoggerFactory.getLogger(GuardedPeerHandler.class);

    private final PeerHandler delegate;

    GuardedPeerHandler(PeerHandler delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public void onConnected(NodeId peer, Incarnation incarnation) {
        try {
            delegate.onConnected(peer, incarnation);
        } catch (RuntimeException e) {
            LOG.error("event=peer_handler_failed peer={} callback=on_connected", peer, e);
        }
    }

    @Override
    public void onMessage(NodeId from, PeerMessage message) {
        try {
            delegate.onMessage(from, message);
        } catch (RuntimeException e) {
            LOG.error(
                    "event=peer_handler_failed peer={} callback=on_message type={}",
                    from,
                    PeerFrameDescriptor.name(PeerFrameDescriptor.typeOf(message)),
                    e);
        }
    }

    @Override
    public void onDisconnected(NodeId peer) {
        try {
            delegate.onDisconnected(peer);
        } catch (RuntimeException e) {
            LOG.error("event=peer_handler_failed peer={} callback=on_disconnected", peer, e);
        }
    }
}
