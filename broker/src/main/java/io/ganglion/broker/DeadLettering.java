package io.ganglion.broker;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.metadata.QueueDef;
import io.ganglion.queues.DeadLetters;
import io.ganglion.queues.DeadLetters.Death;
import io.ganglion.queues.DeadLetters.Reason;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A message as RabbitMQ dead-letters it (docs/queues.md, "Dead-lettering"): republished to the queue's dead-letter
 * exchange with the queue's dead-letter routing key or its own keys, its {@code x-death} history updated, its {@code
 * expiration} removed (kept in the history as {@code original-expiration}), {@code BCC} gone, and {@code CC} gone when
 * the routing key is replaced. The body and every other property are the publisher's.
 *
 * <p>{@code x-death} has one table per queue and reason, the most recent first: {@code count} (long), {@code reason},
 * {@code queue}, {@code time} (timestamp, seconds), {@code exchange} and {@code routing-keys} (array) of the message
 * before it first died there that way, and {@code original-expiration} when it had one. A later death from the same
 * queue for the same reason adds one to that table's count and moves it first. {@code x-first-death-queue}, {@code
 * -reason} and {@code -exchange} are written once; {@code x-last-death-*} each time.
 */
final class DeadLettering {
    static final String X_DEATH = "x-death";
    static final String X_DELIVERY_COUNT = "x-delivery-count";

    private DeadLettering() {}

    /** Where a queue's owner hands what it dead-letters: the broker's publish router. */
    @FunctionalInterface
    interface Sink {
        /** Drops everything: for a queue outside a broker (unit tests). */
        Sink NONE = (vhost, message, mustRoute) -> CompletableFuture.completedFuture(null);

        /**
         * Routes and publishes {@code message} in {@code vhost}; completes once every queue it reached has it, and
         * with {@code mustRoute} fails when it reaches none.
         */
        CompletableFuture<Void> publish(String vhost, Republished message, boolean mustRoute);
    }

    /**
     * A queue's dead-letter settings: its {@code x-dead-letter-exchange}, and its {@code x-dead-letter-routing-key} or
     * null to route with the message's own keys.
     */
    record Target(String exchange, String routingKey) {
        static Optional<Target> of(QueueDef def) {
            return def.arguments().get("x-dead-letter-exchange") instanceof String exchange
                    ? Optional.of(new Target(
                            exchange,
                            def.arguments().get("x-dead-letter-routing-key") instanceof String key ? key : null))
                    : Optional.empty();
        }
    }

    /**
     * A dead-lettered message: its record for the dead-letter exchange (a {@link MessageRecord}), the keys it is routed
     * with, its properties, and its deaths (the new one first) for the cycle rule.
     */
    record Republished(
            ByteBuffer payload,
            String exchange,
            List<String> keys,
            BasicProperties properties,
            List<Death> deaths,
            Reason reason) {
        /** Whether it must not go to {@code queue}: it would come back there with no rejection on the way. */
        boolean cycles(String queue) {
            return DeadLetters.closesCycle(reason, deaths, queue);
        }
    }

    /** {@code record}, a message of {@code queue}, dead-lettered for {@code reason} at {@code nowMs} to {@code target}. */
    static Republished republish(ByteBuffer record, String queue, Reason reason, Target target, long nowMs) {
        MessageRecord.Message message = MessageRecord.decodeMessage(record);
        BasicProperties properties = message.properties();
        List<String> ownKeys = SenderSelected.routingKeys(message.routingKey(), properties);
        FieldTable headers = properties.headers() == null ? FieldTable.EMPTY : properties.headers();
        FieldTable death = death(queue, reason, message.exchange(), ownKeys, properties.expiration(), nowMs);
        List<FieldValue> deaths = deaths(headers, queue, reason, death);
        FieldTable updated = headers(headers, deaths, queue, reason, message.exchange(), target.routingKey() != null);
        BasicProperties dead =
                properties.toBuilder().headers(updated).expiration(null).build();
        String routingKey = target.routingKey() == null ? message.routingKey() : target.routingKey();
        List<String> keys = target.routingKey() == null ? ownKeys : List.of(target.routingKey());
        ByteBuffer header = ContentHeaderCodec.encoded(new ContentHeader(
                ContentHeaderCodec.classId(message.header()), 0, ContentHeaderCodec.bodySize(message.header()), dead));
        ByteBuffer payload = MessageRecord.encodeMessage(
                target.exchange(), routingKey, header, Unpooled.wrappedBuffer(message.body()));
        return new Republished(payload, target.exchange(), keys, dead, readDeaths(deaths), reason);
    }

    /**
     * {@code message}'s content header with {@code x-delivery-count} set to {@code count}, as a quorum queue shows a
     * message returned that often on its next delivery.
     */
    static ByteBuffer withDeliveryCount(MessageRecord.Message message, long count) {
        BasicProperties properties = message.properties();
        FieldTable headers = properties.headers() == null ? FieldTable.EMPTY : properties.headers();
        List<FieldTable.Entry> entries = new ArrayList<>(headers.size() + 1);
        for (FieldTable.Entry entry : headers.entries()) {
            if (!entry.name().equals(X_DELIVERY_COUNT)) {
                entries.add(entry);
            }
        }
        entries.add(new FieldTable.Entry(X_DELIVERY_COUNT, FieldValue.of(count)));
        BasicProperties counted =
                properties.toBuilder().headers(new FieldTable(entries)).build();
        return ContentHeaderCodec.encoded(new ContentHeader(
                ContentHeaderCodec.classId(message.header()),
                0,
                ContentHeaderCodec.bodySize(message.header()),
                counted));
    }

