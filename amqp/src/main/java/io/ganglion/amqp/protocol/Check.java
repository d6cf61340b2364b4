package io.ganglion.amqp.protocol;

import java.util.Objects;

/** Range checks for the unsigned AMQP integer types, used by the records' constructors. */
final class Check {
    static final long UINT32_MAX = 0xFFFF_FFFFL;

    private Check() {}

    static int octet(int value, String field) {
        if (value < 0 || value > 0xFF) {
            throw outOfRange(field, value, 0xFF);
        }
        return value;
    }

    static int ushort(int value, String field) {
        if (value < 0 || value > 0xFFFF) {
            throw outOfRange(field, value, 0xFFFF);
        }
        return value;
    }

    static long uint(long value, String field) {
        if (value < 0 || value > UINT32_MAX) {
            throw outOfRange(field, value, UINT32_MAX);
        }
        return value;
    }

    static <T> T present(T value, String field) {
        return Objects.requireNonNull(value, field);
    }

    private static IllegalArgumentException outOfRange(String field, long value, long max) {
        return new IllegalArgumentException(field + " must be in [0, " + max + "], was " + value);
    }
}
