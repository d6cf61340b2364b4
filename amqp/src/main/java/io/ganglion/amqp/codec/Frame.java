package io.ganglion.amqp.codec;

/**
 * A decoded AMQP frame, as {@link AmqpFrameDecoder} emits it and {@link AmqpFrameEncoder} writes it. A
 * {@link BodyFrame} holds a buffer: whoever receives one must release it (or hand it on to someone who does).
 */
public sealed interface Frame permits MethodFrame, HeaderFrame, BodyFrame, HeartbeatFrame {
    /** The channel number, 0 for the connection itself. */
    int channel();
}
