package io.ganglion.amqp.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An AMQP 0-9-1 listener: a Netty server socket whose connections each get the pipeline of
 * {@link AmqpConnection#install}. Start one with {@link #start}, stop it with {@link #close()}.
 *
 * <pre>
 *   try (AmqpServer server = AmqpServer.start("0.0.0.0", 5672, backend, AmqpServerConfig.defaults())) {
 *       ... server.localAddress() ...
 *   }
 * </pre>
 *
 * <p>Threads: one NIO acceptor thread and {@link AmqpServerConfig#ioThreads()} NIO event loops for the connections,
 * owned by the server and shut down by {@link #close()}, or event loops the caller lends and stops itself.
 */
public final class AmqpServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AmqpServer.class.getName());

    /** How long the event loops must be idle before they stop. */
    private static final long SHUTDOWN_QUIET_MILLIS = 100;

    /** How long {@link #close()} waits for clients to answer {@code connection.close}, and for the loops to stop. */
    private static final long SHUTDOWN_TIMEOUT_MILLIS = 5_000;

    private final EventLoopGroup acceptor;
    private final EventLoopGroup workers;
    /** Whether {@link #close()} stops {@link #workers}: false when the caller lent its own event loops. */
    private final boolean ownsWorkers;

    private final Channel listener;
    private final ChannelGroup connections;

    private AmqpServer(
            EventLoopGroup acceptor,
            EventLoopGroup workers,
            boolean ownsWorkers,
            Channel listener,
            ChannelGroup connections) {
        this.acceptor = acceptor;
        this.workers = workers;
        this.ownsWorkers = ownsWorkers;
        this.listener = listener;
        this.connections = connections;
    }

    /**
     * Binds {@code host:port} (port 0 for any free port) and accepts AMQP connections for {@code backend}. Returns once
     * the socket is bound.
     *
     * @throws IOException when the address cannot be bound; no thread is left running then
     */
    public static AmqpServer start(String host, int port, BrokerBackend backend, AmqpServerConfig config)
            throws IOException {
        Objects.requireNonNull(config, "config");
        return start(
                host,
                port,
                backend,
                config,
                new MultiThreadIoEventLoopGroup(config.ioThreads(), NioIoHandler.newFactory()),
                true);
    }

    /**
     * As {@link #start(String, int, BrokerBackend, AmqpServerConfig)}, with the connections on {@code workers} (NIO
     * event loops), which the server neither owns nor stops ({@code config.ioThreads()} is not used): a broker lends
     * its shards' loops, so that a publish to a queue of the connection's own loop, and a delivery from it, pass no
     * thread boundary. The backend's callbacks must then never block the loop.
     */
    public static AmqpServer start(
            String host, int port, BrokerBackend backend, AmqpServerConfig config, EventLoopGroup workers)
            throws IOException {
        return start(host, port, backend, config, Objects.requireNonNull(workers, "workers"), false);
    }

    private static AmqpServer start(
            String host,
            int port,
            BrokerBackend backend,
            AmqpServerConfig config,
            EventLoopGroup workers,
            boolean ownsWorkers)
            throws IOException {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(config, "config");
        EventLoopGroup acceptor = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        ChannelGroup connections = new DefaultChannelGroup("amqp-connections", GlobalEventExecutor.INSTANCE);
        AtomicLong sequence = new AtomicLong();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptor, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(64 * 1024, 256 * 1024))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        connections.add(channel);
                        String id = AmqpConnection.describe(channel.remoteAddress()) + " -> "
                                + AmqpConnection.describe(channel.localAddress()) + " #" + sequence.incrementAndGet();
                        AmqpConnection.install(channel.pipeline(), backend, config, id);
                    }
                });
        ChannelFuture bound = bootstrap.bind(host, port).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            shutdown(acceptor, ownsWorkers ? workers : null);
            Throwable cause = bound.cause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot bind AMQP listener to " + host + ":" + port, cause);
        }
        AmqpServer server = new AmqpServer(acceptor, workers, ownsWorkers, bound.channel(), connections);
        LOG.log(System.Logger.Level.INFO, "AMQP listener started address={0}", server.localAddress());
        return server;
    }

    /** The address the listener is bound to: the actual port when started with port 0. */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

    /**
     * Stops accepting, closes every connection with {@code 320 CONNECTION_FORCED} (their consumers are cancelled and
     * their unacknowledged messages requeued), waits up to 5 s for the clients to answer, then stops the event loops. Blocks until they stopped; an interrupt is
     * kept in the thread's flag.
     */
    @Override
    public void close() {
        listener.close().awaitUninterruptibly();
        for (Channel connection : connections) {
            AmqpConnection handler = connection.pipeline().get(AmqpConnection.class);
            if (handler != null) {
                handler.forceClose("shutdown");
            }
        }
        // Clients answer close-ok and we close their sockets; stopping the loops before that would reset sockets
        // with the close frame still unread.
        connections.newCloseFuture().awaitUninterruptibly(SHUTDOWN_TIMEOUT_MILLIS);
        shutdown(acceptor, ownsWorkers ? workers : null);
        LOG.log(System.Logger.Level.INFO, "AMQP listener stopped");
    }

    /** Stops the acceptor and, when not null, the workers. */
    private static void shutdown(EventLoopGroup acceptor, EventLoopGroup workers) {
        acceptor.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        if (workers != null) {
            workers.shutdownGracefully(SHUTDOWN_QUIET_MILLIS, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        }
        acceptor.terminationFuture().awaitUninterruptibly();
        if (workers != null) {
            workers.terminationFuture().awaitUninterruptibly();
        }
    }
}
