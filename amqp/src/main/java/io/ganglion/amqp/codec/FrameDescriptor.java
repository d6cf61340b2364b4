package io.ganglion.amqp.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The binary layout of AMQP 0-9-1 as RabbitMQ speaks it: the protocol header, frames, content headers and field tables.
 * Every offset, length and tag the codec uses is here.
 *
 * <pre>
 * Protocol header, sent once by the client:
 * +---+---+---+---+---+---+---+---+
 * | A | M | Q | P | 0 | 0 | 9 | 1 |
 * +---+---+---+---+---+---+---+---+
 *
 * Frame:
 * 0      1         3             7                  7 + size   8 + size
 * +------+---------+-------------+------------------+----------+
 * | type | channel | size        | payload          | 0xCE     |
 * | octet| short   | long        | size octets      | frame-end|
 * +------+---------+-------------+------------------+----------+
 *
 * Method payload:           class id (short), method id (short), arguments
 * Content header payload:   class id (short), weight (short, 0), body size (longlong),
 *                           property flags (short, bit 15 first property, bit 0 continuation), properties
 * Body payload:             a slice of the content body
 * Heartbeat payload:        empty, channel 0
 * </pre>
 *
 * All integers are big-endian (network order).
 */
public final class FrameDescriptor {
    /** {@code "AMQP" 0 0 9 1}: the header of AMQP 0-9-1, which we send back to a client that opened with another. */
    private static final byte[] PROTOCOL_HEADER = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};

    /** {@code "AMQP" 1 1 0 9}: the header of AMQP 0-9, which RabbitMQ accepts and speaks 0-9-1 to. */
    private static final byte[] PROTOCOL_HEADER_0_9 = {'A', 'M', 'Q', 'P', 1, 1, 0, 9};

    public static final int PROTOCOL_HEADER_LENGTH = 8;

    public static final int FRAME_METHOD = 1;
    public static final int FRAME_HEADER = 2;
    public static final int FRAME_BODY = 3;
    public static final int FRAME_HEARTBEAT = 8;

    public static final int FRAME_END = 0xCE;

    public static final int TYPE_OFFSET = 0;
    public static final int CHANNEL_OFFSET = 1;
    public static final int SIZE_OFFSET = 3;
    /** Type, channel and size: what precedes the payload. */
    public static final int FRAME_HEADER_LENGTH = 7;

    public static final int FRAME_END_LENGTH = 1;
    /** The octets a frame adds around its payload; RabbitMQ's {@code EMPTY_FRAME_SIZE}. */
    public static final int FRAME_OVERHEAD = FRAME_HEADER_LENGTH + FRAME_END_LENGTH;

    /**
     * The smallest {@code frame_max} a peer may negotiate, and the limit in force before {@code tune-ok}
     * (RabbitMQ's {@code initial_frame_max}).
     */
    public static final int FRAME_MIN_SIZE = 4096;

    /**
     * Octets a frame may exceed {@code frame_max} by and still be accepted. RabbitMQ allows it "since quite a few clients
     * get it wrong - off-by 1 or 8 (empty frame size) are typical", so we do too.
     */
    public static final int FRAME_SIZE_FUDGE = FRAME_OVERHEAD;

    /** The highest channel number. */
    public static final int CHANNEL_MAX = 0xFFFF;

    public static final int METHOD_CLASS_ID_OFFSET = 0;
    public static final int METHOD_METHOD_ID_OFFSET = 2;
    public static final int METHOD_ARGUMENTS_OFFSET = 4;

    public static final int HEADER_CLASS_ID_OFFSET = 0;
    public static final int HEADER_WEIGHT_OFFSET = 2;
    public static final int HEADER_BODY_SIZE_OFFSET = 4;
    public static final int HEADER_PROPERTY_FLAGS_OFFSET = 12;
    /** Class id, weight, body size and one flag word. */
    public static final int HEADER_MIN_LENGTH = 14;

    /** The property flag bit that says another flag word follows. */
    public static final int PROPERTY_FLAG_CONTINUATION = 1;

    /** Flag bits of the 14 basic properties, in the order they follow the flags. */
    public static final int FLAG_CONTENT_TYPE = 1 << 15;

    public static final int FLAG_CONTENT_ENCODING = 1 << 14;
    public static final int FLAG_HEADERS = 1 << 13;
    public static final int FLAG_DELIVERY_MODE = 1 << 12;
    public static final int FLAG_PRIORITY = 1 << 11;
    public static final int FLAG_CORRELATION_ID = 1 << 10;
    public static final int FLAG_REPLY_TO = 1 << 9;
    public static final int FLAG_EXPIRATION = 1 << 8;
    public static final int FLAG_MESSAGE_ID = 1 << 7;
    public static final int FLAG_TIMESTAMP = 1 << 6;
    public static final int FLAG_TYPE = 1 << 5;
    public static final int FLAG_USER_ID = 1 << 4;
    public static final int FLAG_APP_ID = 1 << 3;
    public static final int FLAG_CLUSTER_ID = 1 << 2;

    /**
     * The largest content body accepted: RabbitMQ's {@code ?MAX_MSG_SIZE} (512 MiB). A larger declared body size is a
     * {@code 501 FRAME_ERROR}, as in RabbitMQ's command assembler.
     */
    public static final long MAX_BODY_SIZE = 536_870_912L;

    public static final int SHORTSTR_MAX_LENGTH = 255;

    /**
     * How deep field tables and arrays may nest inside one another. RabbitMQ sets no limit; the Java client stops at 32.
     * We must stop somewhere, or a frame of nested empty arrays would exhaust the decoder's stack.
     */
    public static final int MAX_FIELD_NESTING_DEPTH = 64;

    public static final int TAG_BOOL = 't';
    public static final int TAG_INT8 = 'b';
    public static final int TAG_UINT8 = 'B';
    public static final int TAG_INT16 = 's';
    public static final int TAG_UINT16 = 'u';
    public static final int TAG_INT32 = 'I';
    public static final int TAG_UINT32 = 'i';
    public static final int TAG_INT64 = 'l';
    /** Read as a signed 64-bit integer, as RabbitMQ reads it (its errata); never written. */
    public static final int TAG_INT64_ALT = 'L';

    public static final int TAG_FLOAT = 'f';
    public static final int TAG_DOUBLE = 'd';
    public static final int TAG_DECIMAL = 'D';
    public static final int TAG_LONGSTR = 'S';
    public static final int TAG_BYTES = 'x';
    public static final int TAG_ARRAY = 'A';
    public static final int TAG_TIMESTAMP = 'T';
    public static final int TAG_TABLE = 'F';
    public static final int TAG_VOID = 'V';

    private FrameDescriptor() {}

    /** A new buffer holding our protocol header, to send to a client that opened with another. */
    public static ByteBuf protocolHeader() {
        return Unpooled.wrappedBuffer(PROTOCOL_HEADER.clone());
    }

    /** Whether the 8 octets at {@code index} are a protocol header we speak: 0-9-1, or 0-9 as RabbitMQ accepts it. */
    public static boolean isSupportedProtocolHeader(ByteBuf buffer, int index) {
        return matches(buffer, index, PROTOCOL_HEADER) || matches(buffer, index, PROTOCOL_HEADER_0_9);
    }

    public static int frameType(ByteBuf buffer, int frameIndex) {
        return buffer.getUnsignedByte(frameIndex + TYPE_OFFSET);
    }

    public static int channel(ByteBuf buffer, int frameIndex) {
        return buffer.getUnsignedShort(frameIndex + CHANNEL_OFFSET);
    }

    public static long payloadSize(ByteBuf buffer, int frameIndex) {
        return buffer.getUnsignedInt(frameIndex + SIZE_OFFSET);
    }

    /**
     * The largest payload accepted under {@code frameMax}, fudge included; {@code frameMax} 0 means no negotiated limit,
     * and then only what a buffer can index.
     */
    public static long payloadLimit(int frameMax) {
        return frameMax == 0 ? Integer.MAX_VALUE - FRAME_OVERHEAD : frameMax - FRAME_OVERHEAD + FRAME_SIZE_FUDGE;
    }

    /** The largest body payload we send in one frame under {@code frameMax}: {@code frame_max - 8}. */
    public static int maxBodyPayload(int frameMax) {
        return frameMax == 0 ? Integer.MAX_VALUE - FRAME_OVERHEAD : frameMax - FRAME_OVERHEAD;
    }

    /**
     * Checks a {@code frame_max} value: 0 (no limit) or at least {@link #FRAME_MIN_SIZE}.
     *
     * @throws IllegalArgumentException otherwise
     */
    public static int checkFrameMax(int frameMax) {
        if (frameMax != 0 && frameMax < FRAME_MIN_SIZE) {
            throw new IllegalArgumentException("frame_max must be 0 or at least " + FRAME_MIN_SIZE + ", was "
                    + Integer.toUnsignedString(frameMax));
        }
        return frameMax;
    }

    /**
     * Checks a channel number.
     *
     * @throws IllegalArgumentException when it is not in [0, 65535]
     */
    public static int checkChannel(int channel) {
        if (channel < 0 || channel > CHANNEL_MAX) {
            throw new IllegalArgumentException("channel must be in [0, " + CHANNEL_MAX + "], was " + channel);
        }
        return channel;
    }

    private static boolean matches(ByteBuf buffer, int index, byte[] header) {
        for (int i = 0; i < header.length; i++) {
            if (buffer.getByte(index + i) != header[i]) {
                return false;
            }
        }
        return true;
    }
}
