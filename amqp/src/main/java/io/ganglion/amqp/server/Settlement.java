package io.ganglion.amqp.server;

/** What a channel does with delivered messages. */
public enum Settlement {
    /** {@code basic.ack}: done with them. */
    ACK,
    /** {@code basic.reject} or {@code basic.nack} without requeue: drop them. */
    DISCARD,
    /** {@code basic.reject} or {@code basic.nack} with requeue, or the channel closed: back to their places. */
    REQUEUE
}
