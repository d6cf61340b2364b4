package io.ganglion.broker.peer;

import io.ganglion.broker.peer.PeerMessage.Hello;
import io.ganglion.broker.peer.PeerProtocolException.Reason;
import io.ganglion.broker.peer.PeerRegistry.Direction;
import io.ganglion.coordination.NodeId;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One peer link's state machine, the last handler of its pipeline ({@link #install}).
 *
 * <pre>
 *   AWAITING_HELLO ──peer's Hello, same cluster──> ESTABLISHED ──close──> CLOSED
 *        │   (ours is sent on channel active)          │
 *        ├──Hello of another cluster / ourselves / not the node we dialled──> refused, CLOSED
 *        ├──any other message, a bad frame──> rejected, CLOSED
 *        └──no Hello within helloTimeout──> CLOSED
 * </pre>
 *
 * <p>Both sides send {@code Hello} as soon as the TCP connection is up and do not wait for each other's. Once the
 * peer's {@code Hello} is accepted the link is registered with the {@link PeerRegistry} and every further message goes
 * to {@link PeerHandler#onMessage}. A bad frame ({@link PeerProtocolException}) or a message out of place closes this
 * link, with one log line {@code event=peer_frame_rejected}; it never propagates further.
 *
 * <p>Implementation notes: one instance per channel, every method on the channel's event loop, so its fields need no
 * synchronization. {@code peer} is set once, when the Hello is accepted.
 */
final class PeerConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(PeerConnection.class);

    /** Flushes up to this many writes at once while a read is in progress or tasks are queued. */
    private static final int FLUSH_CONSOLIDATION_LIMIT = 256;

    /** What an outbound link tells its {@link PeerDialer}. */
    interface DialListener {
        DialListener NONE = new DialListener() {
            @Override
            public void onEstablished() {}

            @Override
            public void onRefused() {}
        };

        /** The Hello exchange completed: the backoff starts again from its minimum. */
        void onEstablished();

        /** The peer was refused (another cluster, another node): dial it again only after the refused delay. */
        void onRefused();
    }

    private enum Phase {
        AWAITING_HELLO,
        ESTABLISHED,
        CLOSED
    }

    private final PeerLinkConfig config;
    private final PeerRegistry registry;
    private final PeerHandler handler;
    private final Direction direction;
    /** Outbound: the node we dialled. Inbound: null, we learn the peer from its Hello. */
    private final NodeId expected;

    private final DialListener dialer;
    private Phase phase = Phase.AWAITING_HELLO;
    /** The peer, once its Hello is accepted; null before. */
    private NodeId peer;

    private ScheduledFuture<?> helloTimeout;

    private PeerConnection(
            PeerLinkConfig config,
            PeerRegistry registry,
            PeerHandler handler,
            Direction direction,
            NodeId expected,
            DialListener dialer) {
        this.config = config;
        this.registry = registry;
        this.handler = handler;
        this.direction = direction;
        this.expected = expected;
        this.dialer = dialer;
    }

    /** The handler of a link a peer opened to us. */
    static PeerConnection inbound(PeerLinkConfig config, PeerRegistry registry, PeerHandler handler) {
        return new PeerConnection(config, registry, handler, Direction.INBOUND, null, DialListener.NONE);
    }

    /** The handler of a link we opened to {@code peer}. */
    static PeerConnection outbound(
            PeerLinkConfig config, PeerRegistry registry, PeerHandler handler, NodeId peer, DialListener dialer) {
        return new PeerConnection(config, registry, handler, Direction.OUTBOUND, peer, dialer);
    }

    /** Builds a link's pipeline: flush consolidation, the codec, then {@code connection}. */
    static void install(ChannelPipeline pipeline, PeerLinkConfig config, PeerConnection connection) {
        pipeline.addLast("flush", new FlushConsolidationHandler(FLUSH_CONSOLIDATION_LIMIT, true));
        pipeline.addLast("codec", new PeerCodec(config.maxFrameLength()));
        pipeline.addLast("connection", connection);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(new Hello(config.clusterName(), config.node(), config.incarnation()))
                .addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
        helloTimeout = ctx.executor()
                .schedule(() -> onHelloTimeout(ctx), config.helloTimeout().toNanos(), TimeUnit.NANOSECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        PeerMessage message = (PeerMessage) msg;
        switch (phase) {
            case AWAITING_HELLO -> onFirstMessage(ctx, message);
            case ESTABLISHED -> {
                if (message instanceof Hello) {
                    reject(ctx, new PeerProtocolException(Reason.UNEXPECTED_MESSAGE, "a second hello"));
                } else if (registry.isCurrent(peer, ctx.channel())) {
                    handler.onMessage(peer, message);
                }
                // else: the link was replaced and is closing; what it still reads is dropped
            }
            case CLOSED -> {
                // closing: nothing read after a fault or a refusal is trusted
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        phase = Phase.CLOSED;
        cancelHelloTimeout();
        if (peer != null) {
            registry.closed(peer, ctx.channel());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof PeerProtocolException fault) {
            reject(ctx, fault);
            return;
        }
        if (phase == Phase.CLOSED) {
            LOG.debug("event=peer_link_error peer={} remote={} after close", describe(), ctx.channel(), cause);
        } else if (cause instanceof IOException) {
            // a reset or broken pipe: the peer died or the network failed; peer_disconnected follows
            LOG.debug("event=peer_link_error peer={} remote={} cause={}", describe(), remote(ctx), cause.toString());
        } else {
            LOG.warn("event=peer_link_error peer={} remote={}", describe(), remote(ctx), cause);
        }
        close(ctx);
    }

    private void onFirstMessage(ChannelHandlerContext ctx, PeerMessage message) {
        if (!(message instanceof Hello hello)) {
            reject(ctx, expectedHello(message));
            return;
        }
        if (!hello.clusterName().equals(config.clusterName())) {
            refuse(
                    ctx,
                    hello,
                    "cluster_mismatch",
                    "cluster=" + hello.clusterName() + " expected=" + config.clusterName());
        } else if (hello.node().equals(config.node())) {
            refuse(ctx, hello, "self", "node=" + hello.node());
        } else if (expected != null && !expected.equals(hello.node())) {
            refuse(ctx, hello, "node_mismatch", "node=" + hello.node() + " expected=" + expected);
        } else {
            phase = Phase.ESTABLISHED;
            peer = hello.node();
            cancelHelloTimeout();
            dialer.onEstablished();
            registry.established(peer, hello.incarnation(), direction, ctx.channel());
        }
    }

    private void refuse(ChannelHandlerContext ctx, Hello hello, String reason, String detail) {
        LOG.warn(
                "event=peer_refused peer={} remote={} direction={} reason={} {}",
                hello.node(),
                remote(ctx),
                direction.label(),
                reason,
                detail);
        dialer.onRefused();
        close(ctx);
    }

    private void reject(ChannelHandlerContext ctx, PeerProtocolException fault) {
        if (phase == Phase.CLOSED) {
            return;
        }
        LOG.warn(
                "event=peer_frame_rejected peer={} remote={} reason={} detail=\"{}\"",
                describe(),
                remote(ctx),
                fault.reason().label(),
                fault.getMessage());
        close(ctx);
    }

    private void onHelloTimeout(ChannelHandlerContext ctx) {
        if (phase != Phase.AWAITING_HELLO) {
            return;
        }
        LOG.warn(
                "event=peer_hello_timeout peer={} remote={} timeout_ms={}",
                describe(),
                remote(ctx),
                config.helloTimeout().toMillis());
        close(ctx);
    }

    private void close(ChannelHandlerContext ctx) {
        phase = Phase.CLOSED;
        cancelHelloTimeout();
        ctx.close();
    }

    private void cancelHelloTimeout() {
        if (helloTimeout != null) {
            helloTimeout.cancel(false);
            helloTimeout = null;
        }
    }

    /** The peer for logs: its node id once known, else the node we dialled, else "unknown". */
    private String describe() {
        if (peer != null) {
            return peer.value();
        }
        return expected != null ? expected.value() : "unknown";
    }

    private static Object remote(ChannelHandlerContext ctx) {
        return ctx.channel().remoteAddress();
    }

    private static PeerProtocolException expectedHello(PeerMessage message) {
        return new PeerProtocolException(
                Reason.UNEXPECTED_MESSAGE,
                "expected hello, got " + PeerFrameDescriptor.name(PeerFrameDescriptor.typeOf(message)));
    }
}
