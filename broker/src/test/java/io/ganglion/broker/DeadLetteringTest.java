package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.queues.DeadLetters.Death;
import io.ganglion.queues.DeadLetters.Reason;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeadLetteringTest {
    private static final DeadLettering.Target OWN_KEYS = new DeadLettering.Target("dlx", null);

    private static ByteBuffer record(String exchange, String key, BasicProperties properties, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ByteBuffer header = ContentHeaderCodec.encoded(new ContentHeader(60, 0, bytes.length, properties));
        return MessageRecord.encodeMessage(exchange, key, header, Unpooled.wrappedBuffer(bytes));
    }

    private static MessageRecord.Message decoded(DeadLettering.Republished republished) {
        return MessageRecord.decodeMessage(republished.payload());
    }

    private static List<FieldValue> deaths(MessageRecord.Message message) {
        return ((FieldValue.Array) message.properties().headers().get("x-death").orElseThrow()).values();
    }

    private static FieldTable table(FieldValue value) {
        return ((FieldValue.Table) value).value();
    }

    @Test
    void shouldWriteTheFirstDeathAsRabbitMqDoes() {
        BasicProperties properties = BasicProperties.EMPTY.toBuilder()
                .expiration("500")
                .messageId("id-1")
                .headers(FieldTable.builder()
                        .put("CC", new FieldValue.Array(List.of(FieldValue.of("cc"))))
                        .build())
                .build();
        DeadLettering.Republished dead = DeadLettering.republish(
                record("in", "key", properties, "body"), "work", Reason.EXPIRED, OWN_KEYS, 12_345_678);

        MessageRecord.Message message = decoded(dead);
        assertThat(message.exchange()).isEqualTo("dlx");
        assertThat(message.routingKey()).isEqualTo("key");
        assertThat(StandardCharsets.UTF_8.decode(message.body()).toString()).isEqualTo("body");
        assertThat(message.properties().expiration()).isNull();
        assertThat(message.properties().messageId()).isEqualTo("id-1");
        assertThat(dead.keys()).containsExactly("key", "cc");
        FieldTable death = table(deaths(message).get(0));
        assertThat(death.entries().stream().map(FieldTable.Entry::name))
                .containsExactly("count", "reason", "queue", "time", "exchange", "routing-keys", "original-expiration");
        assertThat(death.get("count")).contains(FieldValue.of(1L));
        assertThat(death.get("time")).contains(new FieldValue.Timestamp(12_345));
        assertThat(death.get("routing-keys"))
                .contains(new FieldValue.Array(List.of(FieldValue.of("key"), FieldValue.of("cc"))));
        assertThat(death.get("original-expiration")).contains(FieldValue.of("500"));
        assertThat(message.properties().headers().get("x-first-death-exchange")).contains(FieldValue.of("in"));
        assertThat(dead.deaths()).containsExactly(new Death("work", "expired"));
    }

    @Test
    void shouldCountAgainAndMoveFirstTheDeathOfTheSameQueueAndReason() {
        ByteBuffer first = record("in", "key", BasicProperties.EMPTY, "b");
        DeadLettering.Republished once = DeadLettering.republish(first, "a", Reason.REJECTED, OWN_KEYS, 1_000);
        DeadLettering.Republished twice = DeadLettering.republish(once.payload(), "b", Reason.EXPIRED, OWN_KEYS, 2_000);
        DeadLettering.Republished thrice =
                DeadLettering.republish(twice.payload(), "a", Reason.REJECTED, OWN_KEYS, 9_000);

        List<FieldValue> deaths = deaths(decoded(thrice));
        assertThat(deaths).hasSize(2);
        FieldTable latest = table(deaths.get(0));
        assertThat(latest.get("queue")).contains(FieldValue.of("a"));
        assertThat(latest.get("count")).contains(FieldValue.of(2L));
        assertThat(latest.get("time")).as("the first time it died there").contains(new FieldValue.Timestamp(1));
        assertThat(latest.get("exchange"))
                .as("the exchange before it first died there")
                .contains(FieldValue.of("in"));
        assertThat(table(deaths.get(1)).get("queue")).contains(FieldValue.of("b"));
        FieldTable headers = decoded(thrice).properties().headers();
        assertThat(headers.get("x-first-death-queue")).contains(FieldValue.of("a"));
        assertThat(headers.get("x-first-death-reason")).contains(FieldValue.of("rejected"));
        assertThat(headers.get("x-last-death-queue")).contains(FieldValue.of("a"));
        assertThat(headers.get("x-last-death-exchange")).contains(FieldValue.of("dlx"));
        assertThat(headers.entries().stream().filter(e -> e.name().startsWith("x-last-death-")))
                .hasSize(3);
    }

    @Test
    void shouldReplaceTheKeysAndDropCcWithADeadLetterRoutingKey() {
        BasicProperties properties = BasicProperties.EMPTY.toBuilder()
                .headers(FieldTable.builder()
                        .put("CC", new FieldValue.Array(List.of(FieldValue.of("cc"))))
                        .put("x-death", FieldValue.of("not an array"))
                        .build())
                .build();
        DeadLettering.Republished dead = DeadLettering.republish(
                record("", "q", properties, "b"), "q", Reason.MAXLEN, new DeadLettering.Target("", "parked"), 0);

        MessageRecord.Message message = decoded(dead);
        assertThat(message.routingKey()).isEqualTo("parked");
        assertThat(dead.keys()).containsExactly("parked");
        assertThat(message.properties().headers().get("CC")).isEmpty();
        assertThat(deaths(message)).as("a malformed history starts again").hasSize(1);
        assertThat(dead.cycles("q")).isTrue();
        assertThat(dead.cycles("parked")).isFalse();
    }
}
