package io.ganglion.broker;

import static io.ganglion.broker.Failures.failure;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.ReplyCode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * RabbitMQ's sender-selected distribution: the {@code CC} and {@code BCC} headers, arrays of long strings, add routing
 * keys to a publish, and {@code BCC} is removed from the message before it is stored. An entry that is not a long
 * string adds nothing; a header that is not an array refuses the publish with 406, as RabbitMQ 3.10 (docs/amqp.md,
 * "Sender-selected distribution").
 */
final class SenderSelected {
    static final String CC = "CC";
    static final String BCC = "BCC";

    private SenderSelected() {}

    /**
     * The publish's routing key, then the CC keys, then the BCC keys.
     *
     * @throws BrokerFailure 406 when {@code CC} or {@code BCC} is there and not an array
     */
    static List<String> routingKeys(String routingKey, BasicProperties properties) {
        FieldTable headers = properties.headers();
        if (headers == null || headers.isEmpty()) {
            return List.of(routingKey);
        }
        List<String> keys = new ArrayList<>(1);
        keys.add(routingKey);
        addKeys(headers, CC, keys);
        addKeys(headers, BCC, keys);
        return keys;
    }

    /** The content header to store: {@code header} itself, or without the BCC entry when it has one. */
    static ByteBuffer stored(BasicProperties properties, ByteBuffer header) {
        FieldTable headers = properties.headers();
        if (headers == null || headers.get(BCC).isEmpty()) {
            return header;
        }
        List<FieldTable.Entry> kept = new ArrayList<>(headers.size());
        for (FieldTable.Entry entry : headers.entries()) {
            if (!entry.name().equals(BCC)) {
                kept.add(entry);
            }
        }
        BasicProperties without =
                properties.toBuilder().headers(new FieldTable(kept)).build();
        return ContentHeaderCodec.encoded(
                new ContentHeader(ContentHeaderCodec.classId(header), 0, ContentHeaderCodec.bodySize(header), without));
    }

    private static void addKeys(FieldTable headers, String name, List<String> keys) {
        FieldValue found = headers.get(name).orElse(null);
        if (found == null) {
            return;
        }
        if (!(found instanceof FieldValue.Array array)) {
            throw failure(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid message: {unacceptable_type_in_header,\"" + name + "\"," + QueueArguments.typeName(found)
                            + "}");
        }
        for (FieldValue value : array.values()) {
            if (value instanceof FieldValue.LongStr key) {
                keys.add(new String(key.value().toByteArray(), StandardCharsets.UTF_8));
            }
        }
    }
}
