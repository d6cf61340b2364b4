package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import io.ganglion.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A quorum queue's delivery limit with the RabbitMQ Java client: {@code x-delivery-count} on each redelivery, a
 * message returned more often than {@code x-delivery-limit} dead-lettered (reason {@code delivery_limit}) or dropped,
 * RabbitMQ 4's default of 20, -1 for no limit, a closed channel's messages counted, counts kept over a restart, and the
 * argument refused on a classic queue.
 */
class DeliveryLimitIT {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final OneBroker broker = new OneBroker();

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
        if (connection.isOpen()) {
            connection.close();
        }
    }

    /** A quorum queue {@code name} with the arguments given as name, value pairs. */
    private String quorum(String name, Object... pairs) throws Exception {
        Map<String, Object> args = new HashMap<>();
        args.put("x-queue-type", "quorum");
        for (int i = 0; i < pairs.length; i += 2) {
            args.put((String) pairs[i], pairs[i + 1]);
        }
        channel.queueDelete(name);
        channel.queueDeclare(name, true, false, false, args);
        return name;
    }

    private void publish(String queue, String body) throws Exception {
        channel.basicPublish("", queue, null, body.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(5_000);
    }

    /** Waits for a message in {@code queue} and takes it, to be acknowledged. */
    private GetResponse await(String queue) {
        return Poll.untilPresent(
                WAIT, () -> java.util.Optional.ofNullable(channel.basicGet(queue, false)), () -> "nothing in " + queue);
    }

    private static Object deliveryCount(GetResponse response) {
        Map<String, Object> headers = response.getProps().getHeaders();
        return headers == null ? null : headers.get("x-delivery-count");
    }

    @Test
    void shouldCountRedeliveriesAndDeadLetterPastTheLimit() throws Exception {
        String dlq = quorum("limit.dlq");
        channel.exchangeDeclare("limit.dlx", "fanout", true);
        channel.queueBind(dlq, "limit.dlx", "");
        String queue = quorum("limit.q", "x-delivery-limit", 2, "x-dead-letter-exchange", "limit.dlx");
        publish(queue, "poison");

        GetResponse first = await(queue);
        assertThat(first.getEnvelope().isRedeliver()).isFalse();
        assertThat(deliveryCount(first)).isNull();
        channel.basicNack(first.getEnvelope().getDeliveryTag(), false, true);
        GetResponse second = await(queue);
        assertThat(second.getEnvelope().isRedeliver()).isTrue();
        assertThat(deliveryCount(second)).isEqualTo(1L);
        channel.basicReject(second.getEnvelope().getDeliveryTag(), true);
        GetResponse third = await(queue);
        assertThat(deliveryCount(third)).isEqualTo(2L);
        channel.basicNack(third.getEnvelope().getDeliveryTag(), false, true); // the third return: past the limit

        GetResponse dead = await(dlq);
        channel.basicAck(dead.getEnvelope().getDeliveryTag(), false);
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("poison");
        Map<String, Object> headers = dead.getProps().getHeaders();
        assertThat(headers.get("x-first-death-reason").toString()).isEqualTo("delivery_limit");
        @SuppressWarnings("unchecked")
        Map<String, Object> death = ((List<Map<String, Object>>) headers.get("x-death")).getFirst();
        assertThat(death.get("reason").toString()).isEqualTo("delivery_limit");
        assertThat(death.get("queue").toString()).isEqualTo(queue);
        assertThat(death.get("count")).isEqualTo(1L);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isZero();
    }

    @Test
    void shouldDropAPoisonMessageAfterTwentyReturnsByDefault() throws Exception {
        String queue = quorum("limit.default.q");
        publish(queue, "poison");
        for (int returns = 0; returns < 20; returns++) {
            GetResponse got = await(queue);
            assertThat(deliveryCount(got)).isEqualTo(returns == 0 ? null : (long) returns);
            channel.basicNack(got.getEnvelope().getDeliveryTag(), false, true);
        }
        GetResponse last = await(queue);
        assertThat(deliveryCount(last)).isEqualTo(20L);
        channel.basicNack(last.getEnvelope().getDeliveryTag(), false, true);

        Poll.until(WAIT, () -> ready(queue) == 0, () -> "the message dropped");
        assertThat(channel.basicGet(queue, true)).isNull();
    }

    @Test
    void shouldNeverLimitWithMinusOne() throws Exception {
        String queue = quorum("limit.none.q", "x-delivery-limit", -1);
        publish(queue, "tolerated");
        for (int returns = 0; returns < 25; returns++) {
            channel.basicNack(await(queue).getEnvelope().getDeliveryTag(), false, true);
        }
        GetResponse got = await(queue);
        assertThat(deliveryCount(got)).isEqualTo(25L);
        channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
    }

    @Test
    void shouldCountTheMessagesAClosedChannelGivesBackAndKeepCountsOverARestart() throws Exception {
        String queue = quorum("limit.close.q", "x-delivery-limit", 5);
        publish(queue, "m");
        Channel consumer = connection.createChannel();
        consumer.basicGet(queue, false);
        consumer.close(); // its unacknowledged message goes back, counted
        GetResponse got = await(queue);
        assertThat(deliveryCount(got)).isEqualTo(1L);
        channel.basicReject(got.getEnvelope().getDeliveryTag(), true);
        Poll.until(WAIT, () -> ready(queue) == 1, () -> "the message back");
        Thread.sleep(100); // the returned records are written within 10 ms
        connection.close();

        broker.restart();

        connection = broker.connect();
        channel = connection.createChannel();
        GetResponse after = await(queue);
        assertThat(after.getEnvelope().isRedeliver()).isTrue();
        assertThat(deliveryCount(after)).isEqualTo(2L);
        channel.basicAck(after.getEnvelope().getDeliveryTag(), false);
    }

    @Test
    void shouldRefuseADeliveryLimitOnAClassicQueue() {
        assertThatThrownBy(() ->
                        channel.queueDeclare("limit.classic.q", true, false, false, Map.of("x-delivery-limit", 3)))
                .isInstanceOf(java.io.IOException.class)
                .cause()
                .isInstanceOf(ShutdownSignalException.class)
                .hasMessageContaining("PRECONDITION_FAILED - invalid arg 'x-delivery-limit' for queue"
                        + " 'limit.classic.q' in vhost '/': a delivery limit is supported by quorum queues only");
    }

    private long ready(String queue) throws java.io.IOException {
        return channel.queueDeclarePassive(queue).getMessageCount();
    }
}
