package io.ganglion.broker;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The payloads a queue writes to its log, inside storage's opaque DATA records.
 *
 * <pre>
 *   message:  u8 1 | u8 len, exchange | u8 len, routing key | u32 header length | content header | body
 *   settle:   u8 2 | u32 count | count x i64 offset
 * </pre>
 *
 * The content header is the AMQP content header payload (class, weight, body size, property flags and properties), so
 * what a publisher sent is what a consumer receives, byte for byte.
 */
final class MessageRecord {
    static final byte MESSAGE = 1;
    static final byte SETTLE = 2;

    private MessageRecord() {}

    /** A decoded message: routing information, properties, and the body as a view of the record's buffer. */
    record Message(String exchange, String routingKey, BasicProperties properties, ByteBuffer body) {}

    static ByteBuffer encodeMessage(String exchange, String routingKey, BasicProperties properties, ByteBuf body) {
        ByteBuf header = ByteBufAllocator.DEFAULT.heapBuffer(64);
        try {
            ContentHeaderCodec.encode(header, ContentHeader.basic(body.readableBytes(), properties));
            byte[] exchangeBytes = exchange.getBytes(StandardCharsets.UTF_8);
            byte[] keyBytes = routingKey.getBytes(StandardCharsets.UTF_8);
            ByteBuffer out = ByteBuffer.allocate(1
                    + 1
                    + exchangeBytes.length
                    + 1
                    + keyBytes.length
                    + 4
                    + header.readableBytes()
                    + body.readableBytes());
            out.put(MESSAGE);
            out.put((byte) exchangeBytes.length).put(exchangeBytes);
            out.put((byte) keyBytes.length).put(keyBytes);
            out.putInt(header.readableBytes());
            header.getBytes(header.readerIndex(), out.array(), out.position(), header.readableBytes());
            out.position(out.position() + header.readableBytes());
            body.getBytes(body.readerIndex(), out.array(), out.position(), body.readableBytes());
            out.position(out.position() + body.readableBytes());
            return out.flip();
        } finally {
            header.release();
        }
    }

    static ByteBuffer encodeSettle(long[] offsets, int count) {
        ByteBuffer out = ByteBuffer.allocate(1 + 4 + 8 * count);
        out.put(SETTLE).putInt(count);
        for (int i = 0; i < count; i++) {
            out.putLong(offsets[i]);
        }
        return out.flip();
    }

    static byte kind(ByteBuffer payload) {
        return payload.get(payload.position());
    }

    static Message decodeMessage(ByteBuffer payload) {
        ByteBuffer in = payload.duplicate();
        in.get();
        String exchange = shortString(in);
        String routingKey = shortString(in);
        int headerLength = in.getInt();
        ByteBuffer headerBytes = in.slice(in.position(), headerLength);
        in.position(in.position() + headerLength);
        ContentHeader header = ContentHeaderCodec.decode(Unpooled.wrappedBuffer(headerBytes));
        return new Message(exchange, routingKey, header.properties(), in.slice());
    }

    static long[] decodeSettle(ByteBuffer payload) {
        ByteBuffer in = payload.duplicate();
        in.get();
        int count = in.getInt();
        long[] offsets = new long[count];
        for (int i = 0; i < count; i++) {
            offsets[i] = in.getLong();
        }
        return offsets;
    }

    private static String shortString(ByteBuffer in) {
        int length = in.get() & 0xFF;
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
