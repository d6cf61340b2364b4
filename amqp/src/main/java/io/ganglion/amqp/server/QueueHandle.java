package io.ganglion.amqp.server;

/**
 * One queue instance as the broker hands it to a channel with each delivery. Settlements go back to the same handle,
 * so a queue deleted and declared again under the same name never receives acks meant for the old one. Opaque to the
 * channel.
 */
public interface QueueHandle {
    /** The queue's name, for logs. */
    String name();
}
