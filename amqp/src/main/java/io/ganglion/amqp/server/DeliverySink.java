package io.ganglion.amqp.server;

/**
 * Where a queue sends a consumer's messages. Called from the queue's thread, never the connection's: an
 * implementation hands the work to its connection's event loop and returns at once.
 */
public interface DeliverySink {
    /** One message for the consumer; the sink owns {@code delivery} and must release it. */
    void deliver(String consumerTag, Delivery delivery);

    /** The broker cancelled the consumer (its queue was deleted): send {@code basic.cancel} to the client. */
    void cancelled(String consumerTag);
}
