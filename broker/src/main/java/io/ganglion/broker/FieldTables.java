package io.ganglion.broker;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AMQP field tables as the plain Java values routing and metadata work with: strings for long strings, boxed numbers,
 * byte arrays, lists, maps, and {@code null} for void. The first entry of a repeated name wins, as RabbitMQ reads it.
 */
final class FieldTables {
    private FieldTables() {}

    static Map<String, Object> toPlain(FieldTable table) {
        if (table == null || table.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> plain = new LinkedHashMap<>();
        for (FieldTable.Entry entry : table.entries()) {
            if (!plain.containsKey(entry.name())) {
                plain.put(entry.name(), toPlain(entry.value()));
            }
        }
        return Collections.unmodifiableMap(plain);
    }

    static Object toPlain(FieldValue value) {
        return switch (value) {
            case FieldValue.Bool v -> v.value();
            case FieldValue.Int8 v -> v.value();
            case FieldValue.UInt8 v -> (short) v.value();
            case FieldValue.Int16 v -> v.value();
            case FieldValue.UInt16 v -> v.value();
            case FieldValue.Int32 v -> v.value();
            case FieldValue.UInt32 v -> v.value();
            case FieldValue.Int64 v -> v.value();
            case FieldValue.Float32 v -> v.value();
            case FieldValue.Float64 v -> v.value();
            case FieldValue.Decimal v -> v.toBigDecimal();
            case FieldValue.LongStr v -> new String(v.value().toByteArray(), StandardCharsets.UTF_8);
            case FieldValue.Bytes v -> v.value().toByteArray();
            case FieldValue.Array v -> {
                List<Object> list = new ArrayList<>(v.values().size());
                for (FieldValue element : v.values()) {
                    list.add(toPlain(element));
                }
                yield Collections.unmodifiableList(list);
            }
            case FieldValue.Timestamp v -> v.epochSeconds();
            case FieldValue.Table v -> toPlain(v.value());
            case FieldValue.VoidValue v -> null;
        };
    }

    /** A whole number argument ({@code x-priority}, {@code x-quorum-initial-group-size}), if it is one. */
    static Long integral(Object value) {
        return value instanceof Number number
                        && !(number instanceof Float)
                        && !(number instanceof Double)
                        && !(number instanceof java.math.BigDecimal)
                ? number.longValue()
                : null;
    }
}
