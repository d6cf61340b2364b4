package io.ganglion.amqp.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An AMQP field table: named values in wire order. RabbitMQ keeps a table as a list, not a map, so the order is kept and
 * a repeated name survives a round trip; lookups find the first entry of a name, as {@code rabbit_misc:table_lookup}
 * does.
 */
public record FieldTable(List<Entry> entries) {
    public static final FieldTable EMPTY = new FieldTable(List.of());

    /** One named value. The name is a short string: at most 255 octets of UTF-8, checked when encoded. */
    public record Entry(String name, FieldValue value) {
        public Entry {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }

    public FieldTable {
        entries = List.copyOf(entries);
    }

    public static Builder builder() {
        return new Builder();
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    public int size() {
        return entries.size();
    }

    /** The value of the first entry named {@code name}. */
    public Optional<FieldValue> get(String name) {
        for (Entry entry : entries) {
            if (entry.name().equals(name)) {
                return Optional.of(entry.value());
            }
        }
        return Optional.empty();
    }

    /** This table with the first entry named {@code name} replaced by {@code value}, or with it appended. */
    public FieldTable with(String name, FieldValue value) {
        List<Entry> copy = new ArrayList<>(entries);
        for (int i = 0; i < copy.size(); i++) {
            if (copy.get(i).name().equals(name)) {
                copy.set(i, new Entry(name, value));
                return new FieldTable(copy);
            }
        }
        copy.add(new Entry(name, value));
        return new FieldTable(copy);
    }

    /** Collects entries in order. */
    public static final class Builder {
        private final List<Entry> entries = new ArrayList<>();

        private Builder() {}

        public Builder put(String name, FieldValue value) {
            entries.add(new Entry(name, value));
            return this;
        }

        /** A long string entry, the type RabbitMQ gives string arguments. */
        public Builder put(String name, String value) {
            return put(name, FieldValue.of(value));
        }

        public Builder put(String name, boolean value) {
            return put(name, FieldValue.of(value));
        }

        public Builder put(String name, int value) {
            return put(name, FieldValue.of(value));
        }

        public Builder put(String name, long value) {
            return put(name, FieldValue.of(value));
        }

        public Builder put(String name, FieldTable value) {
            return put(name, FieldValue.of(value));
        }

        public FieldTable build() {
            return new FieldTable(entries);
        }
    }
}
