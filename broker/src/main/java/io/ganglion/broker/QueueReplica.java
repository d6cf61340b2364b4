package io.ganglion.broker;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.queues.ConsumeOutcome;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.queues.StreamEffects;
import io.ganglion.queues.StreamMachine;
import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.DurabilityListener;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageException;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue on one broker: its log in storage and its {@link QueueMachine}, executing what the machine decides.
 *
 * <p>Implementation notes. Everything here runs on the queue's shard; public methods say so and must be called
 * there, except the {@link DurabilityListener} callbacks, which run on the store's completion thread and only publish
 * a volatile offset and schedule one shard task. A publish is appended to the log, and enqueued (made visible to
 * consumers) and confirmed only once the log reports it durable, in offset order: the log's listener is called once
 * per journal batch, so one shard task confirms every publish a force made durable, with no future per message. A
 * publish the log refuses with {@code BACKLOG} (its segment writer is far behind) is flow control, not an error: it
 * waits in {@code blocked}, with every publish after it, and is retried every {@value #BACKLOG_RETRY_MS} ms; its
 * publisher sees a late confirm. Settlements are buffered during a task and written as one settle record at its
 * end. The heap holds offsets; a delivery reads its message back from the log, except for messages published
 * moments ago, whose payloads stay in a small cache until their first delivery. The cache of all queues on a shard is
 * bounded ({@link Shard#RECENT_BUDGET_BYTES}), so a backlog costs offsets only.
 *
 * <p>A stream ({@code x-queue-type: stream}) on a single broker is the same log with a {@link StreamMachine} in place
 * of the queue: readers at offsets, every durable message readable, nothing settled, retention by {@code
 * x-max-length-bytes} and {@code x-max-age} discarding whole segments every half second (see {@link StreamSupport}).
 */
final class QueueReplica implements QueueEffects, LocalQueue {
    private static final Logger LOG = LoggerFactory.getLogger(QueueReplica.class);
    private static final long EPOCH = 1;
    /** Settlements wait at most this long, or until this many gather, before one settle record is written. */
    private static final long SETTLE_DELAY_MS = 10;

    private static final int SETTLE_BATCH = 4096;
    /** How long a publish refused for {@code BACKLOG} waits before it is retried. */
    private static final long BACKLOG_RETRY_MS = 5;

    private record Pending(long offset, CompletableFuture<Void> done) {}

    private record Blocked(ByteBuffer payload, CompletableFuture<Void> done) {}

    private record ConsumerEntry(String tag, DeliverySink sink) {}

    final String vhost;
    final QueueDef def;
    final Shard shard;
    private final Storage storage;
    private ReplicaLog log;
    private QueueMachine machine;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    /** Publishes waiting for the log to take appends again ({@code BACKLOG}), in arrival order. */
    private final ArrayDeque<Blocked> blocked = new ArrayDeque<>();

    private final Map<ConsumerKey, ConsumerEntry> consumers = new HashMap<>();
    /** Whether this is a stream: {@link #streamMachine} in place of {@link #machine}. */
    private final boolean stream;
    /** The stream's readers once the log is open; null for a queue. */
    private StreamMachine streamMachine;
    /** A stream's retention limits. */
    private final StreamArguments.Retention streamRetention;

    private final StreamReads streamReads = new StreamReads();
    /** A stream's retention check, every {@link #RETENTION_EVERY_MS} ms while it has a limit. */
    private Shard.Ticker retention;

    private static final long RETENTION_EVERY_MS = 500;
    private final LongArrayList settles = new LongArrayList();
    private final Long2ObjectHashMap<ByteBuffer> recent = new Long2ObjectHashMap<>();
    private boolean hadConsumer;
    private boolean settleFlushScheduled;
    private boolean retryScheduled;
    /** The log's durable offset as its listener last reported it; written by the completion thread. */
    private volatile long reportedDurable = -1;
    /** Set by the listener when it asked the shard to drain durable appends; cleared by the shard. */
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** Set by the listener when it asked the shard to fail pending appends; cleared by the shard. */
    private final AtomicBoolean failureScheduled = new AtomicBoolean();

    private boolean closed;
    private Runnable autoDelete = () -> {};

    QueueReplica(String vhost, QueueDef def, Shard shard, Storage storage) {
        this.vhost = vhost;
        this.def = def;
        this.shard = shard;
        this.storage = storage;
        this.stream = def.type() == QueueType.STREAM;
        this.streamRetention = StreamArguments.Retention.of(def.arguments());
    }

    @Override
    public String name() {
        return def.name();
    }

    @Override
    public String vhost() {
        return vhost;
    }

    @Override
    public Shard shard() {
        return shard;
    }

    void onAutoDelete(Runnable action) {
        this.autoDelete = action;
    }

    /** Opens or creates the log and rebuilds the queue from it. On the shard. */
    void open() throws IOException {
        log = storage.replica(def.objectId());
        log.durabilityListener(new Listener());
        if (stream) {
            streamMachine = new StreamMachine(log.durableOffset());
            if (streamRetention.limited()) {
                retention = shard.every(RETENTION_EVERY_MS, this::retain);
            }
            return;
        }
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

    @Override
    public int readyCount() {
        if (stream) {
            // a stream's message count: the offsets it holds from its start to what is durable (RabbitMQ's likewise)
            return streamMachine == null
                    ? 0
                    : (int) Math.min(Integer.MAX_VALUE, Math.max(0, streamMachine.end() + 1 - log.startOffset()));
        }
        return machine.readyCount();
    }

    @Override
    public int consumerCount() {
        if (stream) {
            return streamMachine == null ? 0 : streamMachine.consumerCount();
        }
        return machine.consumerCount();
    }

    /** Appends a message; {@code done} completes once it is durable and enqueued. On the shard. */
    @Override
    public void publish(ByteBuffer payload, CompletableFuture<Void> done) {
        if (closed) {
            done.completeExceptionally(deleted());
            return;
        }
        if (!blocked.isEmpty() || !tryAppend(payload, done)) {
            blocked.add(new Blocked(payload, done)); // behind those already waiting: publishes keep their order
        }
    }

    /**
     * Appends one publish; false if the log refused it for {@code BACKLOG} (nothing appended: the caller keeps it and
     * retries). Any other refusal fails {@code done}.
     */
    private boolean tryAppend(ByteBuffer payload, CompletableFuture<Void> done) {
        switch (log.append(EPOCH, RecordType.DATA, payload)) {
            case AppendOutcome.Appended appended -> {
                // confirmed by the log's durability listener, not by a future per message
                pending.add(new Pending(appended.offset(), done));
                // a stream's readers read from the log: nothing would give a cached payload's budget back
                if (!stream && shard.reserveRecent(payload.remaining())) {
                    recent.put(appended.offset(), payload);
                }
                return true;
            }
            case AppendOutcome.Rejected rejected
            when rejected.reason() == AppendOutcome.Reason.BACKLOG -> {
                if (!retryScheduled) {
                    retryScheduled = true;
                    if (blocked.isEmpty()) {
                        LOG.warn("event=publish_backlog queue={} object={}", def.name(), def.objectId());
                    }
                    shard.schedule(this::retryBlocked, BACKLOG_RETRY_MS);
                }
                return false;
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
        return true;
    }

    /** Appends the publishes held back by {@code BACKLOG}, in order, while the log takes them. On the shard. */
    private void retryBlocked() {
        retryScheduled = false;
        if (closed) {
            return;
        }
        while (!blocked.isEmpty()) {
            Blocked next = blocked.peek();
            if (!tryAppend(next.payload(), next.done())) {
                return; // rescheduled
            }
            blocked.poll();
        }
        LOG.info("event=publish_backlog_cleared queue={} object={}", def.name(), def.objectId());
        if (!settles.isEmpty()) {
            flushSettles();
        }
    }

    /**
     * Hears the log's durability once per journal batch, on the store's completion thread: publishes the offset and
     * wakes the shard once, however many batches come before the shard runs.
     */
    private final class Listener implements DurabilityListener {
        @Override
        public void durable(long offset) {
            reportedDurable = offset;
            if (drainScheduled.compareAndSet(false, true)) {
                shard.execute(() -> {
                    drainScheduled.set(false);
                    onDurable(reportedDurable);
                });
            }
        }

        @Override
        public void failed(StorageException cause) {
            if (failureScheduled.compareAndSet(false, true)) {
                shard.execute(() -> {
                    failureScheduled.set(false);
                    onFailed(cause);
                });
            }
        }
    }

    /** Enqueues and confirms every pending publish through {@code durableOffset}. On the shard. */
    private void onDurable(long durableOffset) {
        while (!pending.isEmpty() && pending.peek().offset() <= durableOffset) {
            Pending next = pending.poll();
            if (!closed && !stream) {
                machine.enqueue(next.offset(), this);
            }
            next.done().complete(null);
        }
        if (stream) {
            if (!closed && streamMachine != null) {
                streamMachine.advance(durableOffset, streamReads);
            }
            return;
        }
        flushSettles();
    }

    /**
     * The journal failed records of this log: every publish not yet durable fails (the log refuses appends from here
     * on, so none is added behind them). On the shard.
     */
    private void onFailed(StorageException failure) {
        long durable = log.durableOffset();
        onDurable(durable); // those made durable before the failure are confirmed
        if (pending.isEmpty()) {
            return;
        }
        LOG.error("event=append_failed queue={} pending={}", def.name(), pending.size(), failure);
        while (!pending.isEmpty()) {
            Pending failed = pending.poll();
            ByteBuffer cached = recent.remove(failed.offset());
            if (cached != null) {
                shard.releaseRecent(cached.remaining());
            }
            failed.done()
                    .completeExceptionally(new BrokerFailure(
                            ReplyCode.INTERNAL_ERROR, "storage failed: " + failure.getMessage(), failure));
        }
    }

    /** Adds a consumer. On the shard. */
    @Override
    public void consume(ConsumerKey key, QueueConsumer consumer) {
        if (closed) {
            throw new BrokerFailure(ReplyCode.NOT_FOUND, "queue '" + def.name() + "' was deleted");
        }
        LocalQueue.checkNewConsumer(stream, vhost, def.name(), consumer, consumers.containsKey(key));
        consumers.put(key, new ConsumerEntry(consumer.tag(), consumer.sink()));
        ConsumeOutcome outcome = stream
                ? streamMachine.consume(
                        key,
                        consumer.prefetch(),
                        consumer.exclusive(),
                        StreamSupport.from(consumer.start(), streamLog, def.name()),
                        streamReads)
                : machine.consume(key, consumer.prefetch(), consumer.noAck(), consumer.exclusive(), this);
        LocalQueue.requireAdded(outcome, vhost, def.name(), consumer.tag(), () -> consumers.remove(key));
        hadConsumer = true;
        flushSettles();
    }

    /** Removes a consumer; an auto-delete queue that had one and has none left goes. On the shard. */
    @Override
    public void cancel(ConsumerKey key) {
        if (stream) {
            consumers.remove(key);
            if (streamMachine != null) {
                streamMachine.cancel(key);
            }
            return;
        }
        if (machine == null || !machine.cancel(key)) {
            return;
        }
        consumers.remove(key);
        if (def.autoDelete() && hadConsumer && machine.consumerCount() == 0 && !closed) {
            autoDelete.run();
        }
    }

    /** {@code basic.get}. On the shard. */
    @Override
    public Optional<Delivery> get(boolean noAck) {
        if (stream) {
            throw StreamSupport.unsupported("basic.get", def.name(), vhost);
        }
        if (closed) {
            throw new BrokerFailure(ReplyCode.NOT_FOUND, "queue '" + def.name() + "' was deleted");
        }
        Optional<QueueMachine.Taken> taken = machine.get(noAck, this);
        Optional<Delivery> delivery = taken.map(t -> read(t.offset(), t.redelivered(), machine.readyCount()));
        flushSettles();
        return delivery;
    }

    /** Acks, discards or requeues. On the shard. */
    @Override
    public void settle(long[] offsets, io.ganglion.amqp.server.Settlement settlement) {
        if (closed) {
            return;
        }
        if (stream) {
            // a stream removes nothing: any settlement only gives its consumer the credit back
            for (long offset : offsets) {
                streamMachine.ack(offset, streamReads);
            }
            return;
        }
        LocalQueue.apply(machine, offsets, settlement, this);
        flushSettles();
    }

    /** Settles every ready message. On the shard. */
    @Override
    public long purge() {
        if (stream) {
            throw StreamSupport.unsupported("queue.purge", def.name(), vhost);
        }
        long purged = machine.purge(this);
        flushSettles();
        return purged;
    }

    /**
     * The queue was deleted: consumers are told, publishes held back by {@code BACKLOG} fail, and the log is deleted
     * from storage ({@link Storage#deleteReplica}: durable, frees its files). Publishes appended before are durable
     * once the deletion is, so they are confirmed: they reached the queue before it went. On the shard; blocks it for
     * one journal force.
     *
     * @return the ready messages it held
     */
    long close() {
        if (closed) {
            return 0;
        }
        closed = true;
        if (retention != null) {
            retention.cancel();
        }
        long ready = machine == null ? 0 : machine.readyCount();
        for (Map.Entry<ConsumerKey, ConsumerEntry> entry : consumers.entrySet()) {
            entry.getValue().sink().cancelled(entry.getValue().tag());
        }
        consumers.clear();
        recent.values().forEach(payload -> shard.releaseRecent(payload.remaining()));
        recent.clear();
        while (!blocked.isEmpty()) {
            blocked.poll().done().completeExceptionally(deleted());
        }
        settles.clear();
        if (log != null) {
            log.durabilityListener(null);
            try {
                storage.deleteReplica(def.objectId());
                // the deletion is durable, so is every append before it
                while (!pending.isEmpty()) {
                    pending.poll().done().complete(null);
                }
                LOG.info("event=queue_log_deleted vhost={} queue={} object={}", vhost, def.name(), def.objectId());
            } catch (IOException | RuntimeException e) {
                LOG.error(
                        "event=queue_log_delete_failed vhost={} queue={} object={}",
                        vhost,
                        def.name(),
                        def.objectId(),
                        e);
                while (!pending.isEmpty()) {
                    pending.poll()
                            .done()
                            .completeExceptionally(new BrokerFailure(
                                    ReplyCode.INTERNAL_ERROR, "storage failed: " + e.getMessage(), e));
                }
            }
        }
        return ready;
    }

    private BrokerFailure deleted() {
        return new BrokerFailure(ReplyCode.NOT_FOUND, "queue '" + def.name() + "' was deleted");
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
            shard.releaseRecent(cached.remaining());
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

    /**
     * Writes the buffered settlements now; also called before a clean stop, since a stopping shard drops the timer of
     * {@link #flushSettles} and the acks of the last milliseconds would come back after a clean restart. On the shard.
     */
    void writeSettles() {
        if (settles.isEmpty() || closed) {
            settles.clear();
            return;
        }
        if (!blocked.isEmpty()) {
            return; // the log refuses appends for BACKLOG: written once the held publishes got in
        }
        AppendOutcome outcome =
                log.append(EPOCH, RecordType.DATA, MessageRecord.encodeSettle(settles.toLongArray(), settles.size()));
        if (outcome instanceof AppendOutcome.Rejected rejected && rejected.reason() == AppendOutcome.Reason.BACKLOG) {
            // keep them: an ack need not be durable at once, so try again a little later
            settleFlushScheduled = true;
            shard.schedule(
                    () -> {
                        settleFlushScheduled = false;
                        writeSettles();
                    },
                    BACKLOG_RETRY_MS);
            return;
        }
        if (!(outcome instanceof AppendOutcome.Appended)) {
            LOG.warn("event=settle_not_logged queue={} outcome={}", def.name(), outcome);
        }
        settles.clear();
    }

    private Delivery read(long offset, boolean redelivered, long messageCount) {
        try {
            ByteBuffer payload = recent.remove(offset);
            if (payload != null) {
                shard.releaseRecent(payload.remaining());
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
                    message.header(),
                    Unpooled.wrappedBuffer(message.body()),
                    messageCount);
        } catch (IOException e) {
            throw new BrokerFailure(
                    ReplyCode.INTERNAL_ERROR, "cannot read message " + offset + ": " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------------------------------------- a stream

    /** The stream's log as a new reader's start needs it: readable up to what is durable. */
    private final StreamSupport.Log streamLog = new StreamSupport.Log() {
        @Override
        public long first() {
            return log.startOffset();
        }

        @Override
        public long next() {
            return streamMachine.end() + 1;
        }

        @Override
        public boolean isMessage(long offset) throws IOException {
            List<LogRecord> records = log.read(offset, 1);
            return !records.isEmpty() && holdsMessage(records.getFirst());
        }

        @Override
        public long firstAtOrAfter(long epochMillis) throws IOException {
            return log.firstOffsetAtOrAfter(epochMillis, log.startOffset());
        }

        @Override
        public long nowMillis() {
            return storage.nowMillis();
        }
    };

    private static boolean holdsMessage(LogRecord record) {
        return record.type() == RecordType.DATA && MessageRecord.kind(record.payload()) == MessageRecord.MESSAGE;
    }

    /** Bytes of log a stream read asks for per message the reader may take. */
    private static final int BYTES_PER_CREDIT = 1024;

    /** Reads a stream's durable records for a reader and hands its messages over, each with its offset. */
    private final class StreamReads implements StreamEffects {
        @Override
        public long deliver(ConsumerKey consumer, long from, long upTo, int max, LongConsumer delivered) {
            ConsumerEntry entry = consumers.get(consumer);
            if (entry == null) {
                return from;
            }
            List<LogRecord> records;
            try {
                // about the reader's credit, not a whole read's worth: a reader with a prefetch of one reads on at each
                // ack, and the log returns at least one record
                int budget = (int) Math.min(StreamSupport.READ_BYTES, (long) max * BYTES_PER_CREDIT);
                records = log.read(Math.max(from, log.startOffset()), budget);
            } catch (IOException | RuntimeException e) {
                LOG.error("event=stream_read_failed queue={} from={}", def.name(), from, e);
                return from;
            }
            long next = from;
            int count = 0;
            for (LogRecord record : records) {
                if (record.offset() > upTo || count == max) {
                    break;
                }
                if (holdsMessage(record)) {
                    entry.sink()
                            .deliver(
                                    entry.tag(),
                                    StreamSupport.delivery(QueueReplica.this, record.offset(), record.payload()));
                    delivered.accept(record.offset());
                    count++;
                }
                next = record.offset() + 1;
            }
            return next;
        }
    }

    /**
     * Retention of a stream, every {@value #RETENTION_EVERY_MS} ms: the oldest whole segments beyond {@code
     * x-max-length-bytes}, and those whose records are all older than {@code x-max-age}, go; never what is not durable.
     */
    private void retain() {
        if (closed || streamMachine == null) {
            return;
        }
        long keep;
        try {
            keep = log.retainedStart(streamRetention.maxBytes(), streamRetention.appendedBefore(storage.nowMillis()));
        } catch (IOException | RuntimeException e) {
            LOG.error("event=stream_retention_failed queue={}", def.name(), e);
            return;
        }
        long below = Math.min(keep, streamMachine.end() + 1);
        if (below > log.startOffset()) {
            log.discardBefore(below).whenComplete((start, failure) -> {
                if (failure != null) {
                    LOG.error("event=stream_discard_failed queue={} below={}", def.name(), below, failure);
                }
            });
        }
    }
}
