package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link AmqpServer} on a loopback socket, driven by the RabbitMQ Java client ({@code com.rabbitmq:amqp-client})
 * unchanged: the handshake, confirms, returns, consuming, soft and hard errors and the server's shutdown as that client
 * sees them.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class AmqpServerJavaClientTest {
    private final FakeBroker broker = new FakeBroker();
    private AmqpServer server;
    private ConnectionFactory factory;

    @BeforeEach
    void start() throws IOException {
        server = AmqpServer.start(
                "127.0.0.1", 0, broker, AmqpServerConfig.defaults().withIoThreads(1));
        factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(server.localAddress().getPort());
        factory.setUsername("guest");
        factory.setPassword("guest");
        factory.setAutomaticRecoveryEnabled(false);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void shouldConfirmConsumeAndAckWithTheJavaClient() throws Exception {
        try (Connection connection = factory.newConnection()) {
            assertThat(connection.getServerProperties().get("product").toString())
                    .isEqualTo("Ganglion");
            assertThat(connection.getFrameMax()).isEqualTo(131_072);
            assertThat(connection.getChannelMax()).isEqualTo(2047);
            Channel channel = connection.createChannel();
            AMQP.Queue.DeclareOk declared = channel.queueDeclare("q", true, false, false, null);
            assertThat(declared.getQueue()).isEqualTo("q");
            channel.confirmSelect();

            for (int i = 0; i < 10; i++) {
                channel.basicPublish("", "q", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(5_000);

            BlockingQueue<String> received = new ArrayBlockingQueue<>(10);
            channel.basicQos(5);
            channel.basicConsume("q", false, "c", new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(
                        String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                        throws IOException {
                    received.add(new String(body, StandardCharsets.UTF_8));
                    getChannel().basicAck(envelope.getDeliveryTag(), false);
                }
            });
            for (int i = 0; i < 10; i++) {
                assertThat(received.poll(5, TimeUnit.SECONDS)).isEqualTo("m" + i);
            }
            channel.basicCancel("c");
            GetResponse empty = channel.basicGet("q", true);
            assertThat(empty).isNull();
            channel.close();
        }
        assertThat(broker.unsettledCount()).isZero();
        assertThat(broker.consumerCount()).isZero();
    }

    @Test
    void shouldReturnAnUnroutableMandatoryMessageBeforeConfirmingIt() throws Exception {
        try (Connection connection = factory.newConnection()) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            BlockingQueue<String> returned = new ArrayBlockingQueue<>(1);
            channel.addReturnListener(r -> returned.add(
                    r.getReplyCode() + " " + r.getReplyText() + " " + new String(r.getBody(), StandardCharsets.UTF_8)));

            channel.basicPublish("", "nowhere", true, null, "lost".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(5_000);

            assertThat(returned.poll()).isEqualTo("312 NO_ROUTE lost");
        }
    }

    @Test
    void shouldCloseOnlyTheChannelOnASoftError() throws Exception {
        try (Connection connection = factory.newConnection()) {
            Channel channel = connection.createChannel();

            assertThatThrownBy(() -> channel.queueDeclarePassive("missing"))
                    .isInstanceOf(IOException.class)
                    .cause()
                    .isInstanceOfSatisfying(ShutdownSignalException.class, e -> {
                        assertThat(e.isHardError()).isFalse();
                        assertThat(((AMQP.Channel.Close) e.getReason()).getReplyCode())
                                .isEqualTo(404);
                    });

            assertThat(connection.isOpen()).isTrue();
            assertThat(connection.createChannel().queueDeclare().getQueue()).startsWith("amq.gen-");
        }
    }

    @Test
    void shouldRefuseABadPasswordAsAnAuthenticationFailure() {
        factory.setPassword("wrong");

        assertThatThrownBy(() -> factory.newConnection()).isInstanceOf(AuthenticationFailureException.class);
    }

    @Test
    void shouldCloseConnectionsWith320WhenTheServerStops() throws Exception {
        Connection connection = factory.newConnection();
        BlockingQueue<ShutdownSignalException> shutdown = new ArrayBlockingQueue<>(1);
        connection.addShutdownListener(shutdown::add);

        server.close();

        ShutdownSignalException signal = shutdown.poll(5, TimeUnit.SECONDS);
        assertThat(signal).isNotNull();
        assertThat(signal.isHardError()).isTrue();
        assertThat(((AMQP.Connection.Close) signal.getReason()).getReplyCode()).isEqualTo(320);
        assertThat(broker.closedConnections).hasSize(1);
    }
}
