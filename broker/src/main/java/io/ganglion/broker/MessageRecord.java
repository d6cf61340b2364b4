package io.ganglion.broker;

import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.protocol.BasicProperties;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A message as a queue writes it to its log: the body of a replicated log's message record ({@code
 * ReplicatedRecords}), settle records being the log's own.
 *
 * <pre>
 *   message:  u8 1 | u8 len, exchange | u8 len, routing key | u32 header length | content header | body
 * </pre>
 *
 * The content header is the AMQP content header payload (class, weight, body size, property flags and properties) as
 * the publisher's header frame carried it, never decoded and encoded again: what a publisher sent is what a consumer
 * receives, byte for byte.
 */
final class MessageRecord {
    static final byte MESSAGE = 1;

    private MessageRecord() {}

    /**
     * A decoded message: routing information, the content header payload and the body, both views of the record's
     * buffer.
     */
    record Message(String exchange, String routingKey, ByteBuffer header, ByteBuffer body) {
        /** The properties, decoded from the header on each call. */
        BasicProperties properties() {
            return ContentHeaderCodec.properties(header);
        }
    }

    /**
     * A message record for {@code body} with {@code header}, a content header payload as received (its body size is the
     * body's), copied in as it is.
     */
    static ByteBuffer encodeMessage(String exchange, String routingKey, ByteBuffer header, ByteBuf body) {
        byte[] exchangeBytes = exchange.getBytes(StandardCharsets.UTF_8);
        byte[] keyBytes = routingKey.getBytes(StandardCharsets.UTF_8);
        int headerLength = header.remaining();
        ByteBuffer out = ByteBuffer.allocate(
                1 + 1 + exchangeBytes.length + 1 + keyBytes.length + 4 + headerLength + body.readableBytes());
        out.put(MESSAGE);
        out.put((byte) exchangeBytes.length).put(exchangeBytes);
        out.put((byte) keyBytes.length).put(keyBytes);
        out.putInt(headerLength);
        out.put(header.duplicate());
        body.getBytes(body.readerIndex(), out.array(), out.position(), body.readableBytes());
        out.position(out.position() + body.readableBytes());
        return out.flip();
    }

    static Message decodeMessage(ByteBuffer payload) {
        ByteBuffer in = payload.duplicate();
        in.get();
        String exchange = shortString(in);
        String routingKey = shortString(in);
        int headerLength = in.getInt();
        ByteBuffer header = in.slice(in.position(), headerLength);
        in.position(in.position() + headerLength);
        return new Message(exchange, routingKey, header, in.slice());
    }

    /**
     * The message's own TTL, its {@code expiration} property in milliseconds, or -1 when it has none. The property
     * was checked when the message was published; reads the properties only when the header's flags hold one.
     */
    static long expirationMs(ByteBuffer payload) {
        ByteBuffer header = header(payload);
        if ((ContentHeaderCodec.propertyFlags(header) & FrameDescriptor.FLAG_EXPIRATION) == 0) {
            return -1;
        }
        String expiration = ContentHeaderCodec.properties(header).expiration();
        return expiration == null ? -1 : Long.parseLong(expiration);
    }

    /** The size of the message's body, as its content header gives it. */
    static long bodySize(ByteBuffer payload) {
        return ContentHeaderCodec.bodySize(header(payload));
    }

    /** The content header payload of a message record, a view of it. */
    private static ByteBuffer header(ByteBuffer payload) {
        int at = payload.position() + 1;
        at += 1 + (payload.get(at) & 0xFF); // exchange
        at += 1 + (payload.get(at) & 0xFF); // routing key
        return payload.slice(at + Integer.BYTES, payload.getInt(at));
    }

    private static String shortString(ByteBuffer in) {
        int length = in.get() & 0xFF;
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
