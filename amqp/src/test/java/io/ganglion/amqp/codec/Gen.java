package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.LongString;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A small seeded generator of AMQP values. The same seed gives the same values, so a failing seed reproduces.
 *
 * <p>With {@code javaSymmetric}, field values are limited to the types the RabbitMQ Java client both writes and reads
 * back as themselves (no {@code B}, {@code u}, {@code i}; decimals and timestamps in the ranges its {@code BigDecimal}
 * and {@code Date} carry), so our bytes and its bytes can be compared exactly.
 */
final class Gen {
    /** Characters of 1, 2, 3 and 4 (a surrogate pair) UTF-8 octets. */
    private static final String[] TEXT = {"a", "Z", "0", "-", ".", " ", "é", "ß", "€", "中", "\uD834\uDD1E"};

    private static final int MAX_DEPTH = 3;

    final long seed;
    private final SplittableRandom random;
    private final boolean javaSymmetric;

    Gen(long seed) {
        this(seed, false);
    }

    Gen(long seed, boolean javaSymmetric) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
        this.javaSymmetric = javaSymmetric;
    }

    int nextInt(int bound) {
        return random.nextInt(bound);
    }

    int octet() {
        return random.nextInt(256);
    }

    int ushort() {
        return random.nextInt(0x10000);
    }

    long uint() {
        return random.nextBoolean() ? random.nextLong(0x1_0000_0000L) : random.nextLong(100);
    }

    long longlong() {
        return random.nextBoolean() ? random.nextLong() : random.nextLong(1000);
    }

    boolean bit() {
        return random.nextBoolean();
    }

    /** Up to 60 characters of up to 4 octets: always a valid short string. */
    String shortstr() {
        int length = random.nextInt(4) == 0 ? 0 : random.nextInt(61);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < length; i++) {
            text.append(TEXT[random.nextInt(TEXT.length)]);
        }
        return text.toString();
    }

    byte[] bytes(int maxLength) {
        byte[] bytes = new byte[random.nextInt(maxLength + 1)];
        random.nextBytes(bytes);
        return bytes;
    }

    LongString longstr() {
        return LongString.copyOf(bytes(64));
    }

    FieldTable table() {
        return table(0);
    }

    FieldTable table(int depth) {
        int size = random.nextInt(depth == 0 ? 7 : 4);
        Set<String> names = new HashSet<>();
        FieldTable.Builder table = FieldTable.builder();
        for (int i = 0; i < size; i++) {
            String name = shortstr();
            if (names.add(name)) {
                table.put(name, value(depth));
            }
        }
        return table.build();
    }

    FieldValue value(int depth) {
        int kinds = depth < MAX_DEPTH ? 17 : 15;
        return switch (random.nextInt(kinds)) {
            case 0 -> new FieldValue.Bool(bit());
            case 1 -> new FieldValue.Int8((byte) random.nextInt());
            case 2 -> javaSymmetric ? new FieldValue.Int32(random.nextInt()) : new FieldValue.UInt8(octet());
            case 3 -> new FieldValue.Int16((short) random.nextInt());
            case 4 -> javaSymmetric ? new FieldValue.Int64(random.nextLong()) : new FieldValue.UInt16(ushort());
            case 5 -> new FieldValue.Int32(random.nextInt());
            case 6 -> javaSymmetric ? new FieldValue.Int32(random.nextInt()) : new FieldValue.UInt32(uint());
            case 7 -> new FieldValue.Int64(random.nextLong());
            case 8 -> new FieldValue.Float32(float32());
            case 9 -> new FieldValue.Float64(float64());
            case 10 ->
                javaSymmetric
                        ? new FieldValue.Decimal(octet(), random.nextLong(Integer.MAX_VALUE))
                        : new FieldValue.Decimal(octet(), uint());
            case 11 -> new FieldValue.LongStr(longstr());
            case 12 -> new FieldValue.Bytes(longstr());
            case 13 -> new FieldValue.Timestamp(javaSymmetric ? random.nextLong(1L << 40) : random.nextLong());
            case 14 -> FieldValue.VOID;
            case 15 -> new FieldValue.Table(table(depth + 1));
            default -> new FieldValue.Array(array(depth + 1));
        };
    }

    List<FieldValue> array(int depth) {
        List<FieldValue> values = new ArrayList<>();
        int size = random.nextInt(4);
        for (int i = 0; i < size; i++) {
            values.add(value(depth));
        }
        return values;
    }

    /** Any float but NaN, whose payload the platform need not keep. */
    float float32() {
        float value = Float.intBitsToFloat(random.nextInt());
        return Float.isNaN(value) ? 1.5f : value;
    }

    double float64() {
        double value = Double.longBitsToDouble(random.nextLong());
        return Double.isNaN(value) ? -2.25 : value;
    }

    /** Each property present with probability one half. */
    BasicProperties properties() {
        return new BasicProperties(
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null,
                maybe() ? table() : null,
                maybe() ? octet() : null,
                maybe() ? octet() : null,
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null,
                maybe() ? (javaSymmetric ? random.nextLong(1L << 40) : longlong()) : null,
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null,
                maybe() ? shortstr() : null);
    }

    private boolean maybe() {
        return random.nextBoolean();
    }
}