    /** The new table of a first death from {@code queue} for {@code reason}. */
    private static FieldTable death(
            String queue, Reason reason, String exchange, List<String> keys, String expiration, long nowMs) {
        List<FieldValue> routingKeys = new ArrayList<>(keys.size());
        for (String key : keys) {
            routingKeys.add(FieldValue.of(key));
        }
        FieldTable.Builder entry = FieldTable.builder()
                .put("count", 1L)
                .put("reason", reason.wireName())
                .put("queue", queue)
                .put("time", new FieldValue.Timestamp(Math.floorDiv(nowMs, 1000)))
                .put("exchange", exchange)
                .put("routing-keys", new FieldValue.Array(routingKeys));
        if (expiration != null) {
            entry.put("original-expiration", expiration);
        }
        return entry.build();
    }

    /** The {@code x-death} array after this death: its table for the queue and reason counted up and first. */
    private static List<FieldValue> deaths(FieldTable headers, String queue, Reason reason, FieldTable fresh) {
        List<FieldValue> earlier =
                headers.get(X_DEATH).orElse(null) instanceof FieldValue.Array array ? array.values() : List.of();
        List<FieldValue> deaths = new ArrayList<>(earlier.size() + 1);
        deaths.add(new FieldValue.Table(fresh));
        boolean found = false;
        for (FieldValue value : earlier) {
            if (!found
                    && value instanceof FieldValue.Table table
                    && queue.equals(text(table.value(), "queue"))
                    && reason.wireName().equals(text(table.value(), "reason"))) {
                deaths.set(0, new FieldValue.Table(countedUp(table.value())));
                found = true;
            } else {
                deaths.add(value);
            }
        }
        return deaths;
    }

    /** A death's table with one more to its count, the count first as RabbitMQ writes it back. */
    private static FieldTable countedUp(FieldTable death) {
        long count = death.get("count").map(DeadLettering::number).orElse(0L);
        List<FieldTable.Entry> entries = new ArrayList<>(death.size());
        entries.add(new FieldTable.Entry("count", FieldValue.of(count + 1)));
        for (FieldTable.Entry entry : death.entries()) {
            if (!entry.name().equals("count")) {
                entries.add(entry);
            }
        }
        return new FieldTable(entries);
    }

    /** The message's headers with the history written and the sender-selected keys that no longer apply gone. */
    private static FieldTable headers(
            FieldTable headers,
            List<FieldValue> deaths,
            String queue,
            Reason reason,
            String exchange,
            boolean keyReplaced) {
        List<FieldTable.Entry> entries = new ArrayList<>(headers.size() + 7);
        for (FieldTable.Entry entry : headers.entries()) {
            String name = entry.name();
            boolean replaced = name.equals(X_DEATH) || name.startsWith("x-last-death-");
            boolean dropped = name.equals(SenderSelected.BCC) || keyReplaced && name.equals(SenderSelected.CC);
            if (!replaced && !dropped) {
                entries.add(entry);
            }
        }
        FieldTable kept = new FieldTable(entries);
        if (kept.get("x-first-death-reason").isEmpty()) {
            entries.add(new FieldTable.Entry("x-first-death-exchange", FieldValue.of(exchange)));
            entries.add(new FieldTable.Entry("x-first-death-queue", FieldValue.of(queue)));
            entries.add(new FieldTable.Entry("x-first-death-reason", FieldValue.of(reason.wireName())));
        }
        entries.add(new FieldTable.Entry("x-last-death-exchange", FieldValue.of(exchange)));
        entries.add(new FieldTable.Entry("x-last-death-queue", FieldValue.of(queue)));
        entries.add(new FieldTable.Entry("x-last-death-reason", FieldValue.of(reason.wireName())));
        entries.add(new FieldTable.Entry(X_DEATH, new FieldValue.Array(deaths)));
        return new FieldTable(entries);
    }

    private static List<Death> readDeaths(List<FieldValue> deaths) {
        List<Death> read = new ArrayList<>(deaths.size());
        for (FieldValue value : deaths) {
            read.add(
                    value instanceof FieldValue.Table table
                            ? new Death(text(table.value(), "queue"), text(table.value(), "reason"))
                            : new Death(null, null));
        }
        return read;
    }

    private static String text(FieldTable table, String name) {
        return table.get(name).orElse(null) instanceof FieldValue.LongStr s
                ? new String(s.value().toByteArray(), StandardCharsets.UTF_8)
                : null;
    }

    private static long number(FieldValue value) {
        Object plain = FieldTables.toPlain(value);
        Long whole = FieldTables.integral(plain);
        return whole == null ? 0 : whole;
    }
}
