package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
