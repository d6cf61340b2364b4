package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.BasicProperties;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A message the broker hands to a channel, for {@code basic.deliver} or {@code basic.get-ok}. The channel assigns the
 * delivery tag, remembers {@code (queue, offset)} under it for the settlement, writes the frames and releases the body.
 *
 * @param offset the message's position in its queue's log, echoed back in {@link BrokerBackend#settle}
 * @param messageCount for {@code basic.get-ok}: ready messages left in the queue; 0 for deliveries
 */
public final class Delivery extends DefaultByteBufHolder {
    private final QueueHandle queue;
    private final long offset;
    private final boolean redelivered;
    private final String exchange;
    private final String routingKey;
    private final BasicProperties properties;
    private final long messageCount;

    public Delivery(
            QueueHandle queue,
            long offset,
            boolean redelivered,
            String exchange,
            String routingKey,
            BasicProperties properties,
            ByteBuf body,
            long messageCount) {
        super(body);
        this.queue = queue;
        this.offset = offset;
        this.redelivered = redelivered;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.properties = properties;
        this.messageCount = messageCount;
    }

    public QueueHandle queue() {
        return queue;
    }

    public long offset() {
        return offset;
    }

    public boolean redelivered() {
        return redelivered;
    }

    public String exchange() {
        return exchange;
    }

    public String routingKey() {
        return routingKey;
    }

    public BasicProperties properties() {
        return properties;
    }

    public ByteBuf body() {
        return content();
    }

    public long messageCount() {
        return messageCount;
    }
}
