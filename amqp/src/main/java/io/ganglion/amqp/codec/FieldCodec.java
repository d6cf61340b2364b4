package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.FrameDescriptor.MAX_FIELD_NESTING_DEPTH;
import static io.ganglion.amqp.codec.FrameDescriptor.SHORTSTR_MAX_LENGTH;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_ARRAY;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_BOOL;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_BYTES;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_DECIMAL;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_DOUBLE;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_FLOAT;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_INT16;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_INT32;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_INT64;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_INT64_ALT;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_INT8;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_LONGSTR;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_TABLE;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_TIMESTAMP;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_UINT16;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_UINT32;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_UINT8;
import static io.ganglion.amqp.codec.FrameDescriptor.TAG_VOID;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Short strings, long strings, field tables and field arrays.
 *
 * <pre>
 * shortstr:  length (octet), UTF-8 octets
 * longstr:   length (long), octets
 * table:     length (long), then entries until the length is used up:
 *            name (shortstr), type tag (octet), value
 * array:     length (long), then values until the length is used up:
 *            type tag (octet), value
 * </pre>
 *
 * Reads check every length against the octets present and turn any shortfall, unknown tag, malformed UTF-8 or excess
 * nesting into a {@link FrameErrorException} ({@code 501}). Writes refuse a short string over 255 octets or nesting
 * deeper than {@link FrameDescriptor#MAX_FIELD_NESTING_DEPTH} with a {@link SyntaxErrorException} ({@code 502}).
 *
 * <p>Short strings are decoded strictly: malformed UTF-8 is a frame error, as RabbitMQ's {@code assert_utf8} makes it
 * for names. RabbitMQ leaves some short strings unchecked (routing keys, property values); a client that sends
 * non-UTF-8 octets there is refused by us where RabbitMQ would carry the octets through.
 */
public final class FieldCodec {
    private FieldCodec() {}

    /** Reads a field table: its length, then its entries. */
    public static FieldTable readTable(ByteBuf in) {
        return readTable(in, 0);
    }

    /** Reads a field array: its length, then its values. */
    public static List<FieldValue> readArray(ByteBuf in) {
        return readArray(in, 0);
    }

    /** Writes a field table: its length, then its entries. */
    public static void writeTable(ByteBuf out, FieldTable table) {
        writeTable(out, table, 0);
    }

    /** Writes a field array: its length, then its values. */
    public static void writeArray(ByteBuf out, List<FieldValue> values) {
        writeArray(out, values, 0);
    }

    /** Reads a short string, strictly UTF-8. */
    public static String readShortstr(ByteBuf in) {
        need(in, 1);
        int length = in.readUnsignedByte();
        need(in, length);
        String value = decodeUtf8(in, in.readerIndex(), length);
        in.skipBytes(length);
        return value;
    }

    /** Writes a short string. @throws SyntaxErrorException when it is longer than 255 octets of UTF-8 */
    public static void writeShortstr(ByteBuf out, String value) {
        int length = ByteBufUtil.utf8Bytes(value);
        if (length > SHORTSTR_MAX_LENGTH) {
            throw shortstrTooLong(length);
        }
        out.writeByte(length);
        ByteBufUtil.writeUtf8(out, value);
    }

    public static LongString readLongstr(ByteBuf in) {
        int length = readLength(in);
        LongString value = LongString.copyOf(in.nioBuffer(in.readerIndex(), length));
        in.skipBytes(length);
        return value;
    }

    public static void writeLongstr(ByteBuf out, LongString value) {
        out.writeInt(value.length());
        out.writeBytes(value.asReadOnlyByteBuffer());
    }

    static FieldTable readTable(ByteBuf in, int depth) {
        ByteBuf table = in.readSlice(readLength(in));
        if (!table.isReadable()) {
            return FieldTable.EMPTY;
        }
        checkReadDepth(depth);
        List<FieldTable.Entry> entries = new ArrayList<>();
        while (table.isReadable()) {
            String name = readShortstr(table);
            entries.add(new FieldTable.Entry(name, readValue(table, depth)));
        }
        return new FieldTable(entries);
    }

    static List<FieldValue> readArray(ByteBuf in, int depth) {
        ByteBuf array = in.readSlice(readLength(in));
        if (!array.isReadable()) {
            return List.of();
        }
        checkReadDepth(depth);
        List<FieldValue> values = new ArrayList<>();
        while (array.isReadable()) {
            values.add(readValue(array, depth));
        }
        return values;
    }

    /** Reads a tagged value inside a table or array at {@code depth}. */
    static FieldValue readValue(ByteBuf in, int depth) {
        need(in, 1);
        int tag = in.readUnsignedByte();
        return switch (tag) {
            case TAG_LONGSTR -> new FieldValue.LongStr(readLongstr(in));
            case TAG_INT32 -> new FieldValue.Int32(need(in, 4).readInt());
            case TAG_BOOL -> new FieldValue.Bool(need(in, 1).readByte() != 0);
            case TAG_TABLE -> new FieldValue.Table(readTable(in, depth + 1));
            case TAG_ARRAY -> new FieldValue.Array(readArray(in, depth + 1));
            case TAG_INT64, TAG_INT64_ALT -> new FieldValue.Int64(need(in, 8).readLong());
            case TAG_TIMESTAMP -> new FieldValue.Timestamp(need(in, 8).readLong());
            case TAG_INT8 -> new FieldValue.Int8(need(in, 1).readByte());
            case TAG_UINT8 -> new FieldValue.UInt8(need(in, 1).readUnsignedByte());
            case TAG_INT16 -> new FieldValue.Int16(need(in, 2).readShort());
            case TAG_UINT16 -> new FieldValue.UInt16(need(in, 2).readUnsignedShort());
            case TAG_UINT32 -> new FieldValue.UInt32(need(in, 4).readUnsignedInt());
            case TAG_FLOAT -> new FieldValue.Float32(need(in, 4).readFloat());
            case TAG_DOUBLE -> new FieldValue.Float64(need(in, 8).readDouble());
            case TAG_DECIMAL -> new FieldValue.Decimal(need(in, 5).readUnsignedByte(), in.readUnsignedInt());
            case TAG_BYTES -> new FieldValue.Bytes(readLongstr(in));
            case TAG_VOID -> FieldValue.VOID;
            default -> throw unknownTag(tag);
        };
    }

    static void writeTable(ByteBuf out, FieldTable table, int depth) {
        int lengthIndex = out.writerIndex();
        out.writeInt(0);
        if (!table.isEmpty()) {
            checkWriteDepth(depth);
            for (FieldTable.Entry entry : table.entries()) {
                writeShortstr(out, entry.name());
                writeValue(out, entry.value(), depth);
            }
        }
        out.setInt(lengthIndex, out.writerIndex() - lengthIndex - 4);
    }

    static void writeArray(ByteBuf out, List<FieldValue> values, int depth) {
        int lengthIndex = out.writerIndex();
        out.writeInt(0);
        if (!values.isEmpty()) {
            checkWriteDepth(depth);
            for (FieldValue value : values) {
                writeValue(out, value, depth);
            }
        }
        out.setInt(lengthIndex, out.writerIndex() - lengthIndex - 4);
    }

    /** Writes a tagged value inside a table or array at {@code depth}. */
    static void writeValue(ByteBuf out, FieldValue value, int depth) {
        switch (value) {
            case FieldValue.LongStr v -> {
                out.writeByte(TAG_LONGSTR);
                writeLongstr(out, v.value());
            }
            case FieldValue.Int32 v -> out.writeByte(TAG_INT32).writeInt(v.value());
            case FieldValue.Bool v -> out.writeByte(TAG_BOOL).writeByte(v.value() ? 1 : 0);
            case FieldValue.Table v -> {
                out.writeByte(TAG_TABLE);
                writeTable(out, v.value(), depth + 1);
            }
            case FieldValue.Array v -> {
                out.writeByte(TAG_ARRAY);
                writeArray(out, v.values(), depth + 1);
            }
            case FieldValue.Int64 v -> out.writeByte(TAG_INT64).writeLong(v.value());
            case FieldValue.Timestamp v -> out.writeByte(TAG_TIMESTAMP).writeLong(v.epochSeconds());
            case FieldValue.Int8 v -> out.writeByte(TAG_INT8).writeByte(v.value());
            case FieldValue.UInt8 v -> out.writeByte(TAG_UINT8).writeByte(v.value());
            case FieldValue.Int16 v -> out.writeByte(TAG_INT16).writeShort(v.value());
            case FieldValue.UInt16 v -> out.writeByte(TAG_UINT16).writeShort(v.value());
            case FieldValue.UInt32 v -> out.writeByte(TAG_UINT32).writeInt((int) v.value());
            case FieldValue.Float32 v -> out.writeByte(TAG_FLOAT).writeFloat(v.value());
            case FieldValue.Float64 v -> out.writeByte(TAG_DOUBLE).writeDouble(v.value());
            case FieldValue.Decimal v ->
                out.writeByte(TAG_DECIMAL).writeByte(v.scale()).writeInt((int) v.unscaledValue());
            case FieldValue.Bytes v -> {
                out.writeByte(TAG_BYTES);
                writeLongstr(out, v.value());
            }
            case FieldValue.VoidValue v -> out.writeByte(TAG_VOID);
        }
    }

    /** Reads a long length and checks that many octets follow. */
    private static int readLength(ByteBuf in) {
        long length = need(in, 4).readUnsignedInt();
        if (length > in.readableBytes()) {
            throw truncated(length, in.readableBytes());
        }
        return (int) length;
    }

    private static ByteBuf need(ByteBuf in, int octets) {
        if (in.readableBytes() < octets) {
            throw truncated(octets, in.readableBytes());
        }
        return in;
    }

    /**
     * Decodes {@code length} octets at {@code index} as UTF-8, refusing malformed input. ASCII, by far the common case,
     * takes the fast path.
     */
    static String decodeUtf8(ByteBuf in, int index, int length) {
        if (length == 0) {
            return "";
        }
        if (in.forEachByte(index, length, b -> b >= 0) == -1) {
            return in.toString(index, length, StandardCharsets.US_ASCII);
        }
        byte[] bytes = new byte[length];
        in.getBytes(index, bytes);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw malformedUtf8();
        }
    }

    private static void checkReadDepth(int depth) {
        if (depth > MAX_FIELD_NESTING_DEPTH) {
            throw new FrameErrorException(
                    "field tables and arrays nested deeper than " + MAX_FIELD_NESTING_DEPTH + " levels");
        }
    }

    private static void checkWriteDepth(int depth) {
        if (depth > MAX_FIELD_NESTING_DEPTH) {
            throw new SyntaxErrorException(
                    "field tables and arrays nested deeper than " + MAX_FIELD_NESTING_DEPTH + " levels");
        }
    }

    static FrameErrorException truncated(long needed, int available) {
        return new FrameErrorException("truncated: needed " + needed + " octets, " + available + " left");
    }

    private static FrameErrorException unknownTag(int tag) {
        return new FrameErrorException("unknown field value type tag " + describeTag(tag));
    }

    private static FrameErrorException malformedUtf8() {
        return new FrameErrorException("malformed UTF-8 in shortstr");
    }

    private static SyntaxErrorException shortstrTooLong(int length) {
        return new SyntaxErrorException(
                "shortstr of " + length + " octets is longer than " + SHORTSTR_MAX_LENGTH + " octets");
    }

    private static String describeTag(int tag) {
        return tag >= 0x21 && tag < 0x7F ? "'" + (char) tag + "'" : "0x" + Integer.toHexString(tag);
    }
}
