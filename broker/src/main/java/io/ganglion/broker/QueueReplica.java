package io.ganglion.broker;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.metadata.QueueDef;
import io.ganglion.queues.ConsumeOutcome;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue on one broker: its log in storage and its {@link QueueMachine}, executing what the machine decides.
 *
 * <p>Implementation notes. Everything here runs on the queue's shard; public methods say so and must be called
 * there. A publish is appended to the log, and enqueued (made visible to consumers) and confirmed only once the log
 * reports it durable, in offset order. Settlements are buffered during a task and written as one settle record at its
 * end. The heap holds offsets; a delivery reads its message back from the log, except for messages published
 * moments ago, whose payloads stay in a small cache until their first delivery. The cache of all queues on a shard is
 * bounded ({@link Shard#RECENT_BUDGET_BYTES}), so a backlog costs offsets only.
 */
final class QueueReplica implements QueueEffects, QueueHandle {
    private static final Logger LOG = LoggerFactory.getLogger(QueueReplica.class);
    private static final long EPOCH = 1;
    /** Settlements wait at most this long, or until this many gather, before one settle record is written. */
    private static final long SETTLE_DELAY_MS = 10;

    private static final int SETTLE_BATCH = 4096;

    private record Pending(long offset, CompletableFuture<Void> done) {}

    private record ConsumerEntry(String tag, DeliverySink sink) {}

    final String vhost;
    final QueueDef def;
    final Shard shard;
    private final Storage storage;
    private ReplicaLog log;
    private QueueMachine machine;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final Map<ConsumerKey, ConsumerEntry> consumers = new HashMap<>();
    private final LongArrayList settles = new LongArrayList();
    private final Long2ObjectHashMap<ByteBuffer> recent = new Long2ObjectHashMap<>();
    private boolean hadConsumer;
    private boolean settleFlushScheduled;
    /** Set by the journal thread when it asked the shard to drain durable appends; cleared by the shard. */
    private final java.util.concurrent.atomic.AtomicBoolean drainScheduled =
            new java.util.concurrent.atomic.AtomicBoolean();

    private boolean closed;
    private Runnable autoDelete = () -> {};

    QueueReplica(String vhost, QueueDef def, Shard shard, Storage storage) {
        this.vhost = vhost;
        this.def = def;
        this.shard = shard;
        this.storage = storage;
    }

    @Override
    public String name() {
        return def.name();
    }

    void onAutoDelete(Runnable action) {
        this.autoDelete = action;
    }

    /** Opens or creates the log and rebuilds the queue from it. On the shard. */
    void open() throws IOException {
        log = storage.replica(def.objectId());
        LongArrayList messages = new LongArrayList();
        LongHashSet settled = new LongHashSet();
        long next = log.startOffset();
        while (next < log.nextOffset()) {
            List<LogRecord> records = log.read(next, 1 << 20);
            for (LogRecord record : records) {
                if (record.type() == RecordType.DATA) {
                    switch (MessageRecord.kind(record.payload())) {
                        case MessageRecord.MESSAGE -> messages.addLong(record.offset());
                        case MessageRecord.SETTLE -> {
                            for (long offset : MessageRecord.decodeSettle(record.payload())) {
                                settled.add(offset);
                            }
                        }
                        default -> LOG.warn("event=unknown_record queue={} offset={}", def.name(), record.offset());
                    }
                }
                next = record.offset() + 1;
            }
        }
        LongArrayList unsettled = new LongArrayList(messages.size(), Long.MIN_VALUE);
        for (int i = 0; i < messages.size(); i++) {
            long offset = messages.getLong(i);
            if (!settled.contains(offset)) {
                unsettled.addLong(offset);
            }
        }
        machine = QueueMachine.recovered(unsettled.toLongArray());
        if (machine.readyCount() > 0) {
            LOG.info("event=queue_recovered vhost={} queue={} messages={}", vhost, def.name(), machine.readyCount());
        }
    }

    int readyCount() {
        return machine.readyCount();
    }

    int consumerCount() {
        return machine.consumerCount();
    }

    /** Appends a message; {@code done} completes once it is durable and enqueued. On the shard. */
    void publish(ByteBuffer payload, CompletableFuture<Void> done) {
        if (closed) {
            done.completeExceptionally(
                    new BrokerFailure(ReplyCode.NOT_FOUND, "queue '" + def.name() + "' was deleted"));
            return;
        }
        switch (log.append(EPOCH, RecordType.DATA, payload)) {
            case AppendOutcome.Appended appended -> {
                pending.add(new Pending(appended.offset(), done));
                if (shard.recentBytes + payload.remaining() <= Shard.RECENT_BUDGET_BYTES) {
                    recent.put(appended.offset(), payload);
                    shard.recentBytes += payload.remaining();
                }
                appended.durable().whenComplete((offset, failure) -> {
                    if (failure != null) {
                        shard.execute(() -> onDurable(offset, failure));
                    } else if (drainScheduled.compareAndSet(false, true)) {
                        // one shard task drains every append made durable by the time it runs
                        shard.execute(() -> {
                            drainScheduled.set(false);
                            onDurable(log.durableOffset(), null);
                        });
                    }
                });
            }
            case AppendOutcome.Rejected rejected ->
                done.completeExceptionally(new BrokerFailure(
                        ReplyCode.INTERNAL_ERROR,
                        "queue '" + def.name() + "' refused the append: " + rejected.reason()));
            case AppendOutcome.Failed failed ->
                done.completeExceptionally(new BrokerFailure(
                        ReplyCode.INTERNAL_ERROR,
                        "queue '" + def.name() + "' could not write: " + failed.cause(),
                        failed.cause()));
        }
    }

    private void onDurable(Long durableOffset, Throwable failure) {
        if (failure != null) {
            LOG.error("event=append_failed queue={} pending={}", def.name(), pending.size(), failure);
            while (!pending.isEmpty()) {
                pending.poll()
                        .done()
                        .completeExceptionally(new BrokerFailure(
                                ReplyCode.INTERNAL_ERROR, "storage failed: " + failure.getMessage(), failure));
            }
            return;
        }
        while (!pending.isEmpty() && pending.peek().offset() <= durableOffset) {
            Pending next = pending.poll();
            if (!closed) {
                machine.enqueue(next.offset(), this);
            }
            next.done().complete(null);
        }
        flushSettles();
    }

    /** Adds a consumer. On the shard. */
    void consume(ConsumerKey key, String tag, boolean noAck, boolean exclusive, int prefetch, DeliverySink sink) {
        if (closed) {
            throw new BrokerFailure(ReplyCode.NOT_FOUND, "queue '" + def.name() + "' was deleted");
        }
        consumers.put(key, new ConsumerEntry(tag, sink));
        ConsumeOutcome outcome = machine.consume(key, prefetch, noAck, exclusive, this);
        switch (outcome) {
            case ADDED -> hadConsumer = true;
            case DUPLICATE_TAG ->
                throw new BrokerFailure(ReplyCode.NOT_ALLOWED, "attempt to reuse consumer tag '" + tag + "'");
            case EXCLUSIVE_CONFLICT -> {
                consumers.remove(key);
                throw new BrokerFailure(
                        ReplyCode.ACCESS_REFUSED,
                        "queue '" + def.name() + "' in vhost '" + vhost + "' in exclusive use");
            }
        }
        flushSettles();
    }

    /** Removes a consumer; an auto-delete queue that had one and has none left goes. On the shard. */
    void cancel(ConsumerKey key) {
        if (machine == null || !machine.cancel(key)) {
            return;
        }
        consumers.remove(key);
        if (def.autoDelete() && hadConsumer && machine.consumerCount() == 0 && !closed) {
            autoDelete.run();
        }
    }

    /** {@code basic.get}. On the shard. */
    Optional<Delivery> get(boolean noAck) {
        if (closed) {
            throw new BrokerFailure(ReplyCode.NOT_FOUND, "queue '" + def.name() + "' was deleted");
        }
        Optional<QueueMachine.Taken> taken = machine.get(noAck, this);
        Optional<Delivery> delivery = taken.map(t -> read(t.offset(), t.redelivered(), machine.readyCount()));
        flushSettles();
        return delivery;
    }

    /** Acks, discards or requeues. On the shard. */
    void settle(long[] offsets, io.ganglion.amqp.server.Settlement settlement) {
        if (closed) {
            return;
        }
        switch (settlement) {
            case ACK -> {
                for (long offset : offsets) {
                    machine.ack(offset, this);
                }
            }
            case DISCARD -> {
                for (long offset : offsets) {
                    machine.reject(offset, false, this);
                }
            }
            case REQUEUE -> machine.requeue(offsets, this);
        }
        flushSettles();
    }

    /** Settles every ready message. On the shard. */
    long purge() {
        long purged = machine.purge(this);
        flushSettles();
        return purged;
    }

    /**
     * The queue was deleted: consumers are told, pending publishes fail, and the log is emptied. On the shard.
     *
     * @return the ready messages it held
     */
    long close() {
        if (closed) {
            return 0;
        }
        closed = true;
        long ready = machine == null ? 0 : machine.readyCount();
        for (Map.Entry<ConsumerKey, ConsumerEntry> entry : consumers.entrySet()) {
            entry.getValue().sink().cancelled(entry.getValue().tag());
        }
        consumers.clear();
        recent.values().forEach(payload -> shard.recentBytes -= payload.remaining());
        recent.clear();
        if (log != null) {
            log.discardBefore(log.nextOffset());
        }
        return ready;
    }

    @Override
    public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
        ConsumerEntry entry = consumers.get(consumer);
        if (entry == null) {
            return;
        }
        entry.sink().deliver(entry.tag(), read(offset, redelivered, 0));
    }

    @Override
    public void settle(long offset) {
        settles.addLong(offset);
        ByteBuffer cached = recent.remove(offset);
        if (cached != null) {
            shard.recentBytes -= cached.remaining();
        }
    }

    /**
     * Writes buffered settlements now if many gathered, else within {@link #SETTLE_DELAY_MS}. An ack is not confirmed to
     * anyone, so it need not be durable at once: a crash before the write redelivers the message, as AMQP allows.
     */
    private void flushSettles() {
        if (settles.size() >= SETTLE_BATCH) {
            writeSettles();
        } else if (!settles.isEmpty() && !settleFlushScheduled) {
            settleFlushScheduled = true;
            shard.schedule(
                    () -> {
                        settleFlushScheduled = false;
                        writeSettles();
                    },
                    SETTLE_DELAY_MS);
        }
    }

    private void writeSettles() {
        if (settles.isEmpty() || closed) {
            settles.clear();
            return;
        }
        AppendOutcome outcome =
                log.append(EPOCH, RecordType.DATA, MessageRecord.encodeSettle(settles.toLongArray(), settles.size()));
        if (!(outcome instanceof AppendOutcome.Appended)) {
            LOG.warn("event=settle_not_logged queue={} outcome={}", def.name(), outcome);
        }
        settles.clear();
    }

    private Delivery read(long offset, boolean redelivered, long messageCount) {
        try {
            ByteBuffer payload = recent.remove(offset);
            if (payload != null) {
                shard.recentBytes -= payload.remaining();
            } else {
                payload = log.read(offset, 1).get(0).payload();
            }
            MessageRecord.Message message = MessageRecord.decodeMessage(payload);
            return new Delivery(
                    this,
                    offset,
                    redelivered,
                    message.exchange(),
                    message.routingKey(),
                    message.properties(),
                    Unpooled.wrappedBuffer(message.body()),
                    messageCount);
        } catch (IOException e) {
            throw new BrokerFailure(
                    ReplyCode.INTERNAL_ERROR, "cannot read message " + offset + ": " + e.getMessage(), e);
        }
    }
}
