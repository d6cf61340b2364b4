package io.ganglion.amqp.codec;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.LongStringHelper;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.LongString;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Our values to the RabbitMQ Java client's ({@code LongString}, {@code Map<String, Object>}, {@code AMQP.BasicProperties})
 * and back. The Java client reads tables into {@code HashMap}s, so comparisons go through {@link #sorted}.
 */
final class JavaClientValues {
    private JavaClientValues() {}

    static com.rabbitmq.client.LongString longString(LongString value) {
        return LongStringHelper.asLongString(value.toByteArray());
    }

    static LongString longString(com.rabbitmq.client.LongString value) {
        return LongString.copyOf(value.getBytes());
    }

    static Map<String, Object> javaTable(FieldTable table) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (FieldTable.Entry entry : table.entries()) {
            map.put(entry.name(), javaValue(entry.value()));
        }
        return map;
    }

    static Object javaValue(FieldValue value) {
        return switch (value) {
            case FieldValue.Bool v -> v.value();
            case FieldValue.Int8 v -> v.value();
            case FieldValue.UInt8 v -> v.value();
            case FieldValue.Int16 v -> v.value();
            case FieldValue.UInt16 v -> v.value();
            case FieldValue.Int32 v -> v.value();
            case FieldValue.UInt32 v -> v.value();
            case FieldValue.Int64 v -> v.value();
            case FieldValue.Float32 v -> v.value();
            case FieldValue.Float64 v -> v.value();
            case FieldValue.Decimal v -> new BigDecimal(BigInteger.valueOf(v.unscaledValue()), v.scale());
            case FieldValue.LongStr v -> longString(v.value());
            case FieldValue.Bytes v -> v.value().toByteArray();
            case FieldValue.Timestamp v -> new Date(v.epochSeconds() * 1000);
            case FieldValue.Table v -> javaTable(v.value());
            case FieldValue.Array v ->
                v.values().stream().map(JavaClientValues::javaValue).toList();
            case FieldValue.VoidValue v -> null;
        };
    }

    static FieldTable table(Map<String, Object> map) {
        if (map == null) {
            return null;
        }
        FieldTable.Builder table = FieldTable.builder();
        map.forEach((name, value) -> table.put(name, value(value)));
        return table.build();
    }

    @SuppressWarnings("unchecked")
    static FieldValue value(Object value) {
        return switch (value) {
            case null -> FieldValue.VOID;
            case Boolean v -> new FieldValue.Bool(v);
            case Byte v -> new FieldValue.Int8(v);
            case Short v -> new FieldValue.Int16(v);
            case Integer v -> new FieldValue.Int32(v);
            case Long v -> new FieldValue.Int64(v);
            case Float v -> new FieldValue.Float32(v);
            case Double v -> new FieldValue.Float64(v);
            case BigDecimal v ->
                new FieldValue.Decimal(v.scale(), v.unscaledValue().longValueExact());
            case Date v -> new FieldValue.Timestamp(v.getTime() / 1000);
            case com.rabbitmq.client.LongString v -> new FieldValue.LongStr(longString(v));
            case String v -> FieldValue.of(v);
            case byte[] v -> new FieldValue.Bytes(LongString.copyOf(v));
            case Map<?, ?> v -> new FieldValue.Table(table((Map<String, Object>) v));
            case List<?> v ->
                new FieldValue.Array(v.stream().map(JavaClientValues::value).toList());
            default -> throw new IllegalArgumentException("no field value for " + value.getClass());
        };
    }

    static AMQP.BasicProperties toJava(BasicProperties p) {
        return new AMQP.BasicProperties(
                p.contentType(),
                p.contentEncoding(),
                p.headers() == null ? null : javaTable(p.headers()),
                p.deliveryMode(),
                p.priority(),
                p.correlationId(),
                p.replyTo(),
                p.expiration(),
                p.messageId(),
                p.timestamp() == null ? null : new Date(p.timestamp() * 1000),
                p.type(),
                p.userId(),
                p.appId(),
                p.clusterId());
    }

    static BasicProperties fromJava(AMQP.BasicProperties p) {
        return new BasicProperties(
                p.getContentType(),
                p.getContentEncoding(),
                table(p.getHeaders()),
                p.getDeliveryMode(),
                p.getPriority(),
                p.getCorrelationId(),
                p.getReplyTo(),
                p.getExpiration(),
                p.getMessageId(),
                p.getTimestamp() == null ? null : p.getTimestamp().getTime() / 1000,
                p.getType(),
                p.getUserId(),
                p.getAppId(),
                p.getClusterId());
    }

    /** {@code table} with entries sorted by name at every level, for comparing with what came from a HashMap. */
    static FieldTable sorted(FieldTable table) {
        List<FieldTable.Entry> entries = new ArrayList<>();
        for (FieldTable.Entry entry : table.entries()) {
            entries.add(new FieldTable.Entry(entry.name(), sorted(entry.value())));
        }
        entries.sort(Comparator.comparing(FieldTable.Entry::name));
        return new FieldTable(entries);
    }

    private static FieldValue sorted(FieldValue value) {
        return switch (value) {
            case FieldValue.Table v -> new FieldValue.Table(sorted(v.value()));
            case FieldValue.Array v ->
                new FieldValue.Array(
                        v.values().stream().map(JavaClientValues::sorted).toList());
            default -> value;
        };
    }

    /** A copy of a record (a method or properties) with every field table in it {@link #sorted}. */
    @SuppressWarnings("unchecked")
    static <T extends Record> T sortedTables(T record) {
        try {
            RecordComponent[] components = record.getClass().getRecordComponents();
            Object[] values = new Object[components.length];
            Class<?>[] types = new Class<?>[components.length];
            for (int i = 0; i < components.length; i++) {
                Object value = components[i].getAccessor().invoke(record);
                values[i] = value instanceof FieldTable table ? sorted(table) : value;
                types[i] = components[i].getType();
            }
            return (T) record.getClass().getDeclaredConstructor(types).newInstance(values);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
