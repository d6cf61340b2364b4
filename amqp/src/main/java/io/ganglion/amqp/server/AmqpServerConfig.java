package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.FrameDescriptor;
import java.time.Duration;
import java.util.Objects;

/**
 * How an AMQP listener negotiates and protects itself. The defaults are RabbitMQ's.
 *
 * @param channelMax the {@code channel_max} proposed in {@code connection.tune}; a client may ask for fewer, never more
 *     (RabbitMQ: 2047)
 * @param frameMax the {@code frame_max} proposed in {@code connection.tune}, at least 4096 (RabbitMQ: 131072)
 * @param heartbeatSeconds the heartbeat proposed in {@code connection.tune}, 0 for none; the client's answer is used
 *     (RabbitMQ: 60)
 * @param maxMessageSize the largest message body a publish may carry; larger is {@code 406 PRECONDITION_FAILED}
 *     (RabbitMQ's {@code max_message_size}: 128 MiB)
 * @param handshakeTimeout how long a client has from connecting to {@code connection.open-ok}; then the socket closes
 *     (RabbitMQ's {@code handshake_timeout}: 10 s)
 * @param closeTimeout how long the server waits for {@code connection.close-ok} after sending {@code connection.close}
 *     before it closes the socket (RabbitMQ: 30 s, or the heartbeat timeout when shorter)
 * @param maxQueuedCommands commands received but not yet processed (a channel waits for the broker) above which the
 *     connection stops reading its socket until they drain
 * @param ioThreads Netty event loop threads for client connections, 0 for Netty's default (twice the cores)
 */
public record AmqpServerConfig(
        int channelMax,
        int frameMax,
        int heartbeatSeconds,
        long maxMessageSize,
        Duration handshakeTimeout,
        Duration closeTimeout,
        int maxQueuedCommands,
        int ioThreads) {

    public static final int DEFAULT_CHANNEL_MAX = 2047;
    public static final int DEFAULT_FRAME_MAX = 131_072;
    public static final int DEFAULT_HEARTBEAT_SECONDS = 60;
    public static final long DEFAULT_MAX_MESSAGE_SIZE = 134_217_728L;

    public AmqpServerConfig {
        if (channelMax < 1 || channelMax > FrameDescriptor.CHANNEL_MAX) {
            throw new IllegalArgumentException("channelMax must be in [1, 65535], was " + channelMax);
        }
        if (frameMax < FrameDescriptor.FRAME_MIN_SIZE) {
            throw new IllegalArgumentException(
                    "frameMax must be at least " + FrameDescriptor.FRAME_MIN_SIZE + ", was " + frameMax);
        }
        if (heartbeatSeconds < 0 || heartbeatSeconds > 0xFFFF) {
            throw new IllegalArgumentException("heartbeatSeconds must be in [0, 65535], was " + heartbeatSeconds);
        }
        if (maxMessageSize < 0 || maxMessageSize > FrameDescriptor.MAX_BODY_SIZE) {
            throw new IllegalArgumentException(
                    "maxMessageSize must be in [0, " + FrameDescriptor.MAX_BODY_SIZE + "], was " + maxMessageSize);
        }
        Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
        Objects.requireNonNull(closeTimeout, "closeTimeout");
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive, was " + handshakeTimeout);
        }
        if (closeTimeout.isNegative() || closeTimeout.isZero()) {
            throw new IllegalArgumentException("closeTimeout must be positive, was " + closeTimeout);
        }
        if (maxQueuedCommands < 1) {
            throw new IllegalArgumentException("maxQueuedCommands must be positive, was " + maxQueuedCommands);
        }
        if (ioThreads < 0) {
            throw new IllegalArgumentException("ioThreads must not be negative, was " + ioThreads);
        }
    }

    /** RabbitMQ's defaults. */
    public static AmqpServerConfig defaults() {
        return new AmqpServerConfig(
                DEFAULT_CHANNEL_MAX,
                DEFAULT_FRAME_MAX,
                DEFAULT_HEARTBEAT_SECONDS,
                DEFAULT_MAX_MESSAGE_SIZE,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30),
                1024,
                0);
    }

    public AmqpServerConfig withHeartbeatSeconds(int seconds) {
        return new AmqpServerConfig(
                channelMax,
                frameMax,
                seconds,
                maxMessageSize,
                handshakeTimeout,
                closeTimeout,
                maxQueuedCommands,
                ioThreads);
    }

    public AmqpServerConfig withMaxMessageSize(long bytes) {
        return new AmqpServerConfig(
                channelMax,
                frameMax,
                heartbeatSeconds,
                bytes,
                handshakeTimeout,
                closeTimeout,
                maxQueuedCommands,
                ioThreads);
    }

    public AmqpServerConfig withIoThreads(int threads) {
        return new AmqpServerConfig(
                channelMax,
                frameMax,
                heartbeatSeconds,
                maxMessageSize,
                handshakeTimeout,
                closeTimeout,
                maxQueuedCommands,
                threads);
    }
}
