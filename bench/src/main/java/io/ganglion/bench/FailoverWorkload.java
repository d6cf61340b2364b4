package io.ganglion.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One queue's load in {@code bench failover}: a publisher at a fixed rate with asynchronous confirms and a consumer with
 * manual acks, each on its own connection to a broker that survives the kill. Every message carries its index in the
 * body; the arrays below record, per index, when it was sent, when it was confirmed, how it ended and how often it was
 * consumed.
 *
 * <p>Implementation notes. The publisher runs on one scheduler thread (a fixed-rate tick that sends what the schedule
 * says is due, so a late tick catches up instead of drifting); confirms and deliveries arrive on the client library's
 * threads. A publish is claimed exactly once by whoever removes its delivery tag from {@code outstanding}: the confirm
 * listener (ack or nack), the timeout sweep, or the channel's shutdown. Writers of the per-message arrays then bump
 * {@code resolved} or {@code consumed} (volatile), and readers read those counters first, which orders the plain array
 * writes before the reads. The arrays are read for the figures only after the load is stopped.
 */
final class FailoverWorkload implements AutoCloseable {
    /** First 8 bytes of every body: tells this run's messages from anything else in the queue. */
    private final long runId;

    final String queue;
    final String publisherUri;
    final String consumerUri;
    private final int rate;
    private final int bodySize;
    private final long timeoutNanos;
    private final long origin;

    final int capacity;
    final long[] sendTimes;
    final long[] confirmTimes;
    final byte[] outcomes;
    final int[] deliveries;
    final int[] redeliveredDuplicates;

    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong resolved = new AtomicLong();
    private final AtomicLong confirmed = new AtomicLong();
    private final AtomicLong consumed = new AtomicLong();
    private volatile long lastDeliveryNanos;
    /** Due publishes not sent because no channel was open: the client could not publish at all. */
    private final AtomicLong skipped = new AtomicLong();

    private final ScheduledExecutorService publisherThread;
    private final ScheduledExecutorService consumerThread;
    private final ConcurrentSkipListMap<Long, Integer> outstanding = new ConcurrentSkipListMap<>();
    private volatile boolean stopped;
    private long publishFrom;
    private long publishUntil;
    private Connection publisherConnection;
    private Channel publisherChannel;
    private long lastChannelAttempt;
    private Connection consumerConnection;
    private volatile Channel consumerChannel;
    private volatile boolean subscribed;

