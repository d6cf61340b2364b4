package io.ganglion.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A connection sees its own publishes, as in RabbitMQ: a {@code basic.get}, {@code queue.declare}, {@code queue.purge},
 * {@code queue.delete} or {@code basic.consume} right after a publish, with no confirm awaited, on the publishing
 * channel or another channel of its connection, observes the message (docs/amqp.md).
 */
public final class OwnPublishes {
    private static final int ROUNDS = 10;

    private OwnPublishes() {}

    /**
     * Publishes then gets, counts, purges and deletes at once through {@code connection}, on {@link #ROUNDS} queues
     * named from {@code prefix} and declared through {@code declaring} (the same connection, or one to the broker that
     * is to own them).
     */
    public static void checkQueue(
            Connection declaring, Connection connection, String prefix, Map<String, Object> arguments)
            throws Exception {
        Channel declarations = declaring.createChannel();
        Channel publishing = connection.createChannel();
        Channel other = connection.createChannel();
        for (int round = 0; round < ROUNDS; round++) {
            String queue = prefix + "." + round;
            declarations.queueDeclare(queue, true, false, false, arguments);
            awaitKnown(connection, queue);
            publish(publishing, queue, "got " + round);
            GetResponse got = publishing.basicGet(queue, true);
            assertNotNull(got, "round " + round + ": basic.get right after the publish found it");
            assertEquals("got " + round, text(got.getBody()));

            publish(publishing, queue, "counted");
            assertEquals(1, publishing.queueDeclarePassive(queue).getMessageCount(), "declare on the channel");
            publish(publishing, queue, "counted by the other channel");
            assertEquals(2, other.queueDeclarePassive(queue).getMessageCount(), "declare on another channel");
            publish(publishing, queue, "purged");
            assertEquals(3, publishing.queuePurge(queue).getMessageCount(), "purge");
            publish(publishing, queue, "deleted");
            assertEquals(1, other.queueDelete(queue).getMessageCount(), "delete on another channel");
        }
        publishing.close();
        other.close();
        declarations.close();
    }

    /**
     * Publishes to a stream through {@code connection} then subscribes at once: a subscription from {@code next} (the
     * default) starts after the publish, one from {@code first} gets it. The stream is declared through {@code
     * declaring}.
     */
    public static void checkStream(Connection declaring, Connection connection, String stream) throws Exception {
        Channel declarations = declaring.createChannel();
        declarations.queueDeclare(stream, true, false, false, Map.of("x-queue-type", "stream"));
        declarations.close();
        awaitKnown(connection, stream);
        Channel publishing = connection.createChannel();
        for (int round = 0; round < ROUNDS; round++) {
            publish(publishing, stream, "before " + round);
            Channel reading = connection.createChannel();
            BlockingQueue<String> next = subscribe(reading, stream, "next");
            publish(publishing, stream, "after " + round);
            assertEquals("after " + round, next.poll(10, TimeUnit.SECONDS), "round " + round + " from next");
            assertNull(next.poll(100, TimeUnit.MILLISECONDS));
            reading.close();
        }
        Channel reading = connection.createChannel();
        publish(publishing, stream, "last");
        BlockingQueue<String> first = subscribe(reading, stream, "first");
        for (int round = 0; round < ROUNDS; round++) {
            assertEquals("before " + round, first.poll(10, TimeUnit.SECONDS));
            assertEquals("after " + round, first.poll(10, TimeUnit.SECONDS));
        }
        assertEquals("last", first.poll(10, TimeUnit.SECONDS), "from first, the publish just before the consume");
        reading.close();
        publishing.close();
    }

    /** Waits until {@code connection}'s broker knows {@code queue}, declared through another broker's metadata. */
    private static void awaitKnown(Connection connection, String queue) {
        Poll.until(
                Duration.ofSeconds(10),
                () -> {
                    Channel probe = connection.createChannel();
                    try {
                        probe.queueDeclarePassive(queue);
                        probe.close();
                        return true;
                    } catch (IOException e) {
                        return false; // 404: not applied there yet; the channel is closed
                    }
                },
                () -> "queue '" + queue + "' known on the connection's broker");
    }

    private static void publish(Channel channel, String queue, String body) throws IOException {
        channel.basicPublish("", queue, null, body.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    private static BlockingQueue<String> subscribe(Channel channel, String stream, String offset) throws IOException {
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        channel.basicQos(100);
        channel.basicConsume(stream, false, Map.of("x-stream-offset", offset), new DefaultConsumer(channel) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                    throws IOException {
                got.add(text(body));
                getChannel().basicAck(envelope.getDeliveryTag(), false);
            }
        });
        return got;
    }
}
