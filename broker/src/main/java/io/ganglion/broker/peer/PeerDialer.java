package io.ganglion.broker.peer;

import io.ganglion.coordination.NodeId;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one outbound link to one peer: dials, and when the connect fails or the link closes, dials again after a
 * delay, until {@link #stop()}.
 *
 * <pre>
 *   delay = reconnectMin ──each failure or close──> delay * 2, capped at reconnectMax
 *     ^                                                   │
 *     └────────── the Hello exchange completes ───────────┘
 *   refused (another cluster, another node): the next dial waits refusedRetryDelay
 * </pre>
 *
 * <p>Implementation notes: the dialer is confined to one event loop, {@code loop}: its channels are registered there,
 * every callback and retry runs there, and {@link #start()}/{@link #stop()} hand their work to it. So its fields need
 * no synchronization. A dial is "down" once: when its connect fails, or, once connected, when it closes (the close
 * listener is added only after the connect succeeded, so that a failed connect is reported with its cause). {@link
 * #onDown} also ignores a channel that is no longer the current one.
 */
final class PeerDialer implements PeerConnection.DialListener {
    private static final Logger LOG = LoggerFactory.getLogger(PeerDialer.class);

    private final NodeId peer;
    private final InetSocketAddress address;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final long minDelayNanos;
    private final long maxDelayNanos;
    private final long refusedDelayNanos;

    // on loop
    private boolean stopped;
    private Channel channel;
    private long nextDelayNanos;
    private boolean refused;
    private boolean reportedUnreachable;
    private ScheduledFuture<?> retry;

    /**
     * @param template a bootstrap with the channel type and options set; cloned onto {@code loop}
     * @param channels where every link is added, so that closing the link closes them
     */
    PeerDialer(
            NodeId peer,
            InetSocketAddress address,
            EventLoop loop,
            Bootstrap template,
            PeerLinkConfig config,
            PeerRegistry registry,
            PeerHandler handler,
            ChannelGroup channels) {
        this.peer = peer;
        this.address = address;
        this.loop = loop;
        this.minDelayNanos = config.reconnectMin().toNanos();
        this.maxDelayNanos = config.reconnectMax().toNanos();
        this.refusedDelayNanos = config.refusedRetryDelay().toNanos();
        this.nextDelayNanos = minDelayNanos;
        PeerDialer dialer = this;
        this.bootstrap = template.clone(loop).handler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                channels.add(ch);
                PeerConnection.install(
                        ch.pipeline(), config, PeerConnection.outbound(config, registry, handler, peer, dialer));
            }
        });
    }

    InetSocketAddress address() {
        return address;
    }

    /** Dials at once. Any thread. */
    void start() {
        loop.execute(this::dial);
    }

    /** Stops dialling and closes the outbound link, if any. Any thread; takes effect on the dialer's loop. */
    void stop() {
        if (loop.isShuttingDown()) {
            return; // the loop closes its channels and drops its timers itself
        }
        loop.execute(() -> {
            stopped = true;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            if (channel != null) {
                channel.close();
            }
        });
    }

    @Override
    public void onEstablished() {
        // on loop
        nextDelayNanos = minDelayNanos;
        reportedUnreachable = false;
    }

    @Override
    public void onRefused() {
        // on loop
        refused = true;
    }

    private void dial() {
        // on loop
        retry = null;
        if (stopped) {
            return;
        }
        refused = false;
        ChannelFuture connecting = bootstrap.connect(address);
        Channel dialled = connecting.channel();
        channel = dialled;
        connecting.addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                dialled.closeFuture().addListener(closed -> onDown(dialled, null));
            } else {
                dialled.close();
                onDown(dialled, f.cause());
            }
        });
    }

    private void onDown(Channel dialled, Throwable cause) {
        // on loop
        if (dialled != channel) {
            return;
        }
        channel = null;
        if (stopped || loop.isShuttingDown()) {
            return;
        }
        long delay = refused ? refusedDelayNanos : nextDelayNanos;
        nextDelayNanos = Math.min(nextDelayNanos * 2, maxDelayNanos);
        if (cause != null && !reportedUnreachable) {
            reportedUnreachable = true;
            LOG.warn(
                    "event=peer_unreachable peer={} address={} cause=\"{}\" retry_ms={}",
                    peer,
                    address,
                    cause.getMessage(),
                    TimeUnit.NANOSECONDS.toMillis(delay));
        } else {
            LOG.debug(
                    "event=peer_redial peer={} address={} retry_ms={} cause=\"{}\"",
                    peer,
                    address,
                    TimeUnit.NANOSECONDS.toMillis(delay),
                    cause == null ? "closed" : cause.getMessage());
        }
        retry = loop.schedule(this::dial, delay, TimeUnit.NANOSECONDS);
    }
}
