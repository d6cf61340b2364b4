package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.FieldTable;

/**
 * A {@code basic.consume} as the connection hands it to the broker.
 *
 * @param channelId the channel's id, unique in the process (a reopened channel number gets a new one)
 * @param prefetch the consumer's limit of unacknowledged messages, 0 for none
 * @param sink where deliveries go, possibly before the consume's stage completes
 */
public record ConsumeRequest(
        String vhost,
        String queue,
        long channelId,
        String consumerTag,
        boolean noAck,
        boolean exclusive,
        int prefetch,
        FieldTable arguments,
        DeliverySink sink,
        String connectionId) {

    /** The same request for the queue named {@code name} (a name with line breaks stripped). */
    public ConsumeRequest withQueue(String name) {
        return name.equals(queue)
                ? this
                : new ConsumeRequest(
                        vhost, name, channelId, consumerTag, noAck, exclusive, prefetch, arguments, sink, connectionId);
    }
}
