package io.ganglion.broker;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.broker.replication.ReplicaHost;
import io.ganglion.broker.replication.ReplicaListener;
import io.ganglion.coordination.Epoch;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.queues.ConsumeOutcome;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.DeadLetters;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.queues.StreamEffects;
import io.ganglion.queues.StreamMachine;
import io.ganglion.queues.routing.ResourceName;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.serving.ForwardLanes;
import io.ganglion.serving.PublishIntake;
import io.ganglion.serving.QueueOwner;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.agrona.collections.LongArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue layer of every queue on one broker: while this broker's replica owns the object's epoch, the queue ({@link
 * QueueMachine}) over the committed part of the log, fed by the {@link ReplicaHost}'s listener. A quorum queue's log
 * has W of N copies; a classic queue is the one-copy case, its host started alone ({@link ReplicaHost#startAlone}) so
 * its replica owns every epoch with W = 1; the code above the log is the same.
 *
 * <pre>
 *   publish ── PublishAdmitted(id, epoch, message) ──> host ── W copies durable ──> confirmed(id) ── done
 *                                                      host ── commit advanced ───> deliverable(upTo) ── enqueue
 *   ack ───── QueueMachine ── settle(offset) ── SettleAdmitted(offset) ──> host (a settle record, replicated too)
 * </pre>
 *
 * <p>Implementation notes. Everything runs on the host's shard (the host calls the listener there, and {@link
 * LocalQueue} methods must be called there). The queue exists only while the replica owns an epoch: at the first
 * {@code deliverable} of an owned epoch it is rebuilt from the log (every message not settled, all marked redelivered:
 * an earlier owner may have delivered them), and its consumers are carried over; when the replica stops owning, the
 * queue is dropped and its consumers are cancelled ({@code basic.cancel}), so clients resubscribe and reach the new
 * owner. Only offsets up to the commit offset are enqueued, so nothing is delivered before it is durable on W copies.
 * A publish is confirmed when the replica says it committed, and nacked when the replica refuses it (its outcome is
 * then unknown: the owner may have moved).
 *
 * <p>A stream ({@code x-queue-type: stream}) takes the same publish path; in place of the queue it keeps a {@link
 * StreamMachine}: each consumer reads the committed log from the offset it asked for ({@code x-stream-offset}), every
 * delivery carries its offset in the {@code x-stream-offset} header, and acknowledgements only give credit back.
 * Nothing is settled; retention ({@code x-max-length-bytes}) discards the oldest whole segments through the same
 * low-water report a queue's settlements use. A stream's readers survive a new epoch of the same owner (the committed
 * log they read does not change); when the owner moves they are cancelled like a queue's consumers, and a client
 * subscribes again at the next broker from the last offset it saw.
 */
