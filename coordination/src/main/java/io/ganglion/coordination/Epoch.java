package io.ganglion.coordination;

/** The generation of an object's assignment. Epoch 0 means "never activated"; the first activated epoch is 1. */
public record Epoch(long value) implements Comparable<Epoch> {
    public static final Epoch NONE = new Epoch(0);

    public Epoch {
        if (value < 0) {
            throw new IllegalArgumentException("epoch must not be negative: " + value);
        }
    }

    public static Epoch of(long value) {
        return new Epoch(value);
    }

    public Epoch next() {
        return new Epoch(value + 1);
    }

    public boolean isAfter(Epoch other) {
        return value > other.value;
    }

    @Override
    public int compareTo(Epoch other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
