package io.ganglion.amqp.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The AMQP long string: up to 2^32 - 1 octets with no encoding promised. SASL responses, secrets and field table
 * strings are bytes, not text, so they are kept as bytes. Immutable.
 */
public final class LongString {
    public static final LongString EMPTY = new LongString(new byte[0]);

    private final byte[] bytes;

    private LongString(byte[] bytes) {
        this.bytes = bytes;
    }

    /** The UTF-8 encoding of {@code text}. */
    public static LongString of(String text) {
        return new LongString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** A copy of {@code bytes}. */
    public static LongString copyOf(byte[] bytes) {
        return bytes.length == 0 ? EMPTY : new LongString(bytes.clone());
    }

    /** A copy of {@code length} octets of {@code bytes} from {@code offset}. */
    public static LongString copyOf(byte[] bytes, int offset, int length) {
        return length == 0 ? EMPTY : new LongString(Arrays.copyOfRange(bytes, offset, offset + length));
    }

    /** A copy of the remaining octets of {@code bytes}, which is consumed. */
    public static LongString copyOf(ByteBuffer bytes) {
        if (!bytes.hasRemaining()) {
            return EMPTY;
        }
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(copy);
        return new LongString(copy);
    }

    public int length() {
        return bytes.length;
    }

    public boolean isEmpty() {
        return bytes.length == 0;
    }

    public byte byteAt(int index) {
        return bytes[index];
    }

    /** A copy of the octets. */
    public byte[] toByteArray() {
        return bytes.clone();
    }

    /** A read-only view of the octets, for writing them out without a copy. */
    public ByteBuffer asReadOnlyByteBuffer() {
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
    }

    /** The octets decoded as UTF-8, malformed sequences replaced. */
    @Override
    public String toString() {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object other) {
        return this == other || other instanceof LongString that && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }
}
