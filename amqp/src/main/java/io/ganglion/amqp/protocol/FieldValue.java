package io.ganglion.amqp.protocol;

import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;

/**
 * A value in a field table or field array, one record per type RabbitMQ reads and writes. The codec maps each record
 * to its type tag:
 *
 * <pre>
 * t Bool      b Int8     B UInt8    s Int16    u UInt16   I Int32    i UInt32   l Int64
 * f Float32   d Float64  D Decimal  S LongStr  x Bytes    A Array    T Timestamp
 * F Table     V VoidValue
 * </pre>
 *
 * RabbitMQ also reads {@code L} as a signed 64-bit integer (its errata); we decode it to {@link Int64}, which is written
 * back as {@code l}, as RabbitMQ does.
 */
public sealed interface FieldValue {
    /** {@code t}: a boolean octet; any non-zero octet reads as true. */
    record Bool(boolean value) implements FieldValue {}

    /** {@code b}: a signed octet. */
    record Int8(byte value) implements FieldValue {}

    /** {@code B}: an unsigned octet. */
    record UInt8(int value) implements FieldValue {
        public UInt8 {
            Check.octet(value, "value");
        }
    }

    /** {@code s}: a signed 16-bit integer. */
    record Int16(short value) implements FieldValue {}

    /** {@code u}: an unsigned 16-bit integer. */
    record UInt16(int value) implements FieldValue {
        public UInt16 {
            Check.ushort(value, "value");
        }
    }

    /** {@code I}: a signed 32-bit integer. */
    record Int32(int value) implements FieldValue {}

    /** {@code i}: an unsigned 32-bit integer. */
    record UInt32(long value) implements FieldValue {
        public UInt32 {
            Check.uint(value, "value");
        }
    }

    /** {@code l}: a signed 64-bit integer. */
    record Int64(long value) implements FieldValue {}

    /** {@code f}: an IEEE 754 single. */
    record Float32(float value) implements FieldValue {}

    /** {@code d}: an IEEE 754 double. */
    record Float64(double value) implements FieldValue {}

    /**
     * {@code D}: a scale octet and an unsigned 32-bit unscaled value, read unsigned as RabbitMQ reads it; the value is
     * {@code unscaledValue / 10^scale}.
     */
    record Decimal(int scale, long unscaledValue) implements FieldValue {
        public Decimal {
            Check.octet(scale, "scale");
            Check.uint(unscaledValue, "unscaledValue");
        }

        public BigDecimal toBigDecimal() {
            return BigDecimal.valueOf(unscaledValue, scale);
        }
    }

    /** {@code S}: a long string, octets with no encoding promised. */
    record LongStr(LongString value) implements FieldValue {
        public LongStr {
            Objects.requireNonNull(value, "value");
        }
    }

    /** {@code x}: a byte array, encoded as a long string is. */
    record Bytes(LongString value) implements FieldValue {
        public Bytes {
            Objects.requireNonNull(value, "value");
        }
    }

    /** {@code A}: a field array. */
    record Array(List<FieldValue> values) implements FieldValue {
        public Array {
            values = List.copyOf(values);
        }
    }

    /** {@code T}: seconds since the epoch as an unsigned 64-bit integer (kept as its bits in a long). */
    record Timestamp(long epochSeconds) implements FieldValue {}

    /** {@code F}: a nested field table. */
    record Table(FieldTable value) implements FieldValue {
        public Table {
            Objects.requireNonNull(value, "value");
        }
    }

    /** {@code V}: no value. */
    record VoidValue() implements FieldValue {}

    VoidValue VOID = new VoidValue();

    /** A long string of the UTF-8 encoding of {@code text}, the type RabbitMQ gives every string argument. */
    static FieldValue of(String text) {
        return new LongStr(LongString.of(text));
    }

    static FieldValue of(boolean value) {
        return new Bool(value);
    }

    static FieldValue of(int value) {
        return new Int32(value);
    }

    static FieldValue of(long value) {
        return new Int64(value);
    }

    static FieldValue of(FieldTable table) {
        return new Table(table);
    }
}