final class ReplicatedQueue implements LocalQueue, QueueEffects, ReplicaListener {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedQueue.class);

    private record ConsumerEntry(String tag, DeliverySink sink, boolean noAck, boolean exclusive, int prefetch) {}

    final String vhost;
    final QueueDef def;
    private final Shard shard;
    private final long publisher;
    private ReplicaHost host;

    /** The queue's owner side ({@link QueueOwner}): its machine while the replica owns an epoch. */
    private final QueueOwner owner;
    /** Whether this is a stream: {@link #streamMachine} in place of the owner's queue machine. */
    private final boolean stream;
    /** The stream's readers while the replica owns an epoch, else null. */
    private StreamMachine streamMachine;
    /** A stream's retention limits. */
    private final StreamArguments.Retention retention;

    private final StreamReads streamReads = new StreamReads();
    /** The epoch and the commit the stream's readers read up to, while it serves. */
    private Epoch streamEpoch;

    private long streamUpTo = -1;
    private long sequence;
    private final PublishIntake<CompletableFuture<Void>> intake;
    private final Map<ConsumerKey, ConsumerEntry> consumers = new LinkedHashMap<>();
    private boolean closed;
    /** Settlements gathered for one settle record ({@link #settle(long)}), and the epoch they were made in. */
    private final LongArrayList settles = new LongArrayList();

    /** Returns gathered for one returned record ({@link #returned(long)}), written with the settlements. */
    private final LongArrayList returns = new LongArrayList();

    private Epoch settlesEpoch;
    private boolean settleFlushScheduled;
    /** The shard beat that checks the lease while the queue is active, or null. */
    private Shard.Ticker gateTicker;

    /** A stream's retention: the offset below which the log may go, reported last, and when it was looked for. */
    private long lowWaterReported;

    private long nextLowWaterMs = Long.MIN_VALUE;

    private final LongSupplier resendWindowMs;
    /**
     * Completed the first time the queue serves here (or when it closes before that); for a replicated queue at once:
     * its operations find the owner by the image and ask again while it moves ({@code QueueAccess.whileMoving}).
     */
    private final CompletableFuture<Void> firstServed = new CompletableFuture<>();

    private Runnable unused = () -> {};
    private boolean hadConsumer;

    /** The queue's {@code x-expires} in ms, -1 for none. */
    private final long expiresMs;

    /** When the queue was last used here (consumed from, got from, declared), on the host's clock. */
    private long lastUsedMs;

    /** When this owner proposed the queue's deletion for {@code x-expires}, or -1; proposed again if still here. */
    private long expiryProposedAtMs = -1;

    /** How long a proposed expiry waits for the deletion before it is proposed again (the log was unavailable). */
    private static final long EXPIRY_RETRY_MS = 5_000;

    /** The queue's message TTL ({@code x-message-ttl}) in ms, -1 for none. */
    private final long messageTtlMs;

    /** The queue's length limits, dropping from the head ({@code x-overflow} drop-head, the default). */
    private final QueueMachine.Limits limits;

    /** {@code x-overflow} reject-publish or reject-publish-dlx: publishes over a limit are refused, none dropped. */
    private final boolean rejectsOverLimit;

    /** {@code x-overflow} reject-publish-dlx: a refused publish is dead-lettered (reason maxlen). */
    private final boolean deadLettersRejected;

    private final long maxLength;
    private final long maxLengthBytes;

    /**
     * RabbitMQ 4's delivery limit for a quorum queue without {@code x-delivery-limit}: a message returned more often
     * goes to the dead-letter exchange, or is dropped.
     */
    static final long DEFAULT_DELIVERY_LIMIT = 20;

    /** Whether returns are counted in the log and shown as {@code x-delivery-count}: a quorum queue's. */
    private final boolean countsDeliveries;

    /**
     * {@code x-dead-letter-strategy} at-least-once (a quorum queue with reject-publish and a dead-letter exchange): a
     * message that leaves is settled only once its dead-letter targets confirmed it.
     */
    private final boolean atLeastOnce;

    /** How long an at-least-once dead-letter that reached no queue, or failed, waits before it is tried again. */
    private static final long DEAD_LETTER_RETRY_MS = 1_000;

    /** At-least-once dead-letter decisions gathered for one dead-lettered record per reason, written first. */
    private final java.util.EnumMap<DeadLetters.Reason, LongArrayList> deadLettered =
            new java.util.EnumMap<>(DeadLetters.Reason.class);

    /** Where messages that leave rejected, expired or dropped go, if the queue has a dead-letter exchange. */
    private final Optional<DeadLettering.Target> deadLetterTarget;

    private final DeadLettering.Sink deadLetters;

    private static long longArgument(QueueDef def, String name) {
        return def.arguments().get(name) instanceof Number number ? number.longValue() : -1;
    }

    /** How often an active queue checks the owner lease, to hold or resume deliveries. */
    private static final long GATE_EVERY_MS = 20;
    /** Settlements wait at most this long, or until this many gather, before one settle record is written. */
    private static final long SETTLE_DELAY_MS = 10;

    private static final int SETTLE_BATCH = 4096;

    /**
     * @param publisher this broker's publisher id for the publishes it admits here: unique across restarts (its
     *     incarnation and node), since the log deduplicates by publisher and sequence
     * @param resendWindowMs {@code replication.resend_window_ms} as the image holds it now
     */
    ReplicatedQueue(
            String vhost,
            QueueDef def,
            Shard shard,
            long publisher,
            LongSupplier resendWindowMs,
            DeadLettering.Sink deadLetters) {
        this.deadLetters = deadLetters;
        this.deadLetterTarget = DeadLettering.Target.of(def);
        this.expiresMs = longArgument(def, "x-expires");
        this.resendWindowMs = resendWindowMs;
        this.vhost = vhost;
        this.def = def;
        this.shard = shard;
        this.publisher = publisher;
        this.stream = def.type() == QueueType.STREAM;
        this.retention = StreamArguments.Retention.of(def.arguments());
        this.messageTtlMs = longArgument(def, "x-message-ttl");
        String overflow = def.arguments().get("x-overflow") instanceof String o ? o : "drop-head";
        this.rejectsOverLimit = !overflow.equals("drop-head");
        this.deadLettersRejected = overflow.equals("reject-publish-dlx");
        this.maxLength = longArgument(def, "x-max-length");
        this.maxLengthBytes = longArgument(def, "x-max-length-bytes");
        this.countsDeliveries = def.type() == QueueType.QUORUM;
        this.atLeastOnce = countsDeliveries
                && deadLetterTarget.isPresent()
                && "at-least-once".equals(def.arguments().get("x-dead-letter-strategy"));
        long deliveryLimit = !countsDeliveries
                ? -1
                : def.arguments().get("x-delivery-limit") instanceof Number limit
                        ? Math.max(-1, limit.longValue()) // a negative limit: none
                        : DEFAULT_DELIVERY_LIMIT;
        // with reject-publish the machine drops nothing: it only counts the bytes the intake's check reads
        this.limits = rejectsOverLimit
                ? new QueueMachine.Limits(-1, maxLengthBytes >= 0 ? Long.MAX_VALUE : -1, deliveryLimit)
                : new QueueMachine.Limits(maxLength, maxLengthBytes, deliveryLimit);
        this.intake = new PublishIntake<>(new IntakeRoles(), new IntakeEffects());
        this.owner = new QueueOwner(new OwnerHost(), this);
    }

    /**
     * @param alone whether {@code host} is the queue's only copy, started alone (a classic queue): operations on the
     *     queue then wait for its first serving ({@link #firstServed})
     */
    void attach(ReplicaHost host, boolean alone) {
        this.host = host;
        if (!alone) {
            firstServed.complete(null);
        }
    }

    ReplicaHost host() {
        return host;
    }

    /**
     * What the queue does when it is unused (an auto-delete queue's last consumer gone, {@code x-expires} passed with
     * no use): proposes its deletion.
     */
    void onUnused(Runnable action) {
        this.unused = action;
    }

    /**
     * Completes once the queue served here for the first time (its owned epoch rebuilt), or closed before that. Any
     * thread.
     */
    @Override
    public CompletableFuture<Void> firstServed() {
        return firstServed;
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

    /** Whether this broker serves the queue now (its replica owns an epoch and the queue was rebuilt). On the shard. */
    boolean active() {
        return serving() && !closed;
    }

    /** Whether the queue or the stream was rebuilt for an owned epoch. */
    private boolean serving() {
        return owner.serving() || streamMachine != null;
    }

    private BrokerFailure notHere() {
        return new BrokerFailure(
                ReplyCode.NOT_FOUND,
                ResourceName.queue(vhost, def.name()) + " is not served here now (its owner is moving)");
    }

    // ---------------------------------------------------------------------------------------------- listener

    @Override
    public void confirmed(PublishId id, long offset) {
        intake.confirmed(id);
    }

    @Override
    public void refused(PublishId id, String reason) {
        // refused by the replica: not its epoch's owner (any more); a failed storage fails the whole queue
        intake.refused(id, reason);
    }

    @Override
    public void deliverable(Epoch epoch, long upTo) {
        if (closed) {
            return;
        }
        try {
            if (!stream) {
                owner.deliverable(epoch, upTo, host.nowMs());
                return;
            }
            if (!host.owningNow().equals(Optional.of(epoch))) {
                return;
            }
            if (!epoch.equals(streamEpoch)) {
                activateStream(epoch, upTo);
            } else if (upTo > streamUpTo) {
                gate();
                streamUpTo = upTo;
                streamMachine.advance(upTo, streamReads);
            }
        } catch (IOException e) {
            LOG.error("event=replicated_queue_read_failed queue={} epoch={}", def.name(), epoch, e);
        }
    }

    @Override
    public void failed(Throwable cause) {
        LOG.error("event=replicated_queue_failed queue={}", def.name(), cause);
        drop("its storage failed", false);
    }

    /** The replica no longer owns (a new assignment made it a follower, or it was unassigned). On the shard. */
    void ownershipLost() {
        if (serving()) {
            LOG.info(
                    "event=replicated_queue_inactive queue={} epoch={}",
                    def.name(),
                    stream ? streamEpoch : owner.epoch().orElse(null));
            drop("its owner moved", true);
        }
    }

    /**
     * Retention of a stream: the oldest whole segments beyond {@code x-max-length-bytes}, and those whose records are
     * all older than {@code x-max-age}, may go (nothing is settled in a stream, so no settle record needs to be
     * committed first); never past the commit. The log discards only whole segments below the offset reported.
     */
    private void findStreamLowWater() {
        if (streamMachine == null || !retention.limited() || host.nowMs() < nextLowWaterMs) {
            return;
        }
        nextLowWaterMs = host.nowMs() + QueueOwner.LOW_WATER_EVERY_MS;
        long keepFrom;
        try {
            keepFrom = host.retainedStartNow(retention.maxBytes(), retention.appendedBefore(host.nowMs()));
        } catch (IOException e) {
            LOG.error("event=stream_retention_failed queue={}", def.name(), e);
            return;
        }
        keepFrom = Math.min(keepFrom, streamUpTo + 1);
        if (keepFrom > lowWaterReported) {
            host.deliver(new ReplicaEvent.SettledLowWater(keepFrom));
            lowWaterReported = keepFrom;
        }
    }

    /**
     * Ends the queue here: consumers cancelled, waiting publishes failed; with {@code movedOn} they fail with {@link
     * QueueMoved} (the next owner decides them), otherwise for good (deleted, storage failed).
     */
    private void drop(String why, boolean movedOn) {
        settles.clear(); // the next owner's machine redelivers them
        returns.clear();
        deadLettered.clear(); // the next owner dead-letters again what no settle record settled
        owner.drop();
        streamMachine = null;
        streamEpoch = null;
        streamUpTo = -1;
        for (ConsumerEntry entry : consumers.values()) {
            entry.sink().cancelled(entry.tag());
        }
        consumers.clear();
        intake.dropInFlight("queue '" + def.name() + "': " + why, movedOn);
    }

    /** What the owner side reads of the replica and the log, and its reports: the host's, on the shard. */
    private final class OwnerHost implements QueueOwner.Host {
        @Override
        public Optional<Epoch> owning() {
            return host.owningNow();
        }

        @Override
        public boolean mayDeliver(Epoch epoch, long nowMs) {
            return host.mayDeliverNow(epoch);
        }

        @Override
        public long start() {
            return host.startNow();
        }

        @Override
        public long end() {
            return host.endNow();
        }

        @Override
        public List<Record> read(long from, long to) throws IOException {
            return host.readRecords(from, to);
        }

        @Override
        public long resendWindowMs() {
            return resendWindowMs.getAsLong();
        }

        @Override
        public void rebuilt(Epoch epoch, QueueMachine machine, int messages) {
            LOG.info(
                    "event=replicated_queue_active queue={} epoch={} messages={} from={} up_to={}",
                    def.name(),
                    epoch,
                    messages,
                    host.startNow(),
                    owner.enqueuedUpTo());
            // consumers kept from an earlier epoch of this owner subscribe again
            consumers.forEach((key, entry) ->
                    machine.consume(key, entry.prefetch(), entry.noAck(), entry.exclusive(), ReplicatedQueue.this));
            for (long[] pending : owner.pendingDeadLetters()) {
                DeadLetters.Reason.ofCode(pending[1])
                        .ifPresent(reason -> deadLetterAtLeastOnce(pending[0], reason, epoch));
            }
            used(); // a new owner, or a restart, counts x-expires from its start
            startGateTicker();
            firstServed.complete(null);
        }

        @Override
        public void settledLowWater(long offset) {
            host.deliver(new ReplicaEvent.SettledLowWater(offset));
        }

        /** From the owner's admission time, the lower of the queue's TTL and the message's own. */
        @Override
        public long expiresAtMs(Record.Message message) {
            long ttl = messageTtlMs;
            long own = MessageRecord.expirationMs(message.body());
            if (own >= 0 && (ttl < 0 || own < ttl)) {
                ttl = own;
            }
            return ttl < 0 ? QueueMachine.NEVER : message.timestampMs() + ttl;
        }

        @Override
        public QueueMachine.Limits limits() {
            return limits;
        }

        @Override
        public long bodySize(Record.Message message) {
            return MessageRecord.bodySize(message.body());
        }
    }

    /**
     * The stream serves from this owned epoch: its readers are new (the replica just took the owner role) or carried
     * from this owner's previous epoch, and read on up to {@code upTo}, the commit.
     */
    private void activateStream(Epoch epoch, long upTo) {
        if (streamMachine == null) {
            streamMachine = new StreamMachine(upTo);
            streamMachine.hold(); // until the owner lease allows it
        }
        streamEpoch = epoch;
        streamUpTo = upTo;
        LOG.info(
                "event=replicated_stream_active queue={} epoch={} start={} up_to={} readers={}",
                def.name(),
                epoch,
                host.startNow(),
                upTo,
                streamMachine.consumerCount());
        gate();
        streamMachine.advance(upTo, streamReads);
        firstServed.complete(null);
    }

    /**
     * Holds or resumes deliveries by the owner lease ({@link ReplicaHost#mayDeliverNow}): a deposed owner must stop
     * handing out messages before a new owner starts. Checked before every operation that can deliver and every
     * {@value #GATE_EVERY_MS} ms while active. On the shard.
     */
    private void gate() {
        if (streamMachine != null) {
            if (host.mayDeliverNow(streamEpoch)) {
                streamMachine.resume(streamReads);
            } else {
                streamMachine.hold();
            }
            startGateTicker();
        } else {
            owner.gated(host.nowMs());
        }
    }

    private void startGateTicker() {
        if (gateTicker == null) {
            gateTicker = shard.every(GATE_EVERY_MS, this::gateTick);
        }
    }

    /** Every {@value #GATE_EVERY_MS} ms while active, in the shard's beat: the lease check and retention. */
    private void gateTick() {
        if (!serving() || closed) {
            gateTicker.cancel();
            gateTicker = null;
            return;
        }
        if (stream) {
            findStreamLowWater();
            gate();
        } else {
            writeSettles(); // before the low water is looked for: it counts only settlements in the log
            owner.tick(host.nowMs());
            expireIfUnused();
        }
    }

    /** The queue was used: {@code x-expires} counts again from now. */
    private void used() {
        lastUsedMs = host.nowMs();
    }

    @Override
    public void declared() {
        used();
    }

    /**
     * Proposes the queue's deletion once {@code x-expires} passed with no consumer and no use; its messages go with it,
     * not dead-lettered, as in RabbitMQ.
     */
    private void expireIfUnused() {
        long now = host.nowMs();
        boolean proposed = expiryProposedAtMs >= 0 && now - expiryProposedAtMs < EXPIRY_RETRY_MS;
        if (expiresMs > 0 && !proposed && consumers.isEmpty() && now - lastUsedMs >= expiresMs) {
            expiryProposedAtMs = now;
            LOG.info(
                    "event=queue_expired vhost={} queue={} unused_ms={}", vhost, def.name(), host.nowMs() - lastUsedMs);
            unused.run();
        }
    }

    // ---------------------------------------------------------------------------------------------- LocalQueue

    @Override
    public void publish(ByteBuffer payload, CompletableFuture<Void> done) {
        publish(payload, done, publisher, ++sequence, ForwardLanes.NONE);
    }

    /**
     * A publish with its id: a client's on this broker (the id from the broker's re-send sequence, so that it can be
     * sent on to another owner unchanged) or one forwarded or re-sent by another broker. When this replica does not
     * own the epoch (yet, or any more) it fails with {@link QueueMoved}: never admitted, or admitted and its outcome
     * left to the next owner; either way safe to send again with the same id.
     */
    @Override
    public void publish(ByteBuffer payload, CompletableFuture<Void> done, long publisher, long sequence, long after) {
        if (closed) {
            done.completeExceptionally(notHere());
        } else if (host == null) {
            done.completeExceptionally(new QueueMoved(notHere().explanation()));
        } else {
            intake.publish(new PublishId(publisher, sequence), after, payload, done, host.nowMs());
        }
    }

    /**
     * The replica took or lost a role: publishes held for its next epoch go in if it owns now, and back to their
     * senders if it follows another owner. On the shard.
     */
    @Override
    public void rolesMayHaveChanged() {
        if (host != null) {
            intake.rolesMayHaveChanged(host.nowMs());
        }
    }

    /** What the intake reads of the replica: the host's view now. */
    private final class IntakeRoles implements PublishIntake.Roles {
        @Override
        public Optional<Epoch> takingPublishes() {
            // a new owner whose epoch start is not durable yet takes publishes too (its replica holds them until it
            // is): refused, the brokers forwarding them would re-send each within milliseconds
            return host.takingPublishesNow();
        }

        @Override
        public boolean awaitingEpoch() {
            return host.awaitingEpochNow();
        }
    }

    /** The intake's answers: the publish's future, the host, and the shard's timer. */
    private final class IntakeEffects implements PublishIntake.Effects<CompletableFuture<Void>> {
        /**
         * Over a limit with reject-publish: the ready messages and the publishes admitted but not committed yet reach
         * {@code x-max-length}, or the ready messages' bodies reach {@code x-max-length-bytes}.
         */
        @Override
        public boolean rejects(ByteBuffer payload) {
            if (!rejectsOverLimit || !owner.serving()) {
                return false;
            }
            QueueMachine machine = owner.machine();
            long held = machine.readyCount() + (long) intake.inFlight() + owner.pendingDeadLetterCount();
            return (maxLength >= 0 && held >= maxLength)
                    || (maxLengthBytes >= 0 && machine.readyBytes() >= maxLengthBytes);
        }

        @Override
        public void rejected(CompletableFuture<Void> done, ByteBuffer payload) {
            if (deadLettersRejected && deadLetterTarget.isPresent()) {
                deadLetters.publish(
                        vhost,
                        DeadLettering.republish(
                                payload, def.name(), DeadLetters.Reason.MAXLEN, deadLetterTarget.get(), host.nowMs()),
                        false);
            }
            done.completeExceptionally(
                    new PublishRejected(ResourceName.queue(vhost, def.name()) + " is at its length limit (x-overflow "
                            + (deadLettersRejected ? "reject-publish-dlx" : "reject-publish") + ")"));
        }

        @Override
        public void admit(ReplicaEvent.PublishAdmitted admitted) {
            host.deliver(admitted);
        }

        @Override
        public void confirmed(CompletableFuture<Void> done) {
            done.complete(null);
        }

        @Override
        public void moved(CompletableFuture<Void> done, String why) {
            done.completeExceptionally(
                    new QueueMoved("publish to queue '" + def.name() + "' not confirmed here: " + why));
        }

        @Override
        public void failed(CompletableFuture<Void> done, String why) {
            done.completeExceptionally(new BrokerFailure(ReplyCode.INTERNAL_ERROR, why));
        }

        @Override
        public void wakeIn(long delayMs) {
            try {
                shard.schedule(() -> intake.expire(host.nowMs()), delayMs);
            } catch (RejectedExecutionException e) {
                intake.close(host.nowMs()); // the broker is stopping: held publishes back to their senders now
            }
        }

        @Override
        public void released(int count, boolean admitted, long heldMs) {
            LOG.info(
                    "event=parked_publishes_released queue={} count={} admitted={} after_us={}",
                    def.name(),
                    count,
                    admitted,
                    heldMs * 1000);
        }

        @Override
        public void firstPublish(Epoch epoch) {
            LOG.info("event=owner_first_publish queue={} epoch={}", def.name(), epoch);
        }
    }

    @Override
    public void consume(ConsumerKey key, QueueConsumer consumer) {
        if (!active()) {
            throw notHere();
        }
        LocalQueue.checkNewConsumer(stream, vhost, def.name(), consumer, consumers.containsKey(key));
        gate();
        // registered before the machine sees it: consuming delivers the ready messages at once, to this entry
        consumers.put(
                key,
                new ConsumerEntry(
                        consumer.tag(), consumer.sink(), consumer.noAck(), consumer.exclusive(), consumer.prefetch()));
        ConsumeOutcome outcome = stream
                ? streamMachine.consume(
                        key,
                        consumer.prefetch(),
                        consumer.exclusive(),
                        StreamSupport.from(consumer.start(), streamLog, def.name()),
                        streamReads)
                : owner.gated(host.nowMs())
                        .consume(key, consumer.prefetch(), consumer.noAck(), consumer.exclusive(), this);
        LocalQueue.requireAdded(outcome, vhost, def.name(), consumer.tag(), () -> consumers.remove(key));
        hadConsumer = true;
        used();
    }

    /** The stream's log as a new reader's start needs it: readable up to the commit. */
    private final StreamSupport.Log streamLog = new StreamSupport.Log() {
        @Override
        public long first() {
            return host.startNow();
        }

        @Override
        public long next() {
            return streamUpTo + 1;
        }

        @Override
        public boolean isMessage(long offset) throws IOException {
            List<Record> records = host.readRecords(offset, offset);
            return !records.isEmpty() && records.getFirst() instanceof Record.Message;
        }

        @Override
        public long firstAtOrAfter(long epochMillis) throws IOException {
            return host.firstOffsetAtOrAfterNow(epochMillis, host.startNow());
        }

        @Override
        public long nowMillis() {
            return host.nowMs();
        }
    };

    /** Removes a consumer; an auto-delete queue that had one and has none left goes. */
    @Override
    public void cancel(ConsumerKey key) {
        if (consumers.remove(key) == null) {
            return;
        }
        if (owner.serving()) {
            owner.machine().cancel(key);
        }
        if (streamMachine != null) {
            streamMachine.cancel(key);
        }
        used(); // x-expires counts from the last consumer's going
        if (def.autoDelete() && hadConsumer && consumers.isEmpty() && !closed) {
            unused.run();
        }
    }

    @Override
    public Optional<Delivery> get(boolean noAck) {
        if (stream) {
            throw StreamSupport.unsupported("basic.get", def.name(), vhost);
        }
        if (!active()) {
            throw notHere();
        }
        used();
        QueueMachine machine = owner.gated(host.nowMs());
        return machine.get(noAck, this)
                .map(taken -> read(taken.offset(), taken.redelivered(), machine.readyCount(), taken.deliveryCount()));
    }

    @Override
    public void settle(long[] offsets, Settlement settlement) {
        if (streamMachine != null) {
            // a stream removes nothing: any settlement only gives its consumer the credit back
            for (long offset : offsets) {
                streamMachine.ack(offset, streamReads);
            }
            return;
        }
        if (!owner.serving()) {
            return; // a new owner redelivers them
        }
        LocalQueue.apply(owner.gated(host.nowMs()), offsets, settlement, this);
    }

    @Override
    public long purge() {
        if (stream) {
            throw StreamSupport.unsupported("queue.purge", def.name(), vhost);
        }
        if (!active()) {
            throw notHere();
        }
        return owner.gated(host.nowMs()).purge(this);
    }

    @Override
    public int readyCount() {
        if (streamMachine != null) {
            // a stream's message count: the offsets it holds from its start to the commit, its epochs' start records
            // aside (RabbitMQ counts its offsets, which are messages only)
            long start = host.startNow();
            long held = streamUpTo + 1 - start - host.epochStartsNow(start, streamUpTo);
            return (int) Math.min(Integer.MAX_VALUE, Math.max(0, held));
        }
        return owner.serving() ? owner.machine().readyCount() : 0;
    }

    @Override
    public int consumerCount() {
        if (streamMachine != null) {
            return streamMachine.consumerCount();
        }
        return owner.serving() ? owner.machine().consumerCount() : 0;
    }

    /** The queue was deleted: consumers told, publishes failed. On the shard. */
    void close() {
        if (!closed) {
            drop("it was deleted", false);
            closed = true;
            firstServed.complete(null);
            intake.close(host == null ? 0 : host.nowMs());
        }
    }

    // ---------------------------------------------------------------------------------------------- QueueEffects

    @Override
    public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
        ConsumerEntry entry = consumers.get(consumer);
        if (entry == null) {
            // the machine never delivers to a consumer it was not given; the message stays unacked to it until cancel
            LOG.error("event=delivery_without_consumer queue={} consumer={} offset={}", def.name(), consumer, offset);
            return;
        }
        entry.sink()
                .deliver(
                        entry.tag(),
                        read(offset, redelivered, 0, owner.machine().deliveryCount(offset)));
    }

    /**
     * The machine settled {@code offset}: gathered with the others of the next {@value #SETTLE_DELAY_MS} ms (at most
     * {@value #SETTLE_BATCH}) into one settle record. An ack is confirmed to no one, so it need not be logged at once:
     * a crash of the owner before the write redelivers the message, as AMQP allows.
     */
    @Override
    public void settle(long offset) {
        gather(settles, offset);
    }

    /** A delivered message is back in a quorum queue: its return is logged with the settlements, for its count. */
    @Override
    public void returned(long offset) {
        if (countsDeliveries) {
            gather(returns, offset);
        }
    }

    private void gather(LongArrayList batch, long offset) {
        if (batch.isEmpty() && settles.isEmpty() && returns.isEmpty() && deadLettered.isEmpty()) {
            settlesEpoch = owner.epoch().orElse(null);
        }
        batch.addLong(offset);
        if (batch.size() >= SETTLE_BATCH) {
            writeSettles();
        } else if (!settleFlushScheduled) {
            settleFlushScheduled = true;
            try {
                shard.schedule(
                        () -> {
                            settleFlushScheduled = false;
                            writeSettles();
                        },
                        SETTLE_DELAY_MS);
            } catch (RejectedExecutionException e) {
                settleFlushScheduled = false;
                writeSettles(); // the broker is stopping
            }
        }
    }

    @Override
    public void rejected(long offset) {
        leave(offset, DeadLetters.Reason.REJECTED);
    }

    @Override
    public void expired(long offset) {
        leave(offset, DeadLetters.Reason.EXPIRED);
    }

    @Override
    public void dropped(long offset) {
        leave(offset, DeadLetters.Reason.MAXLEN);
    }

    @Override
    public void overDeliveryLimit(long offset) {
        LOG.info(
                "event=delivery_limit_reached queue={} offset={} limit={}", def.name(), offset, limits.deliveryLimit());
        leave(offset, DeadLetters.Reason.DELIVERY_LIMIT);
    }

    /**
     * The message at {@code offset} left the queue for {@code reason}: dead-lettered at most once and settled now, or,
     * at least once, its decision logged and the settle left until its targets confirmed it.
     */
    private void leave(long offset, DeadLetters.Reason reason) {
        if (!atLeastOnce) {
            deadLetter(offset, reason);
            settle(offset);
            return;
        }
        Optional<Epoch> epoch = owner.epoch();
        if (epoch.isEmpty()) {
            return;
        }
        owner.pendDeadLetter(offset, reason.code());
        LongArrayList batch = deadLettered.get(reason);
        if (batch == null) {
            batch = new LongArrayList();
            gather(batch, offset); // the first of the batch: it takes the epoch before it is in the map
            deadLettered.put(reason, batch);
        } else {
            gather(batch, offset);
        }
        deadLetterAtLeastOnce(offset, reason, epoch.get());
    }

    /**
     * Publishes the message at {@code offset} to the dead-letter exchange and settles it once every target queue
     * confirmed it; tried again every {@value #DEAD_LETTER_RETRY_MS} ms while it reaches no queue or a target fails,
     * as long as this owner serves {@code epoch}. On the shard.
     */
    private void deadLetterAtLeastOnce(long offset, DeadLetters.Reason reason, Epoch epoch) {
        if (closed || !owner.epoch().equals(Optional.of(epoch)) || !owner.deadLetterPending(offset)) {
            return;
        }
        CompletableFuture<Void> outcome;
        try {
            DeadLettering.Republished republished = DeadLettering.republish(
                    message(offset).body(), def.name(), reason, deadLetterTarget.get(), host.nowMs());
            outcome = deadLetters.publish(vhost, republished, true);
        } catch (IOException | RuntimeException e) {
            outcome = CompletableFuture.failedFuture(e);
        }
        outcome.whenComplete((ignored, failure) -> {
            try {
                shard.execute(() -> deadLetterOutcome(offset, reason, epoch, failure));
            } catch (RejectedExecutionException e) {
                // the broker is stopping: the next owner, or this one after a restart, dead-letters it again
            }
        });
    }

    /** Settles an at-least-once dead-letter its targets confirmed, or tries it again later. On the shard. */
    private void deadLetterOutcome(long offset, DeadLetters.Reason reason, Epoch epoch, Throwable failure) {
        if (!owner.epoch().equals(Optional.of(epoch))) {
            return; // the owner moved: the next one dead-letters it again
        }
        if (failure == null) {
            if (owner.deadLettered(offset)) {
                settle(offset);
            }
            return;
        }
        LOG.warn(
                "event=dead_letter_retry queue={} offset={} reason={} cause={}",
                def.name(),
                offset,
                reason.wireName(),
                failure.toString());
        try {
            shard.schedule(() -> deadLetterAtLeastOnce(offset, reason, epoch), DEAD_LETTER_RETRY_MS);
        } catch (RejectedExecutionException e) {
            // the broker is stopping: as above
        }
    }

    /**
     * Republishes the message at {@code offset} to the queue's dead-letter exchange, if it has one, before it is settled
     * here: at most once, as RabbitMQ's default (a crash of this owner before the settle record is written dead-letters
     * it again from the next owner; a target that does not take it loses it).
     */
    private void deadLetter(long offset, DeadLetters.Reason reason) {
        if (deadLetterTarget.isEmpty()) {
            return;
        }
        try {
            Record.Message message = message(offset);
            DeadLettering.Republished republished =
                    DeadLettering.republish(message.body(), def.name(), reason, deadLetterTarget.get(), host.nowMs());
            deadLetters.publish(vhost, republished, false).whenComplete((ignored, failure) -> {
                if (failure != null) {
                    LOG.warn(
                            "event=dead_letter_lost queue={} offset={} reason={} cause={}",
                            def.name(),
                            offset,
                            reason.wireName(),
                            failure.toString());
                }
            });
        } catch (IOException | RuntimeException e) {
            LOG.error(
                    "event=dead_letter_failed queue={} offset={} reason={}", def.name(), offset, reason.wireName(), e);
        }
    }

    /**
     * Writes the gathered settlements as one settle record if the machine that made them still serves; before a
     * clean stop too, so that the acks of the last milliseconds are not redelivered after it. On the shard.
     */
    void writeSettles() {
        if (settles.isEmpty() && returns.isEmpty() && deadLettered.isEmpty()) {
            return;
        }
        long[] settled = settles.toLongArray();
        long[] returned = returns.toLongArray();
        var decisions = new java.util.EnumMap<>(deadLettered);
        settles.clear();
        returns.clear();
        deadLettered.clear();
        if (!closed
                && host != null
                && owner.serving()
                && java.util.Objects.equals(owner.epoch().orElse(null), settlesEpoch)) {
            // the decisions first: a settle of a message dead-lettered in the same batch follows its decision
            decisions.forEach((reason, offsets) ->
                    host.deliver(new ReplicaEvent.DeadLetterAdmitted(offsets.toLongArray(), reason.code())));
            if (returned.length > 0) {
                host.deliver(new ReplicaEvent.ReturnAdmitted(returned));
            }
            if (settled.length > 0) {
                host.deliver(new ReplicaEvent.SettleAdmitted(settled));
            }
        }
    }

    private Record.Message message(long offset) throws IOException {
        List<Record> records = host.readRecords(offset, offset);
        if (records.isEmpty() || !(records.get(0) instanceof Record.Message message)) {
            throw new BrokerFailure(ReplyCode.INTERNAL_ERROR, "no message at offset " + offset);
        }
        return message;
    }

    /** The delivery of the message at {@code offset}; a quorum queue's shows a count above 0 as x-delivery-count. */
    private Delivery read(long offset, boolean redelivered, long messageCount, long deliveryCount) {
        try {
            Record.Message message = message(offset);
            MessageRecord.Message decoded = MessageRecord.decodeMessage(message.body());
            return new Delivery(
                    this,
                    offset,
                    redelivered,
                    decoded.exchange(),
                    decoded.routingKey(),
                    countsDeliveries && deliveryCount > 0
                            ? DeadLettering.withDeliveryCount(decoded, deliveryCount)
                            : decoded.header(),
                    Unpooled.wrappedBuffer(decoded.body()),
                    messageCount);
        } catch (IOException e) {
            throw new BrokerFailure(
                    ReplyCode.INTERNAL_ERROR, "cannot read message " + offset + ": " + e.getMessage(), e);
        }
    }

    // ---------------------------------------------------------------------------------------------- StreamEffects

    /** Reads a stream's committed records for a reader and hands its messages over, each with its offset. */
    private final class StreamReads implements StreamEffects {
        @Override
        public long deliver(ConsumerKey consumer, long from, long upTo, int max, LongConsumer delivered) {
            ConsumerEntry entry = consumers.get(consumer);
            if (entry == null) {
                return from;
            }
            List<Record> records;
            try {
                records = host.readRecords(from, Math.min(upTo, from + max - 1), StreamSupport.READ_BYTES);
            } catch (IOException e) {
                LOG.error("event=stream_read_failed queue={} from={}", def.name(), from, e);
                return from;
            }
            long next = from;
            for (Record record : records) {
                if (record instanceof Record.Message message) {
                    entry.sink()
                            .deliver(
                                    entry.tag(),
                                    StreamSupport.delivery(ReplicatedQueue.this, message.offset(), message.body()));
                    delivered.accept(message.offset());
                }
                next = record.offset() + 1;
            }
            return next;
        }
    }
}
