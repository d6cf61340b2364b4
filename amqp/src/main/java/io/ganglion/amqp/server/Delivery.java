package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import java.nio.ByteBuffer;

/**
 * A message the broker hands to a channel, for {@code basic.deliver} or {@code basic.get-ok}. The channel assigns the
 * delivery tag, remembers {@code (queue, offset)} under it for the settlement, writes the frames and releases the body.
 *
 * <p>The content header is carried as its payload octets (class, weight, body size, property flags, properties), as the
 * message record stores them: the channel writes them as they are, and decodes the properties only when asked for
 * them.
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
    private final ByteBuffer header;
    private final long messageCount;

    /**
     * A delivery whose header is {@code header}'s octets, a content header payload for a body of {@code body}'s size;
     * {@code header} must not change. Takes ownership of {@code body}'s reference.
     */
    public Delivery(
            QueueHandle queue,
            long offset,
            boolean redelivered,
            String exchange,
            String routingKey,
            ByteBuffer header,
            ByteBuf body,
            long messageCount) {
        super(body);
        this.queue = queue;
        this.offset = offset;
        this.redelivered = redelivered;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.header = header;
        this.messageCount = messageCount;
    }

    /**
     * A delivery whose header is encoded from {@code properties}, for a message whose properties the broker changes.
     * Takes ownership of {@code body}'s reference.
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string property is longer than 255 octets
     */
    public Delivery(
            QueueHandle queue,
            long offset,
            boolean redelivered,
            String exchange,
            String routingKey,
            BasicProperties properties,
            ByteBuf body,
            long messageCount) {
        this(
                queue,
                offset,
                redelivered,
                exchange,
                routingKey,
                ContentHeaderCodec.encoded(ContentHeader.basic(body.readableBytes(), properties)),
                body,
                messageCount);
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

    /** The properties, decoded from the header's octets on each call. */
    public BasicProperties properties() {
        return ContentHeaderCodec.properties(header);
    }

    /** The content header payload octets, a read-only view. */
    public ByteBuffer header() {
        return header.asReadOnlyBuffer();
    }

    public ByteBuf body() {
        return content();
    }

    public long messageCount() {
        return messageCount;
    }
}
