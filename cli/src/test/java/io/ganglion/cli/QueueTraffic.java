package io.ganglion.cli;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One queue's traffic for a total-queue check, through the real RabbitMQ client: a publisher with confirms on one
 * broker, a consumer with manual acks on another (or the same), and what they saw. Publishes carry message ids
 * {@code prefix + n}. A consumer cancelled by the broker (its queue's owner moved) subscribes again on a fresh channel
 * until the queue takes it, as an application would.
 *
 * <p>The check: every confirmed id consumed ({@link #lost()} empty), no id outside what was published ({@link
 * #unexpected()}), and an id delivered twice only with the redelivered flag ({@link #duplicatesNotRedelivered()}).
 */
final class QueueTraffic implements AutoCloseable {
    private final String queue;
    private final String prefix;
    private final Connection publishing;
    private final Connection consuming;
    private final Channel publisher;
    private final ExecutorService resubscriber = Executors.newSingleThreadExecutor();

    private final ConcurrentNavigableMap<Long, String> outstanding = new ConcurrentSkipListMap<>();
    private final Set<String> confirmed = ConcurrentHashMap.newKeySet();
    private final AtomicInteger nacked = new AtomicInteger();
    private final Map<String, Integer> deliveries = new ConcurrentHashMap<>();
    private final AtomicInteger unexpected = new AtomicInteger();
    private final AtomicInteger duplicatesNotRedelivered = new AtomicInteger();
    private final AtomicInteger subscriptions = new AtomicInteger();
    private final AtomicLong lastConfirmNanos = new AtomicLong();
    private final AtomicLong longestConfirmGapNanos = new AtomicLong();
    private volatile boolean closing;
    private volatile long markNanos = System.nanoTime();
    private final List<String> longGaps = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<String> shutdowns = new java.util.concurrent.CopyOnWriteArrayList<>();
    private int published;

    QueueTraffic(BrokerChild publishVia, BrokerChild consumeVia, String queue, String prefix) throws Exception {
        this.queue = queue;
        this.prefix = prefix;
        this.publishing = connect(publishVia);
        this.consuming = connect(consumeVia);
        this.publisher = publishing.createChannel();
        // a broker that closes a client's connection or channel leaves its publishes unknown: say so in the summary
        publishing.addShutdownListener(cause -> noteShutdown("publishing connection", cause));
        consuming.addShutdownListener(cause -> noteShutdown("consuming connection", cause));
        publisher.addShutdownListener(cause -> noteShutdown("publisher channel", cause));
        publisher.confirmSelect();
        publisher.addConfirmListener(new ConfirmListener() {
            @Override
            public void handleAck(long tag, boolean multiple) {
                long now = System.nanoTime();
                long gap = now - lastConfirmNanos.getAndSet(now);
                longestConfirmGapNanos.accumulateAndGet(gap, Math::max);
                if (gap > TimeUnit.MILLISECONDS.toNanos(100)) {
                    longGaps.add("gap " + TimeUnit.NANOSECONDS.toMillis(gap) + " ms ending "
                            + TimeUnit.NANOSECONDS.toMillis(now - markNanos) + " ms after the mark");
                }
                settled(tag, multiple).forEach(confirmed::add);
            }

            @Override
            public void handleNack(long tag, boolean multiple) {
                nacked.addAndGet(settled(tag, multiple).size());
            }
        });
    }

    static Connection connect(BrokerChild broker) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.amqpPort);
        return factory.newConnection();
    }

    private java.util.Collection<String> settled(long tag, boolean multiple) {
        var settled = multiple ? outstanding.headMap(tag, true) : outstanding.subMap(tag, true, tag, true);
        var ids = new java.util.ArrayList<>(settled.values());
        settled.clear();
        return ids;
    }

    /** Subscribes the consumer (prefetch 100, manual acks); it subscribes again whenever the broker cancels it. */
    QueueTraffic consume() throws IOException {
        subscribe();
        return this;
    }

    private void subscribe() throws IOException {
        Channel channel = consuming.createChannel();
        channel.basicQos(100);
        channel.basicConsume(queue, false, new DefaultConsumer(channel) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                    throws IOException {
                String id = properties.getMessageId();
                if (id == null || !id.startsWith(prefix)) {
                    unexpected.incrementAndGet();
                } else if (deliveries.merge(id, 1, Integer::sum) > 1 && !envelope.isRedeliver()) {
                    duplicatesNotRedelivered.incrementAndGet();
                }
                channel.basicAck(envelope.getDeliveryTag(), false);
            }

            @Override
            public void handleCancel(String consumerTag) {
                resubscriber.execute(QueueTraffic.this::resubscribe);
            }
        });
        subscriptions.incrementAndGet();
    }

    /**
     * Subscribes on a fresh channel until the queue takes it (a refused basic.consume closes its channel). Not a
     * {@link Poll}: it runs on the resubscriber thread, which {@link #close} interrupts, and it ends quietly then.
     */
    private void resubscribe() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!closing && System.nanoTime() < deadline) {
            try {
                subscribe();
                return;
            } catch (IOException | RuntimeException e) {
                pause(100);
            }
        }
    }

    /** Publishes {@code count} persistent messages, calling {@code before} with each index first (to inject a fault). */
    void publish(int count, IndexAction before) throws Exception {
        if (outstanding.isEmpty()) {
            lastConfirmNanos.set(System.nanoTime()); // a gap counts only while publishes wait for confirms
        }
        for (int i = 0; i < count; i++) {
            before.run(i);
            String id = prefix + published++;
            outstanding.put(publisher.getNextPublishSeqNo(), id);
            publisher.basicPublish(
                    "",
                    queue,
                    new AMQP.BasicProperties.Builder()
                            .messageId(id)
                            .deliveryMode(2)
                            .build(),
                    id.getBytes(StandardCharsets.UTF_8));
            if (i % 20 == 0) {
                pause(10);
            }
        }
    }

    void publish(int count) throws Exception {
        publish(count, i -> {});
    }

    /** Waits for every outstanding publish to be confirmed or nacked; false on timeout. */
    boolean awaitSettled(Duration within) {
        return Poll.within(within, Duration.ofMillis(20), outstanding::isEmpty);
    }

    /** Waits until every confirmed publish was consumed; returns {@link #lost()} then. */
    Set<String> awaitConsumed(Duration within) {
        Poll.within(within, Duration.ofMillis(50), () -> deliveries.keySet().containsAll(confirmed));
        return lost();
    }

    /** Confirmed but never delivered. */
    Set<String> lost() {
        Set<String> lost = new TreeSet<>(confirmed);
        lost.removeAll(deliveries.keySet());
        return lost;
    }

    int published() {
        return published;
    }

    int confirmed() {
        return confirmed.size();
    }

    int nacked() {
        return nacked.get();
    }

    /** Publishes neither confirmed nor nacked yet: their outcome is unknown to the client. */
    int unknown() {
        return outstanding.size();
    }

    int unexpected() {
        return unexpected.get();
    }

    int duplicatesNotRedelivered() {
        return duplicatesNotRedelivered.get();
    }

    int consumed() {
        return deliveries.size();
    }

    int subscriptions() {
        return subscriptions.get();
    }

    /** The longest time between two confirms (or from the first publish to the first confirm), in milliseconds. */
    long longestConfirmGapMs() {
        return TimeUnit.NANOSECONDS.toMillis(longestConfirmGapNanos.get());
    }

    /** Marks now (a fault injected): confirm gaps over 100 ms are reported relative to it. */
    void mark() {
        markNanos = System.nanoTime();
    }

    String summary() {
        return "published=" + published + " confirmed=" + confirmed.size() + " nacked=" + nacked.get() + " unknown="
                + outstanding.size() + " consumed=" + deliveries.size() + " lost=" + lost().size() + " unexpected="
                + unexpected.get() + " duplicates_not_redelivered=" + duplicatesNotRedelivered.get()
                + " subscriptions=" + subscriptions.get() + " longest_confirm_gap_ms=" + longestConfirmGapMs()
                + (longGaps.isEmpty() ? "" : " " + longGaps)
                + (shutdowns.isEmpty() ? "" : " " + shutdowns);
    }

    private void noteShutdown(String what, com.rabbitmq.client.ShutdownSignalException cause) {
        if (!closing) {
            shutdowns.add(what + " closed " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - markNanos)
                    + " ms after the mark: " + cause.getMessage());
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @FunctionalInterface
    interface IndexAction {
        void run(int index) throws Exception;
    }

    @Override
    public void close() throws Exception {
        closing = true;
        resubscriber.shutdownNow();
        for (Connection connection : new Connection[] {publishing, consuming}) {
            if (connection.isOpen()) {
                connection.abort();
            }
        }
    }
}
