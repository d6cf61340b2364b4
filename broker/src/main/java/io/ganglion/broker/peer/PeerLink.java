package io.ganglion.broker.peer;

import io.ganglion.coordination.NodeId;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker-to-broker transport: a listener that peers dial, and one outbound link kept to each peer we {@link
 * #connect} to. Every link carries {@link PeerMessage} frames ({@link PeerCodec}) and starts with a {@code Hello}
 * exchange.
 *
 * <pre>
 *   try (PeerLink link = PeerLink.start(PeerLinkConfig.defaults("ganglion", self, incarnation), handler)) {
 *       link.connect(NodeId.of("ganglion-2"), new InetSocketAddress("10.0.0.2", 25672));
 *       ...
 *       link.send(NodeId.of("ganglion-2"), new PeerMessage.Heartbeat(self, incarnation, false, now));
 *   }
 *
 *   broker A                                   broker B
 *     dialer ──TCP──────────────────────────────> listener        (A's outbound link = B's inbound link)
 *     Hello(cluster, A, incarnation) ──────────>
 *            <────────── Hello(cluster, B, incarnation)            (both send at once, neither waits)
 *     onConnected(B, incarnation)               onConnected(A, incarnation)
 *     frames both ways ...
 * </pre>
 *
 * <p>Two brokers that both connect to each other have two links; either carries messages both ways. {@link #send}
 * prefers our outbound link and falls back to the peer's inbound one. The {@link PeerHandler} sees a peer as connected
 * while at least one link to it is up.
 *
 * <p>Failures: an outbound link that fails or closes is dialled again with a doubling delay from {@code reconnectMin}
 * to {@code reconnectMax}, forever, until {@link #disconnect} or {@link #close}. A peer of another cluster (or
 * answering as another node) is refused, logged {@code event=peer_refused}, and dialled again only after {@code
 * refusedRetryDelay}. A frame that fails to decode closes that link only, logged {@code event=peer_frame_rejected}.
 *
 * <p>Threads: {@link PeerLinkConfig#ioThreads()} Netty event loops, owned by the link, or event loops lent to it (a
 * broker lends its shards', see {@code Shard}), run the listener, every link and every {@link PeerHandler} callback.
 * The public methods are safe from any thread and never block, except {@link #start} (until bound) and {@link #close}
 * (until the links closed and, when it owns them, the loops stopped).
 *
 * <p>Implementation notes: which links are up lives in the {@link PeerRegistry} (see its notes); each outbound link's
 * redial state in its {@link PeerDialer}, confined to one event loop. {@link #connect}, {@link #disconnect} and {@link
 * #close} are rare and synchronize on the link to keep {@code dialers} and {@code closed} consistent; {@link #send}
 * takes no lock.
 */
public final class PeerLink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerLink.class);

    /** How long {@link #close()} waits for the links to close and the event loops to stop. */
    private static final long SHUTDOWN_TIMEOUT_MILLIS = 2_000;

    private static final ChannelFutureListener SEND_FAILURE = PeerLink::onSendComplete;

    private final PeerLinkConfig config;
    private final EventLoopGroup group;
    /** Whether {@link #close()} stops {@link #group}: false when the broker lent its shards' loops. */
    private final boolean ownsGroup;

    private final Channel listener;
    private final ChannelGroup channels;
    private final PeerRegistry registry;
    private final PeerHandler handler;
    private final Bootstrap dialTemplate;

    // guarded by this; closed is also read without the lock (volatile), by the refusal probe
    private final Map<NodeId, PeerDialer> dialers = new HashMap<>();
    private volatile boolean closed;

    private PeerLink(
            PeerLinkConfig config,
            EventLoopGroup group,
            boolean ownsGroup,
            Channel listener,
            ChannelGroup channels,
            PeerRegistry registry,
            PeerHandler handler,
            Bootstrap dialTemplate) {
        this.config = config;
        this.group = group;
        this.ownsGroup = ownsGroup;
        this.listener = listener;
        this.channels = channels;
        this.registry = registry;
        this.handler = handler;
        this.dialTemplate = dialTemplate;
    }

    /**
     * Binds {@code config.bindHost():config.port()} (port 0 for any free port) and accepts peer links for {@code
     * handler}. Returns once the socket is bound.
     *
     * @throws IOException when the address cannot be bound; no thread is left running then
     */
    public static PeerLink start(PeerLinkConfig config, PeerHandler handler) throws IOException {
        Objects.requireNonNull(config, "config");
        return start(
                config,
                handler,
                new MultiThreadIoEventLoopGroup(
                        config.ioThreads(), new DefaultThreadFactory("ganglion-peer"), NioIoHandler.newFactory()),
                true);
    }

    /**
     * As {@link #start(PeerLinkConfig, PeerHandler)}, with the links on {@code loops} (NIO event loops), which the
     * link neither owns nor stops: a broker lends its shards' loops, so that a message between a link and a shard of
     * the same loop passes no thread boundary ({@code config.ioThreads()} is not used).
     */
    public static PeerLink start(PeerLinkConfig config, PeerHandler handler, EventLoopGroup loops) throws IOException {
        Objects.requireNonNull(config, "config");
        return start(config, handler, Objects.requireNonNull(loops, "loops"), false);
    }

    private static PeerLink start(PeerLinkConfig config, PeerHandler handler, EventLoopGroup group, boolean ownsGroup)
            throws IOException {
        PeerHandler guarded = new GuardedPeerHandler(handler);
        PeerRegistry registry = new PeerRegistry(guarded);
        ChannelGroup channels = new DefaultChannelGroup("peer-links", GlobalEventExecutor.INSTANCE);
        ServerBootstrap server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 128)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channels.add(channel);
                        PeerConnection.install(
                                channel.pipeline(), config, PeerConnection.inbound(config, registry, guarded));
                    }
                });
        Bootstrap dialTemplate = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int)
                        Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis()));
        ChannelFuture bound = server.bind(config.bindHost(), config.port()).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            if (ownsGroup) {
                shutdown(group);
            }
            Throwable cause = bound.cause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot bind the peer listener to " + config.bindHost() + ":" + config.port(), cause);
        }
        PeerLink link =
                new PeerLink(config, group, ownsGroup, bound.channel(), channels, registry, guarded, dialTemplate);
        LOG.info(
                "event=peer_link_started node={} incarnation={} cluster={} address={}",
                config.node(),
                config.incarnation(),
                config.clusterName(),
                link.localAddress());
        return link;
    }

    /** The port the listener is bound to: the actual one when started with port 0. */
    public int port() {
        return localAddress().getPort();
    }

    /** The address the listener is bound to. */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

    public PeerLinkConfig config() {
        return config;
    }

    /**
     * Keeps an outbound link to {@code peer} at {@code address}: dials now and again whenever it fails or closes, until
     * {@link #disconnect} or {@link #close}. Does nothing if {@code peer} is already dialled at that address; a new
     * address replaces the old one (its link is closed). Returns at once.
     *
     * @throws IllegalArgumentException when {@code peer} is this node
     * @throws IllegalStateException when the link is closed
     */
    public synchronized void connect(NodeId peer, InetSocketAddress address) {
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(address, "address");
        if (peer.equals(config.node())) {
            throw new IllegalArgumentException("cannot connect to this node itself: " + peer);
        }
        if (closed) {
            throw new IllegalStateException("peer link closed");
        }
        PeerDialer current = dialers.get(peer);
        if (current != null) {
            if (current.address().equals(address)) {
                return;
            }
            current.stop();
        }
        PeerDialer dialer =
                new PeerDialer(peer, address, group.next(), dialTemplate, config, registry, handler, channels);
        dialers.put(peer, dialer);
        LOG.info("event=peer_dial peer={} address={}", peer, address);
        dialer.start();
    }

    /**
     * Whether {@code address} refuses a TCP connection now: true when the connect fails with "connection refused" (no
     * process listens there: a broker whose link just closed is dead, not cut off), false when it connects (closed at
     * once, before any {@code Hello}) or fails any other way (a timeout says nothing). Never fails. Any thread. On a
     * closed link, false at once: its own close closes every peer's connection, and each probe dialled on event loops
     * shutting down made Netty log an ERROR ("Failed to submit a listener notification task") on a clean stop.
     */
    public CompletableFuture<Boolean> refusesConnections(InetSocketAddress address) {
        CompletableFuture<Boolean> refused = new CompletableFuture<>();
        if (closed) {
            refused.complete(false);
            return refused;
        }
        try {
            ChannelFuture connecting = dialTemplate
                    .clone()
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(address);
            connecting.addListener((ChannelFuture f) -> {
                f.channel().close();
                refused.complete(!f.isSuccess() && f.cause() instanceof ConnectException);
            });
        } catch (RuntimeException e) {
            refused.complete(false); // the event loops are shutting down
        }
        return refused;
    }

    /**
     * {@link #refusesConnections(InetSocketAddress)} up to {@code probes} times, {@code gapMs} apart, until one is
     * refused: true at the first refusal, false when none was. A killed process closes its connections before its
     * listening socket, so a dial made as its link closes can still connect (the failover bench: the link's own redial
     * was refused 66 ms after the close, the one dial made at the close was not).
     */
    public CompletableFuture<Boolean> refusesConnections(InetSocketAddress address, int probes, long gapMs) {
        return refusesConnections(address).thenCompose(refused -> {
            if (refused || probes <= 1) {
                return CompletableFuture.completedFuture(refused);
            }
            // the next dial on the link's own event loops, which already time the dialers' retries
            CompletableFuture<Boolean> later = new CompletableFuture<>();
            try {
                group.schedule(
                        () -> refusesConnections(address, probes - 1, gapMs)
                                .whenComplete((again, failure) -> later.complete(failure == null && again)),
                        gapMs,
                        TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                later.complete(false); // the event loops are shutting down
            }
            return later;
        });
    }

    /**
     * Stops keeping the outbound link to {@code peer} and closes it. The link {@code peer} opened to us, if any, stays:
     * it is the peer's to keep. Does nothing for a peer not dialled. Returns at once; the link closes shortly after.
     */
    public synchronized void disconnect(NodeId peer) {
        PeerDialer dialer = dialers.remove(peer);
        if (dialer != null) {
            LOG.info("event=peer_undial peer={} address={}", peer, dialer.address());
            dialer.stop();
        }
    }

    /**
     * Sends {@code message} to {@code peer} on an established link: our outbound link if it is up, else the one the
     * peer opened. Never blocks: the frame is written and flushed on the link's event loop, at once when called on
     * that loop (flushes of writes made together are consolidated). Messages sent from one thread to one peer arrive in order while the link they use
     * stays up; when the link changes, nothing is promised about messages in flight on the old one.
     *
     * <p>Memory: the message is handed to the link's event loop through its task queue, so what the caller wrote
     * before {@code send} happens-before the encoding; its arrays must not be changed afterwards. A write that fails
     * after this returns is logged, {@code event=peer_send_failed} (at debug when the link had closed meanwhile or the
     * write met an I/O error: the peer is gone, and its link's close is logged).
     *
     * @return true when the message was handed to a link, false when no link to {@code peer} is up
     * @throws IllegalArgumentException for a {@link PeerMessage.Hello} (the link sends those), or when the message's
     *     frame would exceed the max frame length
     */
    public boolean send(NodeId peer, PeerMessage message) {
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(message, "message");
        if (message instanceof PeerMessage.Hello) {
            throw new IllegalArgumentException("the peer link sends Hello itself");
        }
        int length = PeerCodec.encodedLength(message);
        if (length > config.maxFrameLength()) {
            throw new IllegalArgumentException("a " + PeerFrameDescriptor.name(PeerFrameDescriptor.typeOf(message))
                    + " frame of length " + length + " exceeds the max frame length " + config.maxFrameLength());
        }
        Channel channel = registry.route(peer);
        if (channel == null) {
            return false;
        }
        channel.writeAndFlush(message).addListener(SEND_FAILURE);
        return true;
    }

    /** The peers with at least one established link: a snapshot, in node order. Any thread. */
    public Set<NodeId> connectedPeers() {
        return registry.connectedPeers();
    }

    /** Whether at least one link to {@code peer} is established. Any thread. */
    public boolean isConnected(NodeId peer) {
        return registry.route(peer) != null;
    }

    /** How many established links {@code peer} has (outbound and inbound): 0, 1 or 2. Any thread. */
    int linkCount(NodeId peer) {
        return registry.linkCount(peer);
    }

    /**
     * Stops dialling, closes the listener and every link (the handler sees {@code onDisconnected} for each connected
     * peer), and stops the event loops. Blocks until they stopped, at most a few seconds; an interrupt is kept in the
     * thread's flag. Idempotent. Must not be called from a {@link PeerHandler} callback (an event loop cannot wait for
     * itself to stop).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            dialers.values().forEach(PeerDialer::stop);
            dialers.clear();
        }
        listener.close().awaitUninterruptibly(SHUTDOWN_TIMEOUT_MILLIS);
        channels.close().awaitUninterruptibly(SHUTDOWN_TIMEOUT_MILLIS);
        if (ownsGroup) {
            shutdown(group);
        }
        LOG.info("event=peer_link_stopped node={}", config.node());
    }

    private static void shutdown(EventLoopGroup group) {
        group.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
                .awaitUninterruptibly(2 * SHUTDOWN_TIMEOUT_MILLIS);
    }

    private static void onSendComplete(ChannelFuture future) {
        if (future.isSuccess()) {
            return;
        }
        Throwable cause = future.cause();
        if (cause instanceof ClosedChannelException) {
            LOG.debug(
                    "event=peer_send_failed remote={} cause=closed",
                    future.channel().remoteAddress());
        } else if (cause instanceof java.io.IOException) {
            // a reset or broken pipe: the peer died, and every message still in the link's buffer fails with it;
            // peer_disconnected follows. A stack trace for each one held a shard's loop for 80 ms at a failover.
            LOG.debug(
                    "event=peer_send_failed remote={} cause={}",
                    future.channel().remoteAddress(),
                    cause.toString());
        } else {
            LOG.warn("event=peer_send_failed remote={}", future.channel().remoteAddress(), cause);
        }
    }
}
