package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_APP_ID;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_CLUSTER_ID;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_CONTENT_ENCODING;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_CONTENT_TYPE;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_CORRELATION_ID;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_DELIVERY_MODE;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_EXPIRATION;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_HEADERS;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_MESSAGE_ID;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_PRIORITY;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_REPLY_TO;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_TIMESTAMP;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_TYPE;
import static io.ganglion.amqp.codec.FrameDescriptor.FLAG_USER_ID;
import static io.ganglion.amqp.codec.FrameDescriptor.PROPERTY_FLAG_CONTINUATION;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.netty.buffer.ByteBuf;

/**
 * The property list of a basic content header: flag words, then the present properties in flag order.
 *
 * <pre>
 * bit 15 content-type      shortstr     bit 8  expiration   shortstr
 * bit 14 content-encoding  shortstr     bit 7  message-id   shortstr
 * bit 13 headers           table        bit 6  timestamp    longlong
 * bit 12 delivery-mode     octet        bit 5  type         shortstr
 * bit 11 priority          octet        bit 4  user-id      shortstr
 * bit 10 correlation-id    shortstr     bit 3  app-id       shortstr
 * bit 9  reply-to          shortstr     bit 2  cluster-id   shortstr
 *                                       bit 1  unused, bit 0 continuation
 * </pre>
 *
 * We write one flag word with bits 1 and 0 clear, as RabbitMQ does. When reading, bit 1 is ignored, as RabbitMQ ignores
 * it; a set continuation bit is followed by further flag words (the spec's rule), which must name no property since
 * basic has only 14.
 */
public final class BasicPropertiesCodec {
    private BasicPropertiesCodec() {}

    /**
     * Reads a property list; consumes exactly the flags and the properties they announce.
     *
     * @throws FrameErrorException when the list is truncated, malformed or announces unknown properties
     */
    public static BasicProperties read(ByteBuf in) {
        WireReader r = new WireReader(in);
        int flags = r.ushort();
        int word = flags;
        while ((word & PROPERTY_FLAG_CONTINUATION) != 0) {
            word = r.ushort();
            if ((word & ~PROPERTY_FLAG_CONTINUATION) != 0) {
                throw unknownProperties(word);
            }
        }
        if (flags == 0 || flags == PROPERTY_FLAG_CONTINUATION) {
            return BasicProperties.EMPTY;
        }
        return new BasicProperties(
                (flags & FLAG_CONTENT_TYPE) != 0 ? r.shortstr() : null,
                (flags & FLAG_CONTENT_ENCODING) != 0 ? r.shortstr() : null,
                (flags & FLAG_HEADERS) != 0 ? r.table() : null,
                (flags & FLAG_DELIVERY_MODE) != 0 ? r.octet() : null,
                (flags & FLAG_PRIORITY) != 0 ? r.octet() : null,
                (flags & FLAG_CORRELATION_ID) != 0 ? r.shortstr() : null,
                (flags & FLAG_REPLY_TO) != 0 ? r.shortstr() : null,
                (flags & FLAG_EXPIRATION) != 0 ? r.shortstr() : null,
                (flags & FLAG_MESSAGE_ID) != 0 ? r.shortstr() : null,
                (flags & FLAG_TIMESTAMP) != 0 ? r.longlong() : null,
                (flags & FLAG_TYPE) != 0 ? r.shortstr() : null,
                (flags & FLAG_USER_ID) != 0 ? r.shortstr() : null,
                (flags & FLAG_APP_ID) != 0 ? r.shortstr() : null,
                (flags & FLAG_CLUSTER_ID) != 0 ? r.shortstr() : null);
    }

    /**
     * Writes a property list.
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string property is longer than 255 octets
     */
    public static void write(ByteBuf out, BasicProperties p) {
        out.writeShort(flags(p));
        WireWriter w = new WireWriter(out);
        if (p.contentType() != null) {
            w.shortstr(p.contentType());
        }
        if (p.contentEncoding() != null) {
            w.shortstr(p.contentEncoding());
        }
        if (p.headers() != null) {
            w.table(p.headers());
        }
        if (p.deliveryMode() != null) {
            w.octet(p.deliveryMode());
        }
        if (p.priority() != null) {
            w.octet(p.priority());
        }
        if (p.correlationId() != null) {
            w.shortstr(p.correlationId());
        }
        if (p.replyTo() != null) {
            w.shortstr(p.replyTo());
        }
        if (p.expiration() != null) {
            w.shortstr(p.expiration());
        }
        if (p.messageId() != null) {
            w.shortstr(p.messageId());
        }
        if (p.timestamp() != null) {
            w.longlong(p.timestamp());
        }
        if (p.type() != null) {
            w.shortstr(p.type());
        }
        if (p.userId() != null) {
            w.shortstr(p.userId());
        }
        if (p.appId() != null) {
            w.shortstr(p.appId());
        }
        if (p.clusterId() != null) {
            w.shortstr(p.clusterId());
        }
        w.finish();
    }

    /** The flag word announcing the properties present in {@code p}. */
    public static int flags(BasicProperties p) {
        int flags = 0;
        flags |= p.contentType() != null ? FLAG_CONTENT_TYPE : 0;
        flags |= p.contentEncoding() != null ? FLAG_CONTENT_ENCODING : 0;
        flags |= p.headers() != null ? FLAG_HEADERS : 0;
        flags |= p.deliveryMode() != null ? FLAG_DELIVERY_MODE : 0;
        flags |= p.priority() != null ? FLAG_PRIORITY : 0;
        flags |= p.correlationId() != null ? FLAG_CORRELATION_ID : 0;
        flags |= p.replyTo() != null ? FLAG_REPLY_TO : 0;
        flags |= p.expiration() != null ? FLAG_EXPIRATION : 0;
        flags |= p.messageId() != null ? FLAG_MESSAGE_ID : 0;
        flags |= p.timestamp() != null ? FLAG_TIMESTAMP : 0;
        flags |= p.type() != null ? FLAG_TYPE : 0;
        flags |= p.userId() != null ? FLAG_USER_ID : 0;
        flags |= p.appId() != null ? FLAG_APP_ID : 0;
        flags |= p.clusterId() != null ? FLAG_CLUSTER_ID : 0;
        return flags;
    }

    private static FrameErrorException unknownProperties(int word) {
        return new FrameErrorException(
                "property flag word 0x" + Integer.toHexString(word) + " names unknown properties");
    }
}
