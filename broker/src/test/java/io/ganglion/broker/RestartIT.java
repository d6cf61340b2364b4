package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.ganglion.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Durable things survive a clean restart; transient things go, as in RabbitMQ. */
class RestartIT {
    @TempDir
    Path dir;

    @Test
    void shouldKeepDurableQueuesBindingsAndConfirmedMessagesAcrossRestart() throws Exception {
        try (TestBroker broker = new TestBroker(dir.resolve("b"))) {
            try (Connection connection = broker.connect();
                    Channel channel = connection.createChannel()) {
                channel.exchangeDeclare("orders", BuiltinExchangeType.TOPIC, true);
                channel.queueDeclare("orders.eu", true, false, false, null);
                channel.queueDeclare("scratch", false, false, false, null);
                channel.queueBind("orders.eu", "orders", "eu.#");
                channel.confirmSelect();
                for (int i = 0; i < 100; i++) {
                    channel.basicPublish("orders", "eu.fr", null, ("order-" + i).getBytes(StandardCharsets.UTF_8));
                }
                channel.waitForConfirmsOrDie(10_000);
                for (int i = 0; i < 10; i++) {
                    GetResponse response = channel.basicGet("orders.eu", false);
                    channel.basicAck(response.getEnvelope().getDeliveryTag(), false);
                }
                channel.queueDeclare("to.requeue", true, false, false, null);
            }
            broker.restart();
            try (Connection connection = broker.connect();
                    Channel channel = connection.createChannel()) {
                assertThat(channel.queueDeclarePassive("orders.eu").getMessageCount())
                        .isEqualTo(90);
                List<String> bodies = new ArrayList<>();
                GetResponse response;
                while ((response = channel.basicGet("orders.eu", true)) != null) {
                    bodies.add(new String(response.getBody(), StandardCharsets.UTF_8));
                    assertThat(response.getEnvelope().isRedeliver()).isTrue();
                }
                assertThat(bodies).hasSize(90).first().isEqualTo("order-10");
                assertThat(bodies).last().isEqualTo("order-99");
                channel.confirmSelect();
                channel.basicPublish("orders", "eu.de", null, "after".getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(5_000);
                assertThat(channel.basicGet("orders.eu", true).getBody())
                        .asString()
                        .isEqualTo("after");
                Channel probe = connection.createChannel();
                assertThat(ProtocolIT.drain(probe, "to.requeue")).isEmpty();
                Channel gone = connection.createChannel();
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> gone.queueDeclarePassive("scratch"))
                        .hasStackTraceContaining("404");
            }
        }
    }

    /** What one stream reader got: bodies and x-stream-offset headers, in order. */
    private static List<String> read(Channel channel, String stream, Object offset, int count) throws Exception {
        java.util.concurrent.BlockingQueue<String> got = new java.util.concurrent.LinkedBlockingQueue<>();
        channel.basicQos(7);
        channel.basicConsume(
                stream,
                false,
                offset == null ? Map.of() : Map.of("x-stream-offset", offset),
                new com.rabbitmq.client.DefaultConsumer(channel) {
                    @Override
                    public void handleDelivery(
                            String tag,
                            com.rabbitmq.client.Envelope envelope,
                            com.rabbitmq.client.AMQP.BasicProperties properties,
                            byte[] body)
                            throws java.io.IOException {
                        got.add(new String(body, StandardCharsets.UTF_8) + "@"
                                + properties.getHeaders().get("x-stream-offset"));
                        getChannel().basicAck(envelope.getDeliveryTag(), false);
                    }
                });
        List<String> reads = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String next = got.poll(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(next).as("read %d of %d: %s", i, count, reads).isNotNull();
            reads.add(next);
        }
        return reads;
    }

    private static List<String> bodies(List<String> reads) {
        return reads.stream().map(read -> read.substring(0, read.indexOf('@'))).toList();
    }

    private static long offsetOf(String read) {
        return Long.parseLong(read.substring(read.indexOf('@') + 1));
    }

