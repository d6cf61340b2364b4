package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.ganglion.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Message TTL and length limits on one broker with the RabbitMQ Java client, on a classic and a quorum queue: {@code
 * x-message-ttl} and the {@code expiration} property, a TTL of 0, a requeue keeping the original time, a restart
 * keeping it too; {@code x-max-length} and {@code x-max-length-bytes} dropping the oldest; {@code x-expires}.
 */
@ParameterizedClass
@ValueSource(strings = {"classic", "quorum"})
class MessageLifecycleIT {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final OneBroker broker = new OneBroker();

    /** The queue type every case runs on. */
    @Parameter
    String type;

    /** This case's connection, closed after it. */
    private Connection connection;

    @BeforeEach
    void connect() throws Exception {
        connection = broker.connect();
    }

    @AfterEach
    void close() throws Exception {
        connection.close();
    }

    /**
     * A channel with confirms on, and {@code queue} declared durable, of this case's type, on it, with the
     * arguments given as name, value pairs.
     */
    private Channel declared(String queue, Object... pairs) throws Exception {
        Map<String, Object> args = new HashMap<>();
        args.put("x-queue-type", type);
        for (int i = 0; i < pairs.length; i += 2) {
            args.put((String) pairs[i], pairs[i + 1]);
        }
        Channel channel = connection.createChannel();
        channel.queueDeclare(queue, true, false, false, args);
        channel.confirmSelect();
        return channel;
    }

    private static AMQP.BasicProperties expiring(String expiration) {
        return new AMQP.BasicProperties.Builder().expiration(expiration).build();
    }

    private static String text(GetResponse response) {
        return new String(response.getBody(), StandardCharsets.UTF_8);
    }