    FailoverWorkload(
            String queue,
            String publisherUri,
            String consumerUri,
            int rate,
            int bodySize,
            long timeoutNanos,
            long origin,
            int capacity,
            long runId) {
        this.queue = queue;
        this.publisherUri = publisherUri;
        this.consumerUri = consumerUri;
        this.rate = rate;
        this.bodySize = Math.max(16, bodySize);
        this.timeoutNanos = timeoutNanos;
        this.origin = origin;
        this.capacity = capacity;
        this.runId = runId;
        sendTimes = new long[capacity];
        confirmTimes = new long[capacity];
        java.util.Arrays.fill(confirmTimes, FailoverStats.NONE);
        outcomes = new byte[capacity];
        deliveries = new int[capacity];
        redeliveredDuplicates = new int[capacity];
        publisherThread = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "bench-publisher-" + queue));
        consumerThread = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "bench-consumer-" + queue));
    }

    private static Thread daemon(Runnable runnable, String name) {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        return thread;
    }

    /** Nanoseconds since the trial's origin. */
    private long now() {
        return System.nanoTime() - origin;
    }

    static Connection connect(String uri, String name) throws IOException {
        ConnectionFactory factory = new ConnectionFactory();
        try {
            factory.setUri(uri);
        } catch (Exception e) {
            throw new IOException("bad AMQP URI " + uri + ": " + e.getMessage(), e);
        }
        factory.setAutomaticRecoveryEnabled(false);
        factory.setConnectionTimeout(5_000);
        factory.setRequestedHeartbeat(10);
        try {
            return factory.newConnection(name);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException("connecting to " + uri + " timed out", e);
        }
    }

    /** Subscribes the consumer (and keeps it subscribed: re-subscribes after a cancel or a closed channel). */
    void startConsumer() throws IOException {
        consumerConnection = connect(consumerUri, "bench-consumer-" + queue);
        consumerThread.scheduleWithFixedDelay(this::ensureSubscribed, 0, 250, TimeUnit.MILLISECONDS);
    }

    private void ensureSubscribed() {
        if (subscribed && consumerChannel != null && consumerChannel.isOpen()) {
            return;
        }
        try {
            if (!consumerConnection.isOpen()) {
                consumerConnection = connect(consumerUri, "bench-consumer-" + queue);
            }
            Channel channel = consumerChannel;
            if (channel == null || !channel.isOpen()) {
                channel = consumerConnection.createChannel();
                channel.basicQos(500);
                consumerChannel = channel;
            }
            channel.basicConsume(queue, false, new Receiver(channel));
            subscribed = true;
        } catch (IOException | RuntimeException e) {
            // the queue is unavailable (its home is down: 404 closes the channel); try again on the next tick
            subscribed = false;
        }
    }

    private final class Receiver extends DefaultConsumer {
        Receiver(Channel channel) {
            super(channel);
        }

        @Override
        public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws IOException {
            ByteBuffer buffer = ByteBuffer.wrap(body);
            if (body.length >= 12 && buffer.getLong(0) == runId) {
                int index = buffer.getInt(8);
                if (index >= 0 && index < capacity) {
                    deliveries[index]++;
                    if (deliveries[index] > 1 && envelope.isRedeliver()) {
                        redeliveredDuplicates[index]++;
                    }
                }
            }
            lastDeliveryNanos = now();
            consumed.incrementAndGet();
            getChannel().basicAck(envelope.getDeliveryTag(), false);
        }

        @Override
        public void handleCancel(String consumerTag) {
            subscribed = false;
        }

        @Override
        public void handleShutdownSignal(String consumerTag, ShutdownSignalException sig) {
            subscribed = false;
        }
    }

    /** Publishes at the rate from {@code fromNanos} (trial time) until {@code untilNanos}. */
    void startPublisher(long fromNanos, long untilNanos) throws IOException {
        this.publishFrom = fromNanos;
        this.publishUntil = untilNanos;
        publisherConnection = connect(publisherUri, "bench-publisher-" + queue);
        openPublisherChannel();
        long delay = Math.max(0, fromNanos - now());
        publisherThread.scheduleAtFixedRate(this::tick, delay, 1_000_000, TimeUnit.NANOSECONDS);
        publisherThread.scheduleWithFixedDelay(this::sweep, delay, 100, TimeUnit.MILLISECONDS);
    }

    private void openPublisherChannel() throws IOException {
        lastChannelAttempt = now();
        if (!publisherConnection.isOpen()) {
            publisherConnection = connect(publisherUri, "bench-publisher-" + queue);
        }
        Channel channel = publisherConnection.createChannel();
        channel.confirmSelect();
        ConcurrentSkipListMap<Long, Integer> mine = new ConcurrentSkipListMap<>();
        channel.addConfirmListener(
                (tag, multiple) -> resolve(mine, tag, multiple, FailoverStats.CONFIRMED),
                (tag, multiple) -> resolve(mine, tag, multiple, FailoverStats.NACKED));
        channel.addShutdownListener(cause -> {
            // a closed channel never confirms what it had outstanding: those outcomes are unknown
            for (Long tag : mine.keySet()) {
                claim(mine, tag, FailoverStats.TIMED_OUT);
            }
        });
        channelTags = mine;
        publisherChannel = channel;
    }

    /** Delivery tag -> message index, of the current channel (tags restart on a new channel). */
    private volatile ConcurrentSkipListMap<Long, Integer> channelTags = new ConcurrentSkipListMap<>();

    private void resolve(ConcurrentSkipListMap<Long, Integer> tags, long tag, boolean multiple, byte outcome) {
        if (multiple) {
            ConcurrentNavigableMap<Long, Integer> head = tags.headMap(tag, true);
            for (Long each : head.keySet()) {
                claim(tags, each, outcome);
            }
        } else {
            claim(tags, tag, outcome);
        }
    }

    private void claim(ConcurrentSkipListMap<Long, Integer> tags, long tag, byte outcome) {
        Integer index = tags.remove(tag);
        if (index == null) {
            return; // already resolved: timed out before its confirm, or closed
        }
        outstanding.remove((long) index);
        if (outcome == FailoverStats.CONFIRMED) {
            confirmTimes[index] = now();
            confirmed.incrementAndGet();
        }
        outcomes[index] = outcome;
        resolved.incrementAndGet();
    }

    private void tick() {
        long now = now();
        if (stopped || now < publishFrom) {
            return;
        }
        long due = Math.min(capacity, (Math.min(now, publishUntil) - publishFrom) * rate / 1_000_000_000L);
        long done = sent.get() + skipped.get();
        if (done >= due) {
            return;
        }
        Channel channel = publisherChannel;
        if (channel == null || !channel.isOpen()) {
            if (now - lastChannelAttempt > 250_000_000L) {
                try {
                    openPublisherChannel();
                    channel = publisherChannel;
                } catch (IOException | RuntimeException e) {
                    channel = null;
                }
            }
            if (channel == null || !channel.isOpen()) {
                skipped.addAndGet(due - done);
                return;
            }
        }
        ConcurrentSkipListMap<Long, Integer> tags = channelTags;
        byte[] body = new byte[bodySize];
        ByteBuffer buffer = ByteBuffer.wrap(body);
        buffer.putLong(0, runId);
        for (long i = done; i < due; i++) {
            int index = (int) sent.get();
            buffer.putInt(8, index);
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                    .deliveryMode(2)
                    .messageId(queue + "-" + index)
                    .build();
            long tag = channel.getNextPublishSeqNo();
            sendTimes[index] = now();
            outstanding.put((long) index, index);
            tags.put(tag, index);
            sent.incrementAndGet();
            try {
                channel.basicPublish("", queue, properties, body);
            } catch (IOException | RuntimeException e) {
                claim(tags, tag, FailoverStats.TIMED_OUT);
                return;
            }
        }
    }

    /** Publishes with no confirm within the timeout: their outcome is unknown from here on. */
    private void sweep() {
        long limit = now() - timeoutNanos;
        ConcurrentSkipListMap<Long, Integer> tags = channelTags;
        for (Map.Entry<Long, Integer> entry : tags.entrySet()) {
            if (sendTimes[entry.getValue()] > limit) {
                break; // tags are in send order
            }
            claim(tags, entry.getKey(), FailoverStats.TIMED_OUT);
        }
    }

    /** Stops publishing; waits until every publish is resolved (confirmed, nacked or timed out). */
    void stopPublisher() throws InterruptedException {
        stopped = true;
        Waits.within(Duration.ofNanos(timeoutNanos + 2_000_000_000L), Duration.ofMillis(50), outstanding::isEmpty);
        publisherThread.shutdownNow();
        publisherThread.awaitTermination(5, TimeUnit.SECONDS);
        for (var entry : channelTags.entrySet()) {
            claim(channelTags, entry.getKey(), FailoverStats.TIMED_OUT);
        }
        closeQuietly(publisherConnection);
    }

    /**
     * Waits until the consumer has received every confirmed message and then nothing more for {@code quietNanos}, or
     * until nothing arrived for {@code idleNanos} (then what is missing is lost).
     */
    void drain(long quietNanos, long idleNanos, long maxNanos) throws InterruptedException {
        long start = now();
        Waits.within(Duration.ofNanos(maxNanos), Duration.ofMillis(100), () -> {
            long sinceLast = now() - Math.max(lastDeliveryNanos, start);
            boolean complete = missing(confirmed.get()) == 0;
            return (complete && sinceLast > quietNanos) || sinceLast > idleNanos;
        });
    }

    private long missing(long confirmedSoFar) {
        consumed.get(); // orders the consumer's array writes before these reads
        long missing = 0;
        int count = (int) sent.get();
        for (int i = 0; i < count; i++) {
            if (outcomes[i] == FailoverStats.CONFIRMED && deliveries[i] == 0) {
                missing++;
            }
        }
        return missing;
    }

    void stopConsumer() throws InterruptedException {
        consumerThread.shutdownNow();
        consumerThread.awaitTermination(5, TimeUnit.SECONDS);
        closeQuietly(consumerConnection);
    }

    int sentCount() {
        resolved.get();
        consumed.get();
        return (int) sent.get();
    }

    long skippedCount() {
        return skipped.get();
    }

    long confirmedCount() {
        return confirmed.get();
    }

    long consumedCount() {
        return consumed.get();
    }

    long unresolvedCount() {
        return sent.get() - resolved.get();
    }

    private static void closeQuietly(Connection connection) {
        if (connection == null || !connection.isOpen()) {
            return;
        }
        try {
            connection.close(2_000);
        } catch (IOException | RuntimeException e) {
            System.err.println("bench: closing a connection: " + e.getMessage());
        }
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        publisherThread.shutdownNow();
        consumerThread.shutdownNow();
        closeQuietly(publisherConnection);
        closeQuietly(consumerConnection);
    }
}
