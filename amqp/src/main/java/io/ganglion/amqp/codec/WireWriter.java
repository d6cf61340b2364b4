package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.netty.buffer.ByteBuf;

/**
 * Writes AMQP argument types to a buffer, packing consecutive bits into octets (low bit first, up to eight per octet).
 * Call {@link #finish()} after the last field so a trailing run of bits is written.
 */
final class WireWriter {
    private final ByteBuf out;
    private int bits;
    private int bitCount;

    WireWriter(ByteBuf out) {
        this.out = out;
    }

    void octet(int value) {
        flushBits();
        out.writeByte(value);
    }

    void ushort(int value) {
        flushBits();
        out.writeShort(value);
    }

    void uint(long value) {
        flushBits();
        out.writeInt((int) value);
    }

    void longlong(long value) {
        flushBits();
        out.writeLong(value);
    }

    void bit(boolean value) {
        if (bitCount == 8) {
            flushBits();
        }
        if (value) {
            bits |= 1 << bitCount;
        }
        bitCount++;
    }

    /** @throws SyntaxErrorException when {@code value} is longer than 255 octets of UTF-8 */
    void shortstr(String value) {
        flushBits();
        FieldCodec.writeShortstr(out, value);
    }

    void longstr(LongString value) {
        flushBits();
        FieldCodec.writeLongstr(out, value);
    }

    /** @throws SyntaxErrorException when a name is too long or tables nest too deep */
    void table(FieldTable value) {
        flushBits();
        FieldCodec.writeTable(out, value);
    }

    void finish() {
        flushBits();
    }

    private void flushBits() {
        if (bitCount > 0) {
            out.writeByte(bits);
            bits = 0;
            bitCount = 0;
        }
    }
}
