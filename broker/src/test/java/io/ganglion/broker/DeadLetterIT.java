package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.LongString;
import io.ganglion.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Dead-lettering on one broker with the RabbitMQ Java client, from a classic and a quorum queue: the three reasons a
 * queue dead-letters for (rejected, expired, maxlen), the {@code x-death} history and {@code x-first/last-death-*}
 * headers as RabbitMQ writes them, the dead-letter routing key, CC and BCC, cycle detection, a dead-letter exchange that
 * does not exist, and the retry pattern (reject to a TTL queue that dead-letters back) five rounds.
 */
@ParameterizedClass
@ValueSource(strings = {"classic", "quorum"})
class DeadLetterIT {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final OneBroker broker = new OneBroker();

    @Parameter
    String type;

    private Connection connection;
    private Channel channel;

    @BeforeEach
    void connect() throws Exception {
        connection = broker.connect();
        channel = connection.createChannel();
        channel.confirmSelect();
    }

    @AfterEach
    void close() throws Exception {
        connection.close();
    }

    /** {@code name} of this case's type, suffixed with it, declared with the arguments given as name, value pairs. */
    private String queue(String name, Object... pairs) throws Exception {
        Map<String, Object> args = new HashMap<>();
        args.put("x-queue-type", type);
        for (int i = 0; i < pairs.length; i += 2) {
            args.put((String) pairs[i], pairs[i + 1] instanceof String s ? s.replace("$", type) : pairs[i + 1]);
        }
        String queue = name + "." + type;
        channel.queueDelete(queue);
        channel.queueDeclare(queue, true, false, false, args);
        return queue;
    }

    /** A direct exchange {@code name}.type, with {@code queue} bound to it by each key. */
    private String exchange(String name, String queue, String... keys) throws Exception {
        String exchange = name + "." + type;
        channel.exchangeDeclare(exchange, "direct", true);
        for (String key : keys) {
            channel.queueBind(queue, exchange, key);
        }
        return exchange;
    }

