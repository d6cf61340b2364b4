package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.FrameDescriptor.HEADER_MIN_LENGTH;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ClassId;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;

/**
 * Content header frame payloads: class id (short), weight (short), body size (longlong), property list. Only basic
 * (class 60) carries properties in 0-9-1; the property octets of a header of another class are skipped, so that the
 * command assembler can refuse it as RabbitMQ does, with {@code 505 UNEXPECTED_FRAME} rather than a decode error.
 */
public final class ContentHeaderCodec {
    /** Where the body size (a longlong) sits in a content header payload: after class id and weight. */
    private static final int BODY_SIZE_OFFSET = 4;

    private ContentHeaderCodec() {}

    /**
     * Decodes a whole content header payload. Consumes {@code payload}.
     *
     * @throws FrameErrorException when it is short, long or malformed
     */
    public static ContentHeader decode(ByteBuf payload) {
        if (payload.readableBytes() < HEADER_MIN_LENGTH) {
            throw tooShort(payload.readableBytes());
        }
        int classId = payload.readUnsignedShort();
        int weight = payload.readUnsignedShort();
        long bodySize = payload.readLong();
        if (classId != ClassId.BASIC) {
            payload.skipBytes(payload.readableBytes());
            return new ContentHeader(classId, weight, bodySize, BasicProperties.EMPTY);
        }
        try {
            BasicProperties properties = BasicPropertiesCodec.read(payload);
            if (payload.isReadable()) {
                throw trailing(payload.readableBytes());
            }
            return new ContentHeader(classId, weight, bodySize, properties);
        } catch (FrameErrorException e) {
            throw new FrameErrorException("cannot decode content header: " + e.explanation());
        }
    }

    /**
     * Writes a content header payload.
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string property is longer than 255 octets
     */
    public static void encode(ByteBuf out, ContentHeader header) {
        out.writeShort(header.classId());
        out.writeShort(header.weight());
        out.writeLong(header.bodySize());
        BasicPropertiesCodec.write(out, header.properties());
    }

    /**
     * A content header payload as a heap buffer, for a header that was not received (one built from properties).
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string property is longer than 255 octets
     */
    public static ByteBuffer encoded(ContentHeader header) {
        ByteBuf out = Unpooled.buffer(64);
        encode(out, header);
        return ByteBuffer.wrap(out.array(), out.arrayOffset() + out.readerIndex(), out.readableBytes());
    }

    /** The body size field of a content header payload. */
    public static long bodySize(ByteBuffer payload) {
        return payload.getLong(payload.position() + BODY_SIZE_OFFSET);
    }

    /** The first property flags word of a content header payload: which properties it holds. */
    public static int propertyFlags(ByteBuffer payload) {
        return payload.getShort(payload.position() + BODY_SIZE_OFFSET + Long.BYTES) & 0xFFFF;
    }

    /** The class id field of a content header payload. */
    public static int classId(ByteBuffer payload) {
        return payload.getShort(payload.position()) & 0xFFFF;
    }

    /**
     * The properties of a content header payload, decoded; {@code payload}'s position is not moved.
     *
     * @throws FrameErrorException when it is malformed
     */
    public static BasicProperties properties(ByteBuffer payload) {
        return decode(Unpooled.wrappedBuffer(payload.duplicate())).properties();
    }

    private static FrameErrorException tooShort(int size) {
        return new FrameErrorException(
                "content header payload of " + size + " octets is shorter than " + HEADER_MIN_LENGTH);
    }

    private static FrameErrorException trailing(int octets) {
        return new FrameErrorException(octets + " unexpected octets after the last property");
    }
}
