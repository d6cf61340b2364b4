package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.ContentCommand;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ReplyCode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The consumer bookkeeping of one {@link AmqpChannel}: its consumers by tag, the delivery tags (counted from 1), the
 * prefetch limits of {@code basic.qos}, the deliveries sent and not yet settled, and those held back by the global
 * prefetch until acks make room. The channel decides what a method means; this class keeps the counts and sends the
 * deliveries.
 *
 * <p>Implementation notes: confined to the connection's event loop, as its channel. A consumer's deliveries that come
 * before its {@code consume-ok} wait in {@link Consumer#early}; the channel sends the {@code consume-ok} and then calls
 * {@link #deliverEarly}.
 */
final class ChannelConsumers {
    private final AmqpConnection connection;
    private final BrokerBackend backend;
    private final int channel;
    private final long channelId;

    private final Map<String, Consumer> consumers = new LinkedHashMap<>();
    private final UnackedDeliveries unacked = new UnackedDeliveries();
    private final ArrayDeque<Held> held = new ArrayDeque<>();

    private long nextDeliveryTag = 1;
    private int consumerPrefetch;
    private int globalPrefetch;

    /**
     * @param channel the channel number deliveries go out on
     * @param channelId the channel's process-unique id, as the broker knows its consumers
     */
    ChannelConsumers(AmqpConnection connection, BrokerBackend backend, int channel, long channelId) {
        this.connection = connection;
        this.backend = backend;
        this.channel = channel;
        this.channelId = channelId;
    }

    /** A consumer of the channel. */
    static final class Consumer {
        final String tag;
        final boolean noAck;
        /** Deliveries that came before {@code consume-ok} was sent. */
        final ArrayDeque<Delivery> early = new ArrayDeque<>();

        QueueHandle handle;
        boolean ready;
        boolean active = true;
        boolean cancelledByBroker;

        Consumer(String tag, boolean noAck) {
            this.tag = tag;
            this.noAck = noAck;
        }
    }

    private record Held(Consumer consumer, Delivery delivery) {}

    // ---------------------------------------------------------------- prefetch

    /** {@code basic.qos}: the prefetch of later consumers, or with {@code global} the channel's. */
    void qos(int prefetchCount, boolean global) {
        if (global) {
            globalPrefetch = prefetchCount;
            releaseHeld();
        } else {
            consumerPrefetch = prefetchCount;
        }
    }

    /** The prefetch a consumer started now gets; the broker enforces it. */
    int consumerPrefetch() {
        return consumerPrefetch;
    }

    // ---------------------------------------------------------------- consumers

    /**
     * Adds a consumer under {@code requestedTag}, or under a new tag when it is empty.
     *
     * @throws ServerFault {@code NOT_ALLOWED} if the tag is in use
     */
    Consumer add(String requestedTag, boolean noAck) {
        String tag = requestedTag.isEmpty() ? newConsumerTag() : requestedTag;
        if (consumers.containsKey(tag)) {
            throw new ServerFault(ReplyCode.NOT_ALLOWED, "attempt to reuse consumer tag '" + tag + "'");
        }
        Consumer consumer = new Consumer(tag, noAck);
        consumers.put(tag, consumer);
        return consumer;
    }

    /**
     * The client cancels a consumer: it goes, the broker is told, and what it had waiting here is requeued. An unknown
     * tag is ignored, as the spec requires.
     */
    void cancel(String tag) {
        Consumer consumer = consumers.remove(tag);
        if (consumer != null) {
            consumer.active = false;
            if (consumer.handle != null) {
                backend.cancel(consumer.handle, channelId, consumer.tag);
            }
            requeueWaiting(consumer);
        }
    }

    /** The broker cancelled a ready consumer: it goes, and what it had waiting here is requeued. */
    void cancelledByBroker(Consumer consumer) {
        consumer.active = false;
        consumers.remove(consumer.tag);
        requeueWaiting(consumer);
    }

    /** After {@code consume-ok}: the consumer is ready, and the deliveries that came before it go out. */
    void deliverEarly(Consumer consumer) {
        consumer.ready = true;
        while (!consumer.early.isEmpty() && consumer.active) {
            deliverOrHold(consumer, consumer.early.poll());
        }
    }

    private String newConsumerTag() {
        byte[] random = new byte[16];
        String tag;
        do {
            ThreadLocalRandom.current().nextBytes(random);
            tag = "amq.ctag-" + Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        } while (consumers.containsKey(tag));
        return tag;
    }

    // ---------------------------------------------------------------- deliveries

    /** Sends a delivery to a ready consumer, or holds it while the global prefetch is used up. */
    void deliverOrHold(Consumer consumer, Delivery delivery) {
        if (!consumer.noAck && globalPrefetch > 0 && (unacked.size() >= globalPrefetch || !held.isEmpty())) {
            held.add(new Held(consumer, delivery));
            return;
        }
        deliver(consumer, delivery);
    }

    private void deliver(Consumer consumer, Delivery delivery) {
        long tag = nextDeliveryTag++;
        if (!consumer.noAck) {
            unacked.add(tag, delivery.queue(), delivery.offset());
        }
        connection.send(new ContentCommand(
                channel,
                new BasicMethod.Deliver(
                        consumer.tag, tag, delivery.redelivered(), delivery.exchange(), delivery.routingKey()),
                delivery.header(),
                delivery.content()));
    }

    /** The delivery tag of a {@code basic.get-ok}; the delivery is unacked from here unless taken with no ack. */
    long tagGet(Delivery delivery, boolean noAck) {
        long tag = nextDeliveryTag++;
        if (!noAck) {
            unacked.add(tag, delivery.queue(), delivery.offset());
        }
        return tag;
    }

    /** Sends held deliveries while the global prefetch allows. */
    void releaseHeld() {
        while (!held.isEmpty() && (globalPrefetch == 0 || unacked.size() < globalPrefetch)) {
            Held next = held.poll();
            if (next.consumer().active) {
                deliver(next.consumer(), next.delivery());
            } else {
                giveBack(next.delivery(), true);
            }
        }
    }

    // ---------------------------------------------------------------- settling

    /** Takes the unacked deliveries an ack, nack or reject of {@code tag} settles (see {@link UnackedDeliveries}). */
    List<UnackedDeliveries.Entry> take(long tag, boolean multiple) {
        return unacked.take(tag, multiple);
    }

    /** Puts deliveries taken by a settlement back, unsettled (a rolled back transaction). */
    void restore(List<UnackedDeliveries.Entry> entries) {
        unacked.restore(entries);
    }

    /** Settles deliveries with the broker, then sends what the room made allows. */
    void settle(List<UnackedDeliveries.Entry> entries, Settlement settlement) {
        UnackedDeliveries.settle(backend, entries, settlement);
        releaseHeld();
    }

    /** {@code basic.recover(requeue=true)}: every unacked delivery goes back to its queue. */
    void recover() {
        settle(unacked.takeAll(), Settlement.REQUEUE);
    }

    /** Requeues what a consumer going away still has waiting on this channel: its held and early deliveries. */
    private void requeueWaiting(Consumer consumer) {
        List<UnackedDeliveries.Entry> entries = new ArrayList<>();
        for (Iterator<Held> it = held.iterator(); it.hasNext(); ) {
            Held next = it.next();
            if (next.consumer() == consumer) {
                it.remove();
                entries.add(entry(next.delivery()));
                next.delivery().release();
            }
        }
        for (Delivery delivery : consumer.early) {
            if (!consumer.noAck) {
                entries.add(entry(delivery));
            }
            delivery.release();
        }
        consumer.early.clear();
        UnackedDeliveries.settle(backend, entries, Settlement.REQUEUE);
    }

    /** Hands a delivery that will not reach the client back to its queue (unless it was taken without ack). */
    void giveBack(Delivery delivery, boolean requeue) {
        try {
            if (requeue) {
                backend.settle(delivery.queue(), new long[] {delivery.offset()}, Settlement.REQUEUE);
            }
        } finally {
            delivery.release();
        }
    }

    // ---------------------------------------------------------------- teardown

    /**
     * Cancels every consumer with the broker, so nothing more is delivered here; they stay listed until {@link
     * #requeueAll}.
     */
    void cancelAll() {
        for (Consumer consumer : consumers.values()) {
            consumer.active = false;
            if (consumer.handle != null) {
                backend.cancel(consumer.handle, channelId, consumer.tag);
            }
        }
    }

    /** Requeues every unacked, held and early delivery, per queue in offset order, and forgets the consumers. */
    void requeueAll() {
        List<UnackedDeliveries.Entry> requeue = new ArrayList<>(unacked.takeAll());
        for (Held next : held) {
            requeue.add(entry(next.delivery()));
        }
        for (Consumer consumer : consumers.values()) {
            if (!consumer.noAck) {
                for (Delivery delivery : consumer.early) {
                    requeue.add(entry(delivery));
                }
            }
        }
        try {
            UnackedDeliveries.settle(backend, requeue, Settlement.REQUEUE);
        } finally {
            held.forEach(next -> next.delivery().release());
            held.clear();
            for (Consumer consumer : consumers.values()) {
                consumer.early.forEach(Delivery::release);
                consumer.early.clear();
            }
            consumers.clear();
        }
    }

    private static UnackedDeliveries.Entry entry(Delivery delivery) {
        return new UnackedDeliveries.Entry(0, delivery.queue(), delivery.offset());
    }
}