    private void publish(String exchange, String key, AMQP.BasicProperties properties, String body) throws Exception {
        channel.basicPublish(exchange, key, properties, body.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(5_000);
    }

    /** Waits for a message in {@code queue} and takes it, acknowledged. */
    private GetResponse await(String queue) {
        GetResponse[] got = {null};
        Poll.until(WAIT, () -> (got[0] = get(queue)) != null, () -> "nothing in " + queue);
        return got[0];
    }

    private GetResponse get(String queue) {
        try {
            return channel.basicGet(queue, true);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private long ready(String queue) throws Exception {
        return channel.queueDeclarePassive(queue).getMessageCount();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> deaths(GetResponse response) {
        return (List<Map<String, Object>>) response.getProps().getHeaders().get("x-death");
    }

    /** A header's value as text: the client reads long strings as {@link LongString}. */
    private static Object plain(Object value) {
        if (value instanceof LongString text) {
            return text.toString();
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            list.forEach(element -> out.add(plain(element)));
            return out;
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, v) -> out.put((String) k, plain(v)));
            return out;
        }
        return value;
    }

    private static Object header(GetResponse response, String name) {
        return plain(response.getProps().getHeaders().get(name));
    }

    @Test
    void shouldDeadLetterARejectedMessageWithItsHistoryAndItsOwnProperties() throws Exception {
        String dlq = queue("dlq.rejected");
        String dlx = exchange("dlx.rejected", dlq, "work.rejected." + type);
        String work = queue("work.rejected", "x-dead-letter-exchange", "dlx.rejected.$");
        long before = System.currentTimeMillis() / 1000;
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .messageId("m-1")
                .contentType("text/plain")
                .headers(Map.of("app", "kept"))
                .build();
        publish("", work, properties, "first");

        GetResponse taken = channel.basicGet(work, false);
        channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
        GetResponse dead = await(dlq);

        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("first");
        assertThat(dead.getEnvelope().getExchange()).isEqualTo(dlx);
        assertThat(dead.getEnvelope().getRoutingKey()).isEqualTo(work);
        assertThat(dead.getProps().getMessageId()).isEqualTo("m-1");
        assertThat(dead.getProps().getContentType()).isEqualTo("text/plain");
        assertThat(header(dead, "app")).isEqualTo("kept");
        List<Map<String, Object>> deaths = deaths(dead);
        assertThat(deaths).hasSize(1);
        Map<String, Object> death = deaths.get(0);
        assertThat(death.get("count")).isEqualTo(1L);
        assertThat(plain(death.get("reason"))).isEqualTo("rejected");
        assertThat(plain(death.get("queue"))).isEqualTo(work);
        assertThat(plain(death.get("exchange"))).isEqualTo("");
        assertThat(plain(death.get("routing-keys"))).isEqualTo(List.of(work));
        assertThat(death.get("time")).isInstanceOf(Date.class);
        assertThat(((Date) death.get("time")).getTime() / 1000).isBetween(before, before + 30);
        assertThat(death).doesNotContainKey("original-expiration");
        assertThat(header(dead, "x-first-death-reason")).isEqualTo("rejected");
        assertThat(header(dead, "x-first-death-queue")).isEqualTo(work);
        assertThat(header(dead, "x-first-death-exchange")).isEqualTo("");
        assertThat(header(dead, "x-last-death-reason")).isEqualTo("rejected");
        assertThat(header(dead, "x-last-death-queue")).isEqualTo(work);
        assertThat(header(dead, "x-last-death-exchange")).isEqualTo("");
        assertThat(ready(work)).isZero();
    }

    @Test
    void shouldDeadLetterAnExpiredMessageWithoutItsExpiration() throws Exception {
        String dlq = queue("dlq.expired");
        String work = queue("work.expired", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq);
        publish("", work, new AMQP.BasicProperties.Builder().expiration("100").build(), "short-lived");

        GetResponse dead = await(dlq);

        assertThat(dead.getProps().getExpiration()).isNull();
        assertThat(dead.getEnvelope().getExchange()).isEqualTo("");
        assertThat(dead.getEnvelope().getRoutingKey()).isEqualTo(dlq);
        Map<String, Object> death = deaths(dead).get(0);
        assertThat(plain(death.get("reason"))).isEqualTo("expired");
        assertThat(plain(death.get("original-expiration"))).isEqualTo("100");
        assertThat(plain(death.get("routing-keys")))
                .as("the keys before it died")
                .isEqualTo(List.of(work));
    }

    @Test
    void shouldDeadLetterTheOldestMessageDroppedOverTheMaxLength() throws Exception {
        String dlq = queue("dlq.maxlen");
        String work =
                queue("work.maxlen", "x-max-length", 1, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq);
        publish("", work, null, "oldest");
        publish("", work, null, "newest");

        GetResponse dead = await(dlq);

        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("oldest");
        assertThat(plain(deaths(dead).get(0).get("reason"))).isEqualTo("maxlen");
        assertThat(header(dead, "x-first-death-reason")).isEqualTo("maxlen");
        assertThat(ready(work)).isEqualTo(1);
    }

    @Test
    void shouldRouteByTheMessagesOwnKeysWithCcAndNeverKeepBcc() throws Exception {
        String byCc = queue("dlq.cc");
        String byBcc = queue("dlq.bcc");
        String work = queue("work.cc", "x-dead-letter-exchange", "dlx.cc.$");
        exchange("dlx.cc", byCc, "cc-key");
        exchange("dlx.cc", byBcc, "bcc-key");
        String entry = exchange("in.cc", work, "main", "cc-key", "bcc-key");
        Map<String, Object> headers = new HashMap<>();
        headers.put("CC", List.of("cc-key"));
        headers.put("BCC", List.of("bcc-key"));
        publish(
                entry,
                "main",
                new AMQP.BasicProperties.Builder().headers(headers).build(),
                "copied");

        GetResponse taken = channel.basicGet(work, false);
        channel.basicNack(taken.getEnvelope().getDeliveryTag(), false, false);
        GetResponse dead = await(byCc);

        assertThat(header(dead, "CC")).isEqualTo(List.of("cc-key"));
        assertThat(dead.getProps().getHeaders()).doesNotContainKey("BCC");
        assertThat(plain(deaths(dead).get(0).get("routing-keys"))).isEqualTo(List.of("main", "cc-key"));
        assertThat(plain(deaths(dead).get(0).get("exchange"))).isEqualTo(entry);
        Thread.sleep(200);
        assertThat(get(byBcc))
                .as("BCC keys are not the message's keys once stored")
                .isNull();
    }

    @Test
    void shouldDropCcWhenTheDeadLetterRoutingKeyReplacesTheKeys() throws Exception {
        String dlq = queue("dlq.key");
        String work = queue("work.key", "x-dead-letter-exchange", "dlx.key.$", "x-dead-letter-routing-key", "dead");
        exchange("dlx.key", dlq, "dead");
        publish(
                "",
                work,
                new AMQP.BasicProperties.Builder()
                        .headers(Map.of("CC", List.of("other")))
                        .build(),
                "rerouted");

        GetResponse taken = channel.basicGet(work, false);
        channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
        GetResponse dead = await(dlq);

        assertThat(dead.getEnvelope().getRoutingKey()).isEqualTo("dead");
        assertThat(dead.getProps().getHeaders()).doesNotContainKey("CC");
        assertThat(plain(deaths(dead).get(0).get("routing-keys"))).isEqualTo(List.of(work, "other"));
    }

    @Test
    void shouldDropAMessageThatWouldExpireBackIntoItsQueueButLetARejectedOneReturn() throws Exception {
        // the default exchange routes a dead letter without a routing key of its own back by the queue's name
        String loop = queue("loop", "x-message-ttl", 100, "x-dead-letter-exchange", "");
        publish("", loop, null, "round");
        Poll.until(WAIT, () -> readyNow(loop) == 0, () -> "the expired message is still in " + loop);
        for (int sample = 0; sample < 30; sample++) { // a looping message would be back within its 100 ms
            assertThat(ready(loop)).as("dropped, not looping").isZero();
            Thread.sleep(20);
        }

        String again = queue("again", "x-dead-letter-exchange", "");
        publish("", again, null, "retry");
        for (int round = 1; round <= 3; round++) {
            GetResponse taken = awaitUnacked(again);
            if (round > 1) {
                assertThat(deaths(taken).get(0).get("count")).isEqualTo((long) round - 1);
            }
            channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
        }
        GetResponse last = await(again);
        assertThat(deaths(last)).hasSize(1);
        assertThat(deaths(last).get(0).get("count")).isEqualTo(3L);
    }

    @Test
    void shouldDropWhatADeadLetterExchangeThatDoesNotExistWouldGet() throws Exception {
        String work = queue("work.nowhere", "x-dead-letter-exchange", "no.such.exchange");
        publish("", work, null, "lost");
        GetResponse taken = channel.basicGet(work, false);
        channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
        Thread.sleep(200);
        assertThat(ready(work)).isZero();
        assertThat(channel.isOpen()).isTrue();
    }

    /**
     * The retry pattern: a consumer rejects from the work queue to a retry exchange, whose queue's TTL sends the message
     * back to the work queue; after five rounds its history counts five of each.
     */
    @Test
    void shouldRunTheRetryPatternFiveRoundsAndCountThem() throws Exception {
        String retryQueue = queue(
                "retry.wait",
                "x-message-ttl",
                50,
                "x-dead-letter-exchange",
                "",
                "x-dead-letter-routing-key",
                "retry.work.$");
        String work = queue("retry.work", "x-dead-letter-exchange", "retry.x.$");
        exchange("retry.x", retryQueue, work);
        publish("", work, null, "job");

        GetResponse taken = null;
        for (int round = 0; round <= 5; round++) {
            taken = awaitUnacked(work);
            if (round < 5) {
                channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
            }
        }
        channel.basicAck(taken.getEnvelope().getDeliveryTag(), false);

        List<Map<String, Object>> deaths = deaths(taken);
        assertThat(deaths).hasSize(2);
        assertThat(plain(deaths.get(0).get("queue"))).isEqualTo(retryQueue);
        assertThat(plain(deaths.get(0).get("reason"))).isEqualTo("expired");
        assertThat(deaths.get(0).get("count")).isEqualTo(5L);
        assertThat(plain(deaths.get(1).get("queue"))).isEqualTo(work);
        assertThat(plain(deaths.get(1).get("reason"))).isEqualTo("rejected");
        assertThat(deaths.get(1).get("count")).isEqualTo(5L);
        assertThat(header(taken, "x-first-death-queue")).isEqualTo(work);
        assertThat(header(taken, "x-last-death-queue")).isEqualTo(retryQueue);
        assertThat(header(taken, "x-last-death-reason")).isEqualTo("expired");
        assertThat(ready(work)).isZero();
        assertThat(ready(retryQueue)).isZero();
    }

    /** reject-publish-dlx (classic queues; refused on quorum queues): a refused publish is nacked and dead-lettered. */
    @Test
    void shouldDeadLetterAPublishRefusedOverTheLimitWithRejectPublishDlx() throws Exception {
        String dlq = queue("dlq.overflow");
        Map<String, Object> args = Map.of(
                "x-queue-type",
                type,
                "x-max-length",
                1,
                "x-overflow",
                "reject-publish-dlx",
                "x-dead-letter-exchange",
                "",
                "x-dead-letter-routing-key",
                dlq);
        String full = "full." + type;
        channel.queueDelete(full);
        if (type.equals("quorum")) {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> channel.queueDeclare(full, true, false, false, args))
                    .hasStackTraceContaining("reject-publish-dlx is not supported by quorum queues");
            return;
        }
        channel.queueDeclare(full, true, false, false, args);
        publish("", full, null, "kept");
        channel.basicPublish("", full, null, "refused".getBytes(StandardCharsets.UTF_8));
        assertThat(channel.waitForConfirms(5_000)).as("nacked").isFalse();

        GetResponse dead = await(dlq);
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("refused");
        assertThat(plain(deaths(dead).get(0).get("reason"))).isEqualTo("maxlen");
        assertThat(ready(full)).isEqualTo(1);
    }

    private GetResponse awaitUnacked(String queue) {
        GetResponse[] got = {null};
        Poll.until(
                WAIT,
                () -> {
                    try {
                        return (got[0] = channel.basicGet(queue, false)) != null;
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                },
                () -> "nothing in " + queue);
        return got[0];
    }

    private long readyNow(String queue) {
        try {
            return ready(queue);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
