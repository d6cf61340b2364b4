package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * At-least-once dead-lettering from a quorum queue with the RabbitMQ Java client: a message whose dead-letter exchange
 * routes it nowhere stays with its source (counted against its length limit) and arrives once a queue is bound, also
 * across a restart; the argument is refused where it cannot hold.
 */
class AtLeastOnceDeadLetterIT {
    private static final Duration WAIT = Duration.ofSeconds(15);

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

    /** A quorum queue dead-lettering at least once to the fanout exchange {@code dlx}, with more arguments. */
    private void source(String queue, String dlx, Object... pairs) throws Exception {
        Map<String, Object> args = new HashMap<>(Map.of(
                "x-queue-type",
                "quorum",
                "x-overflow",
                "reject-publish",
                "x-dead-letter-strategy",
                "at-least-once",
                "x-dead-letter-exchange",
                dlx));
        for (int i = 0; i < pairs.length; i += 2) {
            args.put((String) pairs[i], pairs[i + 1]);
        }
        channel.exchangeDeclare(dlx, "fanout", true);
        channel.queueDelete(queue);
        channel.queueDeclare(queue, true, false, false, args);
    }

    private void quorum(String queue) throws IOException {
        channel.queueDelete(queue);
        channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum"));
    }

    private long ready(String queue) throws IOException {
        return channel.queueDeclarePassive(queue).getMessageCount();
    }

    /** Takes every message of {@code queue} until {@code count} distinct bodies were seen. */
    private Set<String> drain(String queue, int count, String reason) throws Exception {
        Set<String> bodies = new HashSet<>();
        Poll.until(
                WAIT,
                () -> {
                    for (GetResponse got; (got = channel.basicGet(queue, true)) != null; ) {
                        bodies.add(new String(got.getBody(), StandardCharsets.UTF_8));
                        assertThat(got.getProps()
                                        .getHeaders()
                                        .get("x-first-death-reason")
                                        .toString())
                                .isEqualTo(reason);
                    }
                    return bodies.size() >= count;
                },
                () -> bodies.size() + " of " + count + " in " + queue);
        return bodies;
    }

    @Test
    void shouldKeepWhatReachesNoQueueAndDeliverItOnceAQueueIsBound() throws Exception {
        source("alo.q", "alo.dlx", "x-message-ttl", 50, "x-max-length", 10);
        for (int i = 0; i < 10; i++) {
            channel.basicPublish("", "alo.q", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(5_000);
        Poll.until(WAIT, () -> ready("alo.q") == 0, () -> "expired");
        Thread.sleep(300);

        channel.basicPublish("", "alo.q", null, "over".getBytes(StandardCharsets.UTF_8));
        assertThat(channel.waitForConfirms(5_000))
                .as("the ten waiting for a dead-letter queue count against x-max-length")
                .isFalse();

        quorum("alo.dlq");
        channel.queueBind("alo.dlq", "alo.dlx", "");
        assertThat(drain("alo.dlq", 10, "expired")).hasSize(10);
        channel.basicPublish("", "alo.q", null, "room".getBytes(StandardCharsets.UTF_8));
        assertThat(channel.waitForConfirms(5_000))
                .as("room again once they were confirmed")
                .isTrue();
    }

    @Test
    void shouldDeadLetterAgainAfterARestartWhatWasNotConfirmed() throws Exception {
        source("alo.restart.q", "alo.restart.dlx");
        for (int i = 0; i < 5; i++) {
            channel.basicPublish("", "alo.restart.q", null, ("r" + i).getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(5_000);
        for (int i = 0; i < 5; i++) {
            GetResponse got = Poll.untilPresent(
                    WAIT,
                    () -> java.util.Optional.ofNullable(channel.basicGet("alo.restart.q", false)),
                    () -> "a message");
            channel.basicReject(got.getEnvelope().getDeliveryTag(), false);
        }
        Thread.sleep(300); // the dead-lettered records are written within 10 ms
        connection.close();

        broker.restart();

        connection = broker.connect();
        channel = connection.createChannel();
        assertThat(ready("alo.restart.q")).as("out of the queue, waiting").isZero();
        quorum("alo.restart.dlq");
        channel.queueBind("alo.restart.dlq", "alo.restart.dlx", "");
        assertThat(drain("alo.restart.dlq", 5, "rejected")).hasSize(5);
    }

    @Test
    void shouldRefuseAtLeastOnceWhereItCannotHold() {
        List<Map<String, Object>> refused = List.of(
                Map.of("x-dead-letter-strategy", "at-least-once", "x-dead-letter-exchange", "x"),
                Map.of(
                        "x-queue-type",
                        "quorum",
                        "x-dead-letter-strategy",
                        "at-least-once",
                        "x-dead-letter-exchange",
                        "x"),
                Map.of(
                        "x-queue-type",
                        "quorum",
                        "x-overflow",
                        "reject-publish",
                        "x-dead-letter-strategy",
                        "at-least-once"));
        for (Map<String, Object> args : refused) {
            assertThatThrownBy(() -> connection.createChannel().queueDeclare("alo.refused", true, false, false, args))
                    .as("%s", args)
                    .hasStackTraceContaining("PRECONDITION_FAILED - invalid arg 'x-dead-letter-strategy' for queue"
                            + " 'alo.refused' in vhost '/': at-least-once needs a quorum queue with x-overflow"
                            + " reject-publish and an x-dead-letter-exchange");
        }
    }
}
