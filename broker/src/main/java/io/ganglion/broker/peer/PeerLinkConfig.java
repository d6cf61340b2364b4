package io.ganglion.broker.peer;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link PeerLink} runs. Start from {@link #defaults} and change what differs with the {@code with...} methods.
 *
 * @param clusterName sent in {@code Hello}; a peer that names another cluster is refused
 * @param node this broker's node id, sent in {@code Hello}
 * @param incarnation this process's incarnation, sent in {@code Hello}
 * @param bindHost the interface the listener binds (default {@code 0.0.0.0})
 * @param port the listener's port (default {@value #DEFAULT_PORT}); 0 for any free port
 * @param maxFrameLength the largest frame length accepted and sent (default 16 MiB)
 * @param ioThreads Netty event loop threads for the listener and every link (default 2)
 * @param reconnectMin the first delay before an outbound link is dialled again (default 50 ms)
 * @param reconnectMax the cap of the doubling reconnect delay (default 1 s)
 * @param refusedRetryDelay the delay before dialling again a peer that refused us or that we refused, e.g. for another
 *     cluster name (default 30 s)
 * @param connectTimeout how long one TCP connect may take (default 2 s)
 * @param helloTimeout how long a new link may go without the peer's {@code Hello} before it is closed (default 5 s)
 */
public record PeerLinkConfig(
        String clusterName,
        NodeId node,
        Incarnation incarnation,
        String bindHost,
        int port,
        int maxFrameLength,
        int ioThreads,
        Duration reconnectMin,
        Duration reconnectMax,
        Duration refusedRetryDelay,
        Duration connectTimeout,
        Duration helloTimeout) {

    /** The peer link's port, next to AMQP's 5672 as RabbitMQ's distribution port is. */
    public static final int DEFAULT_PORT = 25672;

    public PeerLinkConfig {
        Objects.requireNonNull(clusterName, "clusterName");
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(incarnation, "incarnation");
        Objects.requireNonNull(bindHost, "bindHost");
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("port must be in [0, 65535], was " + port);
        }
        PeerFrameDescriptor.checkMaxFrameLength(maxFrameLength);
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be at least 1, was " + ioThreads);
        }
        requirePositive(reconnectMin, "reconnectMin");
        requirePositive(reconnectMax, "reconnectMax");
        if (reconnectMax.compareTo(reconnectMin) < 0) {
            throw new IllegalArgumentException(
                    "reconnectMax " + reconnectMax + " must not be below reconnectMin " + reconnectMin);
        }
        requirePositive(refusedRetryDelay, "refusedRetryDelay");
        requirePositive(connectTimeout, "connectTimeout");
        requirePositive(helloTimeout, "helloTimeout");
    }

    /** The defaults listed on the record, for this cluster, node and incarnation. */
    public static PeerLinkConfig defaults(String clusterName, NodeId node, Incarnation incarnation) {
        return new PeerLinkConfig(
                clusterName,
                node,
                incarnation,
                "0.0.0.0",
                DEFAULT_PORT,
                PeerFrameDescriptor.DEFAULT_MAX_FRAME_LENGTH,
                2,
                Duration.ofMillis(50),
                Duration.ofSeconds(1),
                Duration.ofSeconds(30),
                Duration.ofSeconds(2),
                Duration.ofSeconds(5));
    }

    public PeerLinkConfig withListener(String bindHost, int port) {
        return new PeerLinkConfig(
                clusterName,
                node,
                incarnation,
                bindHost,
                port,
                maxFrameLength,
                ioThreads,
                reconnectMin,
                reconnectMax,
                refusedRetryDelay,
                connectTimeout,
                helloTimeout);
    }

    public PeerLinkConfig withMaxFrameLength(int maxFrameLength) {
        return new PeerLinkConfig(
                clusterName,
                node,
                incarnation,
                bindHost,
                port,
                maxFrameLength,
                ioThreads,
                reconnectMin,
                reconnectMax,
                refusedRetryDelay,
                connectTimeout,
                helloTimeout);
    }

    public PeerLinkConfig withIoThreads(int ioThreads) {
        return new PeerLinkConfig(
                clusterName,
                node,
                incarnation,
                bindHost,
                port,
                maxFrameLength,
                ioThreads,
                reconnectMin,
                reconnectMax,
                refusedRetryDelay,
                connectTimeout,
                helloTimeout);
    }

    public PeerLinkConfig withReconnect(Duration reconnectMin, Duration reconnectMax, Duration refusedRetryDelay) {
        return new PeerLinkConfig(
                clusterName,
                node,
                incarnation,
                bindHost,
                port,
                maxFrameLength,
                ioThreads,
                reconnectMin,
                reconnectMax,
                refusedRetryDelay,
                connectTimeout,
                helloTimeout);
    }

    public PeerLinkConfig withTimeouts(Duration connectTimeout, Duration helloTimeout) {
        return new PeerLinkConfig(
                clusterName,
                node,
                incarnation,
                bindHost,
                port,
                maxFrameLength,
                ioThreads,
                reconnectMin,
                reconnectMax,
                refusedRetryDelay,
                connectTimeout,
                helloTimeout);
    }

    private static void requirePositive(Duration duration, String name) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + duration);
        }
    }
}