    /**
     * A stream on a single broker: readers from first, an offset and last, each getting every durable message with its
     * offset; the same offsets after a restart; retention by x-max-length-bytes over small segments.
     */
    @Test
    void shouldServeAStreamOnASingleBrokerAcrossRestart() throws Exception {
        try (TestBroker broker = new TestBroker(dir.resolve("stream"), Map.of("storage.segment_bytes", "65536"))) {
            List<String> before;
            try (Connection connection = broker.connect();
                    Channel channel = connection.createChannel()) {
                channel.queueDeclare("events", true, false, false, Map.of("x-queue-type", "stream"));
                channel.queueDeclare(
                        "recent", true, false, false, Map.of("x-queue-type", "stream", "x-max-length-bytes", 100_000));
                channel.confirmSelect();
                for (int i = 0; i < 200; i++) {
                    channel.basicPublish("", "events", null, ("e" + i).getBytes(StandardCharsets.UTF_8));
                }
                String padding = "p".repeat(1000);
                for (int i = 0; i < 500; i++) {
                    channel.basicPublish("", "recent", null, (padding + i).getBytes(StandardCharsets.UTF_8));
                }
                channel.waitForConfirmsOrDie(10_000);
                before = read(connection.createChannel(), "events", "first", 200);
                List<String> expected = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    expected.add("e" + i);
                }
                assertThat(bodies(before)).isEqualTo(expected);
                for (int i = 1; i < before.size(); i++) {
                    assertThat(offsetOf(before.get(i))).isGreaterThan(offsetOf(before.get(i - 1)));
                }
                assertThat(read(connection.createChannel(), "events", offsetOf(before.get(150)), 50))
                        .isEqualTo(before.subList(150, 200));
                assertThat(read(connection.createChannel(), "events", "last", 1))
                        .containsExactly(before.get(199));
                assertThat(channel.queueDeclarePassive("events").getMessageCount())
                        .isEqualTo(200);
                // retention: the oldest whole 64 KiB segments beyond 100 KB go within half a second or so (a pass that
                // ran while the publishes were still committing takes part of them, the next one the rest)
                Poll.within(
                        Duration.ofSeconds(10),
                        Duration.ofMillis(50),
                        () -> (long) channel.queueDeclarePassive("recent").getMessageCount() * 1000
                                <= 100_000 + 65_536);
                int kept = channel.queueDeclarePassive("recent").getMessageCount();
                assertThat(kept).as("kept after retention").isLessThan(500).isPositive();
                List<String> recent = bodies(read(connection.createChannel(), "recent", "first", kept));
                assertThat(recent.getLast()).isEqualTo(padding + 499);
                assertThat((long) kept * 1000).isLessThanOrEqualTo(100_000 + 65_536);
            }
            broker.restart();
            try (Connection connection = broker.connect();
                    Channel channel = connection.createChannel()) {
                assertThat(read(connection.createChannel(), "events", "first", 200))
                        .as("the same messages at the same offsets")
                        .isEqualTo(before);
                Channel next = connection.createChannel();
                java.util.concurrent.CompletableFuture<List<String>> following =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                            try {
                                return read(next, "events", null, 1);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        });
                Thread.sleep(300); // subscribed by now: "next" reads only what follows
                channel.confirmSelect();
                channel.basicPublish("", "events", null, "after".getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(5_000);
                assertThat(bodies(following.get(10, java.util.concurrent.TimeUnit.SECONDS)))
                        .containsExactly("after");
            }
            try (Connection connection = broker.connect()) {
                org.assertj.core.api.Assertions.assertThatThrownBy(
                                () -> connection.createChannel().basicGet("events", false))
                        .hasStackTraceContaining("NOT_IMPLEMENTED - basic.get not supported by stream queue");
            } catch (com.rabbitmq.client.AlreadyClosedException expected) {
                // the broker closed it (540)
            }
        }
    }

    /**
     * Acks are written in batches up to 10 ms late; a clean stop writes what is buffered. Each round acks two messages
     * and restarts at once (the passive declare is a round trip on the same channel: the acks reached their queue).
     */
    @Test
    void shouldKeepTheLastAcksAcrossACleanRestart() throws Exception {
        try (TestBroker broker = new TestBroker(dir.resolve("acks"))) {
            try (Connection connection = broker.connect();
                    Channel channel = connection.createChannel()) {
                channel.queueDeclare("acked", true, false, false, null);
                channel.confirmSelect();
                for (int i = 0; i < 10; i++) {
                    channel.basicPublish("", "acked", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
                }
                channel.waitForConfirmsOrDie(10_000);
            }
            for (int round = 1; round <= 4; round++) {
                try (Connection connection = broker.connect();
                        Channel channel = connection.createChannel()) {
                    for (int i = 0; i < 2; i++) {
                        GetResponse response = channel.basicGet("acked", false);
                        channel.basicAck(response.getEnvelope().getDeliveryTag(), false);
                    }
                    channel.queueDeclarePassive("acked");
                }
                broker.restart();
                try (Connection connection = broker.connect();
                        Channel channel = connection.createChannel()) {
                    assertThat(channel.queueDeclarePassive("acked").getMessageCount())
                            .as("after round %d", round)
                            .isEqualTo(10 - 2 * round);
                }
            }
        }
    }

    @Test
    void shouldKeepUsersAndVhostsAcrossRestart() throws Exception {
        try (TestBroker broker =
                new TestBroker(dir.resolve("u"), Map.of("default.user", "admin", "default.pass", "pw"))) {
            broker.restart();
            var factory = broker.factory();
            factory.setUsername("admin");
            factory.setPassword("pw");
            try (Connection connection = factory.newConnection()) {
                assertThat(connection.isOpen()).isTrue();
            }
        }
    }
}