    /** Publishes each body to {@code queue} with {@code properties}, and waits for their confirms. */
    private static void publish(Channel channel, String queue, AMQP.BasicProperties properties, String... bodies)
            throws Exception {
        for (String body : bodies) {
            channel.basicPublish("", queue, properties, body.getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(5_000);
    }

    private static void awaitReady(Channel channel, String queue, long count) {
        Poll.until(
                WAIT, () -> ready(channel, queue) == count, () -> "ready in " + queue + ": " + ready(channel, queue));
    }

    /** Waits for {@code queue} to count no ready message, then finds none to get either. */
    private static void awaitNothingToGet(Channel channel, String queue) throws Exception {
        awaitReady(channel, queue, 0);
        assertThat(channel.basicGet(queue, true)).isNull();
    }

    private static long ready(Channel channel, String queue) {
        try {
            return channel.queueDeclarePassive(queue).getMessageCount();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void shouldExpireMessagesAfterTheQueuesTtlAndNeverHandThemOut() throws Exception {
        String queue = "ttl.queue." + type;
        Channel channel = declared(queue, "x-message-ttl", 300);
        publish(channel, queue, null, "m0", "m1", "m2", "m3", "m4");
        assertThat(ready(channel, queue)).isEqualTo(5);
        awaitNothingToGet(channel, queue);
    }

    @Test
    void shouldExpireAMessageByItsOwnExpirationAheadOfOthersAndTakeTheLowerTtl() throws Exception {
        String queue = "ttl.message." + type;
        Channel channel = declared(queue, "x-message-ttl", 60_000);
        publish(channel, queue, null, "keeps");
        publish(channel, queue, expiring("200"), "goes"); // lower than the queue's
        publish(channel, queue, expiring("600000"), "keeps too"); // the queue's 60 s applies
        awaitReady(channel, queue, 2);
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("keeps");
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("keeps too");
    }

    @Test
    void shouldDeliverAMessageWithATtlOfZeroOnlyToAWaitingConsumer() throws Exception {
        String queue = "ttl.zero." + type;
        Channel channel = declared(queue, "x-message-ttl", 0);
        publish(channel, queue, null, "nobody there");
        awaitReady(channel, queue, 0);

        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        connection
                .createChannel()
                .basicConsume(
                        queue,
                        true,
                        (tag, delivery) -> received.add(new String(delivery.getBody(), StandardCharsets.UTF_8)),
                        tag -> {});
        publish(channel, queue, null, "taken at once");
        assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("taken at once");
        assertThat(received).isEmpty();
    }

    @Test
    void shouldKeepTheOriginalExpiryOfARequeuedMessage() throws Exception {
        String queue = "ttl.requeue." + type;
        Channel channel = declared(queue, "x-message-ttl", 1_000);
        publish(channel, queue, null, "held");
        GetResponse held = channel.basicGet(queue, false);
        assertThat(held).isNotNull();
        Thread.sleep(1_300); // out with this channel past its time: it did not expire there
        channel.basicReject(held.getEnvelope().getDeliveryTag(), true);
        awaitNothingToGet(channel, queue);
    }

    @Test
    void shouldKeepAMessagesAdmissionTimeAcrossARestart() throws Exception {
        String queue = "ttl.restart." + type;
        Channel channel = declared(queue, "x-message-ttl", 4_000);
        long published = System.currentTimeMillis();
        publish(
                channel,
                queue,
                new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                "m");
        connection.close();
        broker.restart();
        connection = broker.connect();
        Channel after = connection.createChannel();
        awaitReady(after, queue, 0);
        long gone = System.currentTimeMillis() - published;
        // measured from the first admission, not from the restart: gone within a second or so of its 4 s
        assertThat(gone).isBetween(3_900L, 5_500L);
    }

    @Test
    void shouldDropTheOldestMessagesOverTheMaxLength() throws Exception {
        String queue = "limit.length." + type;
        Channel channel = declared(queue, "x-max-length", 3);
        publish(channel, queue, null, "m0", "m1", "m2", "m3", "m4");
        awaitReady(channel, queue, 3);
        for (int i = 2; i < 5; i++) {
            assertThat(text(channel.basicGet(queue, true))).isEqualTo("m" + i);
        }
    }

    @Test
    void shouldDropTheOldestMessagesOverTheMaxLengthInBodyBytes() throws Exception {
        String queue = "limit.bytes." + type;
        Channel channel = declared(queue, "x-max-length-bytes", 10);
        publish(channel, queue, null, "abc0", "abc1", "abc2", "abc3"); // 4 bytes each: two fit in 10
        awaitReady(channel, queue, 2);
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("abc2");
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("abc3");
    }

    private boolean exists(String queue) throws Exception {
        try (Channel probe = connection.createChannel()) {
            probe.queueDeclarePassive(queue); // a use: renews the queue's x-expires as RabbitMQ's does
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** {@code x-expires}: a queue nobody uses goes with its messages; a consumer, a get or a declare keeps it. */
    @Test
    void shouldDeleteAQueueUnusedForItsExpiresAndKeepOneInUse() throws Exception {
        String idle = "expires.idle." + type;
        Channel channel = declared(idle, "x-expires", 400);
        publish(channel, idle, null, "goes with it");
        Thread.sleep(1_200);
        assertThat(exists(idle)).as("unused for 1.2 s of its 0.4 s: deleted").isFalse();

        String used = "expires.used." + type;
        channel = declared(used, "x-expires", 600);
        String tag = channel.basicConsume(used, true, (t, d) -> {}, t -> {});
        Thread.sleep(1_200);
        assertThat(exists(used)).as("a consumer keeps it").isTrue();
        channel.basicCancel(tag);
        for (int i = 0; i < 6; i++) {
            Thread.sleep(200);
            channel.basicGet(used, true); // each get is a use
        }
        assertThat(exists(used)).as("gets keep it").isTrue();
        Thread.sleep(1_500);
        assertThat(exists(used)).as("unused since the last get: deleted").isFalse();
    }

    /** Publishes {@code bodies} with confirms and returns, in order, whether each was acked (else nacked). */
    private static java.util.List<Boolean> confirmsOf(Channel channel, String queue, String... bodies)
            throws Exception {
        java.util.Map<Long, Boolean> outcomes = new java.util.concurrent.ConcurrentHashMap<>();
        channel.addConfirmListener(
                (tag, multiple) -> record(outcomes, tag, multiple, true),
                (tag, multiple) -> record(outcomes, tag, multiple, false));
        long first = channel.getNextPublishSeqNo();
        for (String body : bodies) {
            channel.basicPublish("", queue, null, body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirms(5_000); // one at a time: the queue's count is settled before the next
        }
        java.util.List<Boolean> acked = new java.util.ArrayList<>();
        for (long tag = first; tag < first + bodies.length; tag++) {
            acked.add(outcomes.get(tag));
        }
        return acked;
    }

    private static void record(java.util.Map<Long, Boolean> outcomes, long tag, boolean multiple, boolean ack) {
        long from = multiple ? 1 : tag;
        for (long t = from; t <= tag; t++) {
            outcomes.putIfAbsent(t, ack);
        }
    }

    @Test
    void shouldNackPublishesOverTheMaxLengthWithRejectPublishAndKeepTheOldest() throws Exception {
        String queue = "reject.publish." + type;
        Channel channel = declared(queue, "x-max-length", 2, "x-overflow", "reject-publish");

        assertThat(confirmsOf(channel, queue, "m0", "m1", "m2")).containsExactly(true, true, false);
        assertThat(ready(channel, queue)).isEqualTo(2);
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("m0");
        assertThat(confirmsOf(channel, queue, "m3")).containsExactly(true);
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("m1");
        assertThat(text(channel.basicGet(queue, true))).isEqualTo("m3");

        Channel unconfirmed = connection.createChannel();
        for (int i = 0; i < 4; i++) {
            unconfirmed.basicPublish("", queue, null, ("u" + i).getBytes(StandardCharsets.UTF_8));
        }
        Poll.until(WAIT, () -> ready(channel, queue) == 2, () -> "ready " + ready(channel, queue));
        Thread.sleep(200);
        assertThat(ready(channel, queue))
                .as("without confirms the rest is dropped")
                .isEqualTo(2);
    }

    @Test
    void shouldRejectPublishesOverTheMaxLengthInBytes() throws Exception {
        String queue = "reject.bytes." + type;
        Channel channel = declared(queue, "x-max-length-bytes", 10, "x-overflow", "reject-publish");

        assertThat(confirmsOf(channel, queue, "12345", "67890", "x")).containsExactly(true, true, false);
        assertThat(ready(channel, queue)).isEqualTo(2);
    }
}
