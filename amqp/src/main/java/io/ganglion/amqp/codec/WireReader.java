package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.LongString;
import io.netty.buffer.ByteBuf;

/**
 * Reads AMQP argument types from a buffer holding exactly one method's arguments (or a content header's properties).
 * Every read checks the octets are there first, so a short payload is a {@link FrameErrorException}, never an
 * {@link IndexOutOfBoundsException}.
 *
 * <p>Consecutive bit fields share octets: the first bit is the low bit of a fresh octet, up to eight per octet. Any other
 * field ends the run.
 */
final class WireReader {
    private final ByteBuf in;
    private int bits;
    /** The mask of the next bit in {@link #bits}; 0 when no bit octet is open. */
    private int bitMask;

    WireReader(ByteBuf in) {
        this.in = in;
    }

    int octet() {
        closeBits();
        need(1);
        return in.readUnsignedByte();
    }

    int ushort() {
        closeBits();
        need(2);
        return in.readUnsignedShort();
    }

    long uint() {
        closeBits();
        need(4);
        return in.readUnsignedInt();
    }

    long longlong() {
        closeBits();
        need(8);
        return in.readLong();
    }

    boolean bit() {
        if (bitMask == 0 || bitMask == 0x100) {
            bitMask = 1;
            need(1);
            bits = in.readUnsignedByte();
        }
        boolean value = (bits & bitMask) != 0;
        bitMask <<= 1;
        return value;
    }

    String shortstr() {
        closeBits();
        return FieldCodec.readShortstr(in);
    }

    LongString longstr() {
        closeBits();
        return FieldCodec.readLongstr(in);
    }

    FieldTable table() {
        closeBits();
        return FieldCodec.readTable(in);
    }

    /**
     * Checks that nothing is left.
     *
     * @throws FrameErrorException when octets remain after the last field
     */
    void end() {
        if (in.isReadable()) {
            throw trailing(in.readableBytes());
        }
    }

    /** Any field but a bit ends a run of bits: the next bit starts a fresh octet. */
    private void closeBits() {
        bitMask = 0;
    }

    private void need(int octets) {
        if (in.readableBytes() < octets) {
            throw FieldCodec.truncated(octets, in.readableBytes());
        }
    }

    private static FrameErrorException trailing(int octets) {
        return new FrameErrorException(octets + " unexpected octets after the last field");
    }
}
