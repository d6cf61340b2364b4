package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.ganglion.testing.ClusterTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Streams ({@code x-queue-type: stream}) on three broker processes with the real RabbitMQ client: readers from
 * {@code first}, {@code last}, {@code next} and an offset, each on any broker, every one getting every committed
 * message with its {@code x-stream-offset}; what RabbitMQ refuses of a stream refused with its reply codes; retention
 * by {@code x-max-length-bytes}; and an owner killed under a publisher, after which a reader that subscribes again
 * from the offset after the last it saw misses nothing confirmed.
 */
@ClusterTest
class StreamIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    private List<BrokerChild> brokers = new ArrayList<>();

    /** A failed case prints the brokers' event lines: its folder, with their logs, is kept only on this machine. */
    @RegisterExtension
    final TestExecutionExceptionHandler printBrokerEventsOnFailure = (context, failure) -> {
        TestCluster.printBrokerEvents(dir);
        throw failure;
    };

    /** One delivery: its body and its x-stream-offset header. */
    record Read(String body, long offset) {}

    /** A stream reader with manual acks and a prefetch, collecting what it gets; acks every delivery. */
    static final class Reader extends DefaultConsumer {
        final BlockingQueue<Read> reads = new LinkedBlockingQueue<>();
        final AtomicInteger cancels = new AtomicInteger();

        Reader(Channel channel) {
            super(channel);
        }

        static Reader subscribe(Connection connection, String stream, Object offset) throws Exception {
            Channel channel = connection.createChannel();
            channel.basicQos(50);
            Reader reader = new Reader(channel);
            Map<String, Object> args = new HashMap<>();
            if (offset != null) {
                args.put("x-stream-offset", offset);
            }
            channel.basicConsume(stream, false, args, reader);
            return reader;
        }

        @Override
        public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws java.io.IOException {
            Object offset = properties.getHeaders() == null
                    ? null
                    : properties.getHeaders().get("x-stream-offset");
            reads.add(new Read(new String(body, StandardCharsets.UTF_8), offset == null ? -1 : (Long) offset));
            getChannel().basicAck(envelope.getDeliveryTag(), false);
        }

        @Override
        public void handleCancel(String consumerTag) {
            cancels.incrementAndGet();
        }

        /** The next {@code count} reads, failing after {@link #WAIT}. */
        List<Read> take(int count) throws InterruptedException {
            List<Read> taken = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (taken.size() < count) {
                Read read = reads.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (read == null) {
                    throw new AssertionError("got " + taken.size() + " of " + count + ": " + tail(taken)
                            + (cancels.get() > 0 ? "; the broker cancelled the consumer" : ""));
                }
                taken.add(read);
            }
            return taken;
        }
    }

    private static List<Read> tail(List<Read> reads) {
        return reads.subList(Math.max(0, reads.size() - 3), reads.size());
    }

    private void startCluster(String... settings) throws Exception {
        brokers = TestCluster.start(dir, 3, settings);
    }

    @AfterEach
    void stopCluster() throws Exception {
        BrokerChild.stopTogether(brokers);
    }

    private static void publish(Connection connection, String stream, String prefix, int from, int count)
            throws Exception {
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int i = from; i < from + count; i++) {
                channel.basicPublish(
                        "",
                        stream,
                        new AMQP.BasicProperties.Builder()
                                .deliveryMode(2)
                                .headers(Map.of("n", i))
                                .build(),
                        (prefix + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
    }

    private static List<String> bodies(List<Read> reads) {
        return reads.stream().map(Read::body).toList();
    }

    private static List<String> expected(String prefix, int from, int toExclusive) {
        List<String> bodies = new ArrayList<>();
        for (int i = from; i < toExclusive; i++) {
            bodies.add(prefix + i);
        }
        return bodies;
    }

    private static void assertIncreasing(List<Read> reads) {
        for (int i = 1; i < reads.size(); i++) {
            assertThat(reads.get(i).offset())
                    .as("offsets increase: %s then %s", reads.get(i - 1), reads.get(i))
                    .isGreaterThan(reads.get(i - 1).offset());
        }
    }

    private static JsonNode stream(BrokerChild broker, String name) throws Exception {
        return TestCluster.queue(broker, name);
    }

    @Test
    void shouldLetEveryReaderReadTheWholeStreamFromWhereItChoseOnAnyBroker() throws Exception {
        startCluster("storage.segment_bytes", "65536");
        try (Connection first = QueueTraffic.connect(brokers.get(0));
                Connection second = QueueTraffic.connect(brokers.get(1));
                Connection third = QueueTraffic.connect(brokers.get(2))) {
            AMQP.Queue.DeclareOk declared =
                    first.createChannel().queueDeclare("events", true, false, false, Map.of("x-queue-type", "stream"));
            assertThat(declared.getMessageCount()).isZero();
            JsonNode stream = stream(brokers.get(0), "events");
            assertThat(stream.path("type").asText()).isEqualTo("stream");
            assertThat(stream.path("copies").asInt()).isEqualTo(3);
            assertThat(stream.path("owner").asText()).isEqualTo(brokers.get(0).nodeId());

            // published through a broker that does not own it, confirmed once durable on two copies
            publish(second, "events", "e", 0, 1000);

            // two readers from the first message, one on the owner and one on another broker: each gets all 1000
            Reader local = Reader.subscribe(first, "events", "first");
            Reader remote = Reader.subscribe(third, "events", "first");
            List<Read> all = local.take(1000);
            assertThat(bodies(all)).isEqualTo(expected("e", 0, 1000));
            assertIncreasing(all);
            assertThat(remote.take(1000)).isEqualTo(all);

            // from an offset a delivery gave: from that message on
            Reader fromOffset = Reader.subscribe(second, "events", all.get(500).offset());
            assertThat(bodies(fromOffset.take(500))).isEqualTo(expected("e", 500, 1000));
            // last: the last message committed, then what follows; next: only what follows
            Reader last = Reader.subscribe(third, "events", "last");
            assertThat(last.take(1)).containsExactly(all.get(999));
            Reader next = Reader.subscribe(first, "events", null);
            Thread.sleep(200);
            assertThat(next.reads).isEmpty();
            publish(first, "events", "e", 1000, 10);
            assertThat(bodies(next.take(10))).isEqualTo(expected("e", 1000, 1010));
            assertThat(bodies(last.take(10))).isEqualTo(expected("e", 1000, 1010));
            assertThat(bodies(local.take(10))).isEqualTo(expected("e", 1000, 1010));
            assertThat(bodies(remote.take(10))).isEqualTo(expected("e", 1000, 1010));
            assertThat(bodies(fromOffset.take(10))).isEqualTo(expected("e", 1000, 1010));
            // reading removed nothing
            AMQP.Queue.DeclareOk again = first.createChannel().queueDeclarePassive("events");
            assertThat(again.getMessageCount()).isGreaterThanOrEqualTo(1010);
            assertThat(again.getConsumerCount()).isEqualTo(5);

            refusals(first, second);
            retention(first);
            byTime(first);
        }
    }

    /** What RabbitMQ refuses of a stream, refused here with its reply codes; the stream serves on. */
    private void refusals(Connection first, Connection second) throws Exception {
        Map<String, Object> stream = Map.of("x-queue-type", "stream");
        assertThatThrownBy(() -> first.createChannel().queueDeclare("s-transient", false, false, false, stream))
                .hasStackTraceContaining("PRECONDITION_FAILED - invalid property 'non-durable'");
        assertThatThrownBy(() -> first.createChannel().queueDeclare("s-exclusive", true, true, false, stream))
                .hasStackTraceContaining("PRECONDITION_FAILED - invalid property 'exclusive'");
        assertThatThrownBy(() -> first.createChannel()
                        .queueDeclare(
                                "s-aged", true, false, false, Map.of("x-queue-type", "stream", "x-max-age", "7 days")))
                .hasStackTraceContaining("PRECONDITION_FAILED - invalid arg 'x-max-age'");
        assertThatThrownBy(() -> first.createChannel()
                        .queueDeclare(
                                "s-sized",
                                true,
                                false,
                                false,
                                Map.of("x-queue-type", "stream", "x-max-length-bytes", "lots")))
                .hasStackTraceContaining("PRECONDITION_FAILED - invalid arg 'x-max-length-bytes'");

        Channel noQos = first.createChannel();
        assertThatThrownBy(() -> noQos.basicConsume("events", false, new DefaultConsumer(noQos)))
                .hasStackTraceContaining("PRECONDITION_FAILED - consumer prefetch count is not set");
        for (Object bad : List.of("middle", -5L, "5x", "h")) {
            Channel channel = first.createChannel();
            channel.basicQos(10);
            assertThatThrownBy(() -> channel.basicConsume(
                            "events", false, Map.of("x-stream-offset", bad), new DefaultConsumer(channel)))
                    .as("x-stream-offset %s", bad)
                    .hasStackTraceContaining("PRECONDITION_FAILED - invalid arg 'x-stream-offset'");
        }
        // 540 closes the connection, as in RabbitMQ: each on a connection of its own
        Connection autoAck = QueueTraffic.connect(brokers.get(1));
        try {
            Channel channel = autoAck.createChannel();
            channel.basicQos(10);
            assertThatThrownBy(() -> channel.basicConsume("events", true, new DefaultConsumer(channel)))
                    .hasStackTraceContaining("NOT_IMPLEMENTED - automatic acknowledgement not supported");
        } finally {
            autoAck.abort();
        }
        Connection get = QueueTraffic.connect(brokers.get(0));
        try {
            assertThatThrownBy(() -> get.createChannel().basicGet("events", false))
                    .hasStackTraceContaining("NOT_IMPLEMENTED - basic.get not supported");
        } finally {
            get.abort();
        }
        Connection purge = QueueTraffic.connect(brokers.get(2));
        try {
            assertThatThrownBy(() -> purge.createChannel().queuePurge("events"))
                    .hasStackTraceContaining("NOT_IMPLEMENTED - queue.purge not supported");
        } finally {
            purge.abort();
        }
        // the stream and the other connections serve on
        publish(second, "events", "e", 1010, 5);
        Reader check = Reader.subscribe(first, "events", "first");
        assertThat(bodies(check.take(1015))).isEqualTo(expected("e", 0, 1015));
    }

    /** x-max-length-bytes: the oldest whole segments go, the newest stay, readers from first start past them. */
    private void retention(Connection first) throws Exception {
        first.createChannel()
                .queueDeclare(
                        "recent", true, false, false, Map.of("x-queue-type", "stream", "x-max-length-bytes", 200_000));
        String padding = "x".repeat(1000);
        publish(first, "recent", padding + "-", 0, 2000); // about 2 MB in 64 KiB segments
        // retention runs every 500 ms and may take the log down in steps while the publishes go on: wait for it to
        // keep no more than the limit and the active segment (1000-byte messages)
        TestCluster.awaitQueue(
                brokers.get(0),
                "recent",
                q -> (2001 - q.path("owner_status").path("start").asLong()) * 1000L <= 200_000 + 65_536);
        Reader reader = Reader.subscribe(first, "recent", "first");
        Read oldest = reader.take(1).getFirst();
        int oldestIndex = Integer.parseInt(oldest.body().substring(padding.length() + 1));
        assertThat(oldestIndex).as("the oldest message kept").isGreaterThan(1000);
        assertThat((2000 - oldestIndex) * 1000L)
                .as("what is kept: at most the limit and the active segment")
                .isLessThanOrEqualTo(200_000 + 65_536);
        List<Read> rest = reader.take(2000 - oldestIndex - 1);
        assertThat(rest.getLast().body()).isEqualTo(padding + "-1999");
    }

    /**
     * x-stream-offset by time (an AMQP timestamp, an interval) and retention by x-max-age: records carry the time their
     * copy appended them.
     */
    private void byTime(Connection first) throws Exception {
        first.createChannel().queueDeclare("timed", true, false, false, Map.of("x-queue-type", "stream"));
        publish(first, "timed", "t", 0, 100);
        Thread.sleep(1_500);
        long between = System.currentTimeMillis(); // a timestamp has whole seconds: at most 1 s earlier
        Thread.sleep(1_500);
        publish(first, "timed", "t", 100, 100);
        Reader since = Reader.subscribe(first, "timed", new Date(between));
        assertThat(bodies(since.take(100))).isEqualTo(expected("t", 100, 200));
        Reader hour = Reader.subscribe(first, "timed", "1h");
        assertThat(bodies(hour.take(200))).isEqualTo(expected("t", 0, 200));
        Reader future = Reader.subscribe(first, "timed", new Date(System.currentTimeMillis() + 60_000));
        publish(first, "timed", "t", 200, 1);
        assertThat(bodies(future.take(1))).as("a time to come: what follows").containsExactly("t200");

        first.createChannel()
                .queueDeclare("aged", true, false, false, Map.of("x-queue-type", "stream", "x-max-age", "3s"));
        String padding = "y".repeat(1000);
        long publishing = System.currentTimeMillis(); // no record of "aged" is older
        publish(first, "aged", padding + "-", 0, 400); // about 450 KB in 64 KiB segments
        TestCluster.awaitQueue(
                brokers.get(0),
                "aged",
                q -> q.path("owner_status").path("start").asLong() > 100);
        assertThat(System.currentTimeMillis() - publishing)
                .as("nothing discarded before its age")
                .isGreaterThanOrEqualTo(2_900);
        Reader reader = Reader.subscribe(first, "aged", "first");
        Read oldest = reader.take(1).getFirst();
        int oldestIndex = Integer.parseInt(oldest.body().substring(padding.length() + 1));
        assertThat(oldestIndex).as("the oldest kept: the segment being written").isGreaterThan(100);
        List<Read> rest = reader.take(400 - oldestIndex - 1);
        assertThat(rest.getLast().body()).isEqualTo(padding + "-399");
    }

    @Test
    void shouldKeepEveryConfirmedMessageReadableWhenTheOwnerIsKilled() throws Exception {
        startCluster();
        BrokerChild owner = brokers.get(0);
        try (Connection declaring = QueueTraffic.connect(owner)) {
            declaring.createChannel().queueDeclare("audit", true, false, false, Map.of("x-queue-type", "stream"));
        }
        BrokerChild publisherBroker = brokers.get(1);
        BrokerChild readerBroker = brokers.get(2);
        try (Connection publishing = QueueTraffic.connect(publisherBroker);
                Connection reading = QueueTraffic.connect(readerBroker)) {
            Reader reader = Reader.subscribe(reading, "audit", "first");
            publish(publishing, "audit", "a", 0, 300);
            List<Read> before = reader.take(300);
            owner.kill();
            // confirms go on through the recovery (the publish is re-sent to the new owner, never nacked)
            publish(publishing, "audit", "a", 300, 300);
            // the reader was cancelled when the owner died; subscribing again after the last offset it saw, it gets
            // the rest, with nothing missing and nothing twice
            long deadline = System.nanoTime() + WAIT.toNanos();
            List<Read> after = new ArrayList<>();
            Read lastSeen = before.getLast();
            Reader again = null;
            while (after.size() < 300) {
                assertThat(System.nanoTime())
                        .as("read everything in time: %s", tail(after))
                        .isLessThan(deadline);
                if (reader.cancels.get() > 0 && again == null) {
                    again = Reader.subscribe(reading, "audit", lastSeen.offset() + 1);
                }
                Reader from = again == null ? reader : again;
                Read read = from.reads.poll(100, TimeUnit.MILLISECONDS);
                if (read != null) {
                    after.add(read);
                }
            }
            assertThat(bodies(after)).as("in the order published").isEqualTo(expected("a", 300, 600));
            assertThat(reader.cancels.get()).as("cancelled as the owner moved").isPositive();

            // a new reader from the first message, on a survivor, reads every confirmed message once, in order
            Reader whole = Reader.subscribe(publishing, "audit", "first");
            List<Read> all = whole.take(600);
            assertThat(bodies(all)).isEqualTo(expected("a", 0, 600));
            assertThat(all.subList(300, 600)).isEqualTo(after);
            assertIncreasing(all);
            Thread.sleep(200);
            assertThat(whole.reads).as("nothing more").isEmpty();
            JsonNode recovered = stream(publisherBroker, "audit");
            assertThat(recovered.path("owner").asText()).isNotEqualTo(owner.nodeId());
        }
    }
}
