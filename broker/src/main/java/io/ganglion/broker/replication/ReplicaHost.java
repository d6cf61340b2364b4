package io.ganglion.broker.replication;

import io.ganglion.broker.Shard;
import io.ganglion.broker.peer.PeerMessage.Replication;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.PeerMessage;
import io.ganglion.replication.PeerMessage.Replicate;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.replication.RecoveredLog;
import io.ganglion.replication.Replica;
import io.ganglion.replication.ReplicaEffect;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.DurabilityListener;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replicated object on this broker: its {@link Replica} state machine on one {@link Shard}, over the object's
 * {@link ReplicaLog}, executing the replica's effects with real IO.
 *
 * <pre>
 *   queue layer ─publish/settle/assign─┐                 ┌─ Append, Truncate, PersistSeal, Discard, Reseed, ReadLog ─▶ ReplicaLog
 *   peer frames ─receive──────────────▶│ shard: Replica ─┤─ Send ─▶ PeerSender (Replication frame)
 *   controller ─recover───────────────▶│    onEvent      ├─ ReplySealed, ReplyInstalled, ReplyDropped ─▶ RecoveryReplySink
 *   journal ─durable/seal forced──────▶┘                 └─ Confirm, Refuse, Deliverable ─▶ ReplicaListener
 * </pre>
 *
 * <p>Effects map to storage as follows: {@code Append} to {@link ReplicaLog#appendAt} at the replica's own offsets
 * (records encoded by {@link ReplicatedRecords}; {@link ReplicaLog#appendCopy} for a record at or below the sealed
 * epoch, which only an install copies, since the replica streams and admits only above its seal), made durable by group commit and reported back as {@code
 * AppendDurable} from the log's {@link DurabilityListener}; {@code Truncate(from)} to {@code truncateAfter(from - 1)};
 * {@code Flush} to an {@code AppendDurable} of the log's durable offset (a truncate already waited for its force);
 * {@code PersistSeal} to {@link ReplicaLog#seal}, whose forced completion becomes {@code SealPersisted}; {@code
 * Discard} to {@code discardBefore}; {@code Reseed(start, history)} to {@code installSnapshot(start - 1, history,
 * empty)} (everything below {@code start} was settled, so the snapshot holds nothing); {@code ReadLog} to reads
 * answered by {@code LogRead}.
 *
 * <p>Implementation notes.
 *
 * <ul>
 *   <li>Threads. Everything of the host happens on its shard thread: opening, every event, every effect, every
 *       listener and sink callback. The public methods may be called from any thread (a Netty event loop, the
 *       controller, another shard); each hands one task to the shard and returns. The only other thread is the store's
 *       completion thread (or the journal writer), which runs the {@link DurabilityListener} and the seal and discard
 *       futures: they only set {@code durableScheduled} (atomic) and hand a task to the shard. No locks.
 *   <li>Fields. All but {@code durableScheduled}, {@code startRequested} and {@code opened} (thread-safe) belong to the
 *       shard thread. {@code replica} and {@code log} are set by
 *       the open task, which is the first task of the host on its shard, so every later task sees them.
 *   <li>Order. Events are handled one at a time to completion: the effects of an event are executed in order before
 *       the next event is looked at. An effect that answers synchronously (a log read, a flush) queues its answer in
 *       {@code pending}, handled after the current effect list, never in the middle of it.
 *   <li>Durability. {@code AppendDurable} carries the log's durable offset read on the shard at that moment, never an
 *       offset a callback reported earlier: a truncate may have cut and rewritten the offsets since, and the log's
 *       durable offset is exact on the shard thread (a truncate waits for its force before it returns).
 *   <li>Failure. A storage call that fails or refuses (an append refused, a read of a damaged log, a truncate or seal
 *       whose journal failed) leaves the replica's picture of the log wrong, so the host stops for good: the rest of
 *       that effect list is dropped (no confirm after a failed append), every outstanding publish is refused, the
 *       listener hears {@link ReplicaListener#failed}, later publishes are refused and other events dropped. Storage
 *       failures therefore surface as refusals, never as confirms. A new host opened from disk goes on from what is
 *       durable. A {@code BACKLOG} refusal (the segment writer far behind) is flow control, not a failure: see
 *       {@link #stalled}.
 *   <li>Outstanding publishes. The host remembers every publish handed to the replica until it is confirmed or
 *       refused. The replica forgets them silently when it loses the owner role (their outcome is unknown there); the
 *       host then refuses them, so the queue layer re-sends them to the new owner.
 * </ul>
 */
public final class ReplicaHost {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaHost.class);
    private static final int READ_BYTES = 1 << 20;
    /** Ranges shorter than this are read record by record (see {@link #readRecords}). */
    private static final long SMALL_READ_RECORDS = 16;
    /**
     * Payload bytes one {@code ReadLog} answers with at most (at least one record): its records go out in one frame,
     * which must stay below the peer link's max frame length (16 MiB by default). The replica asks again from where
     * the answer ended (feeding resumes on progress, an install asks its source again). A read is one task on the
     * shard, decoded there, and every other queue of the shard waits for it: a returning follower's catch-up read of 4
     * MiB held the owner's own confirms for tens of milliseconds, so the catch-up goes in smaller steps.
     */
    static final long READ_LIMIT_BYTES = 512L << 10;
    /** Records and bytes of the newest records one host keeps in heap (see {@link RecentRecords}). */
    private static final int RECENT_RECORDS = 8192;

    private static final long RECENT_BYTES = 4L << 20;
    /** Records one Replicate carries at most when the host joins the replica's Replicates (see {@link #send}). */
    private static final int BATCH_RECORDS = 1024;
    /** Bytes a stored record's frame takes beyond its {@link Record#size()}, about. */
    private static final long RECORD_FRAME_SLACK = 64;

    private static final ByteBuffer NO_SNAPSHOT_DATA = ByteBuffer.allocate(0).asReadOnlyBuffer();

    /** What the host shows of its replica, for operators and tests. */
    public record Status(
            Optional<Epoch> owning,
            Optional<Epoch> following,
            long commit,
            long start,
            long end,
            long durable,
            Epoch sealedEpoch,
            boolean failed,
            List<NodeId> learners,
            SortedMap<NodeId, Long> followerDurable) {}

    private final ObjectId object;
    private final long storageId;
    private final Shard shard;
    private final Storage storage;
    private final ReplicationContext context;
    private final PeerSender sender;
    private final RecoveryReplySink replies;
    private final ReplicaListener listener;
    /** Set by the durability listener when it handed the shard a task to report durability; cleared by that task. */
    private final AtomicBoolean durableScheduled = new AtomicBoolean();

    private final AtomicBoolean startRequested = new AtomicBoolean();
    /** Completed by the open task on the shard. */
    private final CompletableFuture<Void> opened = new CompletableFuture<>();

    // shard thread only
    private ReplicaLog log;
    private Replica replica;
    private final RecentRecords recent;
    /** Replicates held back per peer until the shard is idle (see {@link #send}). */
    private final Map<NodeId, OutgoingRecords> outgoing = new LinkedHashMap<>();

    private boolean flushRegistered;
    private final ArrayDeque<ReplicaEvent> pending = new ArrayDeque<>();
    private final LinkedHashSet<PublishId> outstanding = new LinkedHashSet<>();
    private boolean handling;
    private boolean closed;
    /** The shard beat that ticks the replica, once it runs (on the shard). */
    private Shard.Ticker ticker;

    private Throwable failure;

    /**
     * A host of {@code object}, whose log is {@code storageId} in {@code storage}. Nothing happens until {@link
     * #start()}; the log is opened on the shard, never by the constructor.
     *
     * @param sender where the replica's messages to its peers go, as {@link Replication} frames
     * @param replies where answers to the controller's recovery requests go
     * @param listener the queue layer's ear: confirms, refusals, deliverable offsets, failure
     */
    public ReplicaHost(
            ObjectId object,
            long storageId,
            Shard shard,
            Storage storage,
            ReplicationContext context,
            PeerSender sender,
            RecoveryReplySink replies,
            ReplicaListener listener) {
        this.object = Objects.requireNonNull(object, "object");
        this.storageId = storageId;
        this.shard = Objects.requireNonNull(shard, "shard");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.context = Objects.requireNonNull(context, "context");
        this.sender = Objects.requireNonNull(sender, "sender");
        this.replies = Objects.requireNonNull(replies, "replies");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.recent = new RecentRecords(shard, RECENT_RECORDS, RECENT_BYTES);
    }

    public ObjectId object() {
        return object;
    }

    public Shard shard() {
        return shard;
    }

    // ---------------------------------------------------------------------------------------------------- lifecycle

    /**
     * Opens the log on the shard, rebuilds the replica from what storage recovered and starts ticking. Any thread;
     * idempotent: a second call returns the same future (the {@link ReplicationRouter} starts the hosts it creates).
     * Events delivered before the open are queued behind it on the shard.
     *
     * @return completes once the replica runs, exceptionally if the log could not be opened (the host is then failed)
     */
    public CompletableFuture<Void> start() {
        if (startRequested.compareAndSet(false, true)) {
            onShard(() -> {
                if (closed) {
                    opened.completeExceptionally(new IllegalStateException("host of " + object + " closed"));
                    return;
                }
                try {
                    open();
                    opened.complete(null);
                    ticker = shard.every(context.tickMs(), this::tick);
                } catch (IOException | RuntimeException e) {
                    fail(e);
                    opened.completeExceptionally(e);
                }
            });
        }
        return opened;
    }

    /** On the shard: the log as storage recovered it, cut back to its durable offset, and the replica over it. */
    private void open() throws IOException {
        log = storage.replica(storageId);
        if (log.failed() || log.durableOffset() < log.lastOffset()) {
            // records never reported durable (this process appended them before a failure): never counted, drop them
            log.truncateAfter(log.durableOffset());
        }
        Map<PublishId, Long> published = new HashMap<>();
        // the replica remembers the publish ids of its newest records only (PublishIndex): read just those, so a
        // long backlog costs no full scan of the log at open
        long next = Math.max(log.startOffset(), log.lastOffset() - Replica.PUBLISH_INDEX_CAPACITY + 1);
        while (next <= log.lastOffset()) {
            List<LogRecord> records = log.read(next, READ_BYTES);
            if (records.isEmpty()) {
                break;
            }
            for (LogRecord stored : records) {
                if (ReplicatedRecords.decode(stored) instanceof Record.Message message) {
                    published.put(message.id(), message.offset());
                }
                next = stored.offset() + 1;
            }
        }
        RecoveredLog recovered = new RecoveredLog(
                log.startOffset(),
                log.lastOffset(),
                history(log.epochHistory()),
                Epoch.of(Math.max(0, log.sealedEpoch())),
                published);
        replica = Replica.start(object, context.self(), context.incarnation(), context.config(), recovered);
        log.durabilityListener(new Durability());
        LOG.info(
                "event=replica_opened object={} node={} start={} end={} history={} sealed_epoch={}",
                object,
                context.self(),
                recovered.start(),
                recovered.end(),
                recovered.history(),
                recovered.sealedEpoch());
    }

    /**
     * Stops the host: no more ticks, later events dropped, outstanding publishes refused ("closed"). The log stays
     * open in its storage. Any thread.
     *
     * @return completes on the shard once the host stopped
     */
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        onShard(() -> {
            if (!closed) {
                closed = true;
                recent.clear();
                if (log != null) {
                    log.durabilityListener(null);
                }
                refuseOutstanding("replica host closed");
            }
            done.complete(null);
        });
        return done;
    }

    // ---------------------------------------------------------------------------------------------------- events in

    /**
     * Hands an event to the replica on the shard: an assignment change ({@code Assigned}, {@code Unassigned}), a
     * publish, a settle, the settled low-water mark, or a recovery request. Any thread.
     *
     * @throws IllegalArgumentException for the events only the host itself produces: {@code AppendDurable}, {@code
     *     SealPersisted}, {@code LogRead} and {@code Tick}
     */
    public void deliver(ReplicaEvent event) {
        Objects.requireNonNull(event, "event");
        switch (event) {
            case ReplicaEvent.AppendDurable e -> throw ownEvent(e);
            case ReplicaEvent.SealPersisted e -> throw ownEvent(e);
            case ReplicaEvent.LogRead e -> throw ownEvent(e);
            case ReplicaEvent.Tick e -> throw ownEvent(e);
            default -> onShard(() -> handle(event));
        }
    }

    /** A replication message from the replica of this object on {@code from}. Any thread (a Netty event loop). */
    public void receive(NodeId from, PeerMessage message) {
        deliver(new ReplicaEvent.Received(from, message));
    }

    /** A recovery request of {@code controller} for this replica. Any thread. */
    public void recover(NodeId controller, RecoveryRequest request) {
        LOG.info("event=recovery_request_received object={} request={} controller={}", object, request, controller);
        if (!request.object().equals(object)) {
            throw new IllegalArgumentException("a request for " + request.object() + " to the host of " + object);
        }
        deliver(
                switch (request) {
                    case RecoveryRequest.Seal seal -> new ReplicaEvent.SealRequested(controller, seal.epoch());
                    case RecoveryRequest.Install install ->
                        new ReplicaEvent.InstallRequested(
                                controller, install.epoch(), install.point(), install.sources());
                    case RecoveryRequest.CatchUp catchUp ->
                        new ReplicaEvent.CatchUpRequested(controller, catchUp.epoch(), catchUp.owner());
                    case RecoveryRequest.Drop drop ->
                        new ReplicaEvent.DropRequested(controller, drop.epoch(), drop.follower());
                });
    }

    /**
     * Whether the owner of {@code epoch} may hand messages to consumers now: its lease holds (see {@code
     * Replica.mayDeliver}). On the shard.
     */
    public boolean mayDeliverNow(Epoch epoch) {
        return replica != null
                && failure == null
                && replica.mayDeliver(epoch, context.clockMs().getAsLong());
    }

    /** The last offset of the log now, -1 when empty or not open. On the shard. */
    public long endNow() {
        return replica == null ? -1 : replica.end();
    }

    /**
     * The replica's logical start now: every message before it is settled (the settled low water its owner reported,
     * passed on to followers with the records), though the file may still hold them until their segment is discarded
     * whole. 0 when not open. On the shard.
     */
    public long startNow() {
        return replica == null ? 0 : replica.start();
    }

    /**
     * For a stream: the first offset from {@code from} on whose record this copy appended at or after {@code
     * epochMillis} ({@link io.ganglion.storage.ReplicaLog#firstOffsetAtOrAfter}); 0 when not open. On the shard.
     *
     * @throws IOException if the log cannot be read
     */
    public long firstOffsetAtOrAfterNow(long epochMillis, long from) throws IOException {
        return log == null ? 0 : log.firstOffsetAtOrAfter(epochMillis, from);
    }

    /**
     * Retention of a stream: the first offset to keep so that this copy's whole segments hold at most {@code maxBytes}
     * and none was appended before {@code appendedBeforeMs} as a whole ({@link
     * io.ganglion.storage.ReplicaLog#retainedStart(long, long)}: {@link Long#MAX_VALUE} and {@link Long#MIN_VALUE} for
     * no limit); 0 when not open. On the shard.
     *
     * @throws IOException if the log cannot be read
     */
    public long retainedStartNow(long maxBytes, long appendedBeforeMs) throws IOException {
        return log == null ? 0 : log.retainedStart(maxBytes, appendedBeforeMs);
    }

    /** The time now by the clock that stamps this host's appends (its context's). */
    public long nowMs() {
        return context.clockMs().getAsLong();
    }

    /** The epoch this replica owns and admits publishes in, if any. On the shard. */
    public Optional<Epoch> owningNow() {
        return replica == null || failure != null ? Optional.empty() : replica.owning();
    }

    /**
     * The epoch publishes may be sent under now: the owned one, or one whose owner role this replica just took (its
     * epoch start not durable yet: the replica holds them until it is). On the shard.
     */
    public Optional<Epoch> takingPublishesNow() {
        return replica == null || failure != null ? Optional.empty() : replica.takingPublishes();
    }

    /**
     * Whether the replica awaits an epoch it has not heard of ({@link Replica#awaitingEpoch}): it does not know who
     * owns the queue next. On the shard.
     */
    public boolean awaitingEpochNow() {
        return replica != null && failure == null && !closed && replica.awaitingEpoch();
    }

    /**
     * The records at offsets {@code from..to} (inclusive) of the object's log, decoded; fewer if the log holds fewer.
     * For the queue layer, which keeps offsets and reads messages back when it delivers them. On the shard.
     *
     * @throws IOException if the log cannot be read or a record is damaged
     */
    public List<Record> readRecords(long from, long to) throws IOException {
        return readRecords(from, to, Long.MAX_VALUE);
    }

    /**
     * {@link #readRecords(long, long)}, stopping before the record that would take the records read past {@code
     * limitBytes} (at least one is read). On the shard.
     */
    public List<Record> readRecords(long from, long to, long limitBytes) throws IOException {
        if (log == null) {
            return new ArrayList<>();
        }
        return collect(Math.max(from, log.startOffset()), to, limitBytes);
    }

    /** What the replica looks like now, read on the shard. Any thread. */
    public CompletableFuture<Status> status() {
        CompletableFuture<Status> status = new CompletableFuture<>();
        onShard(() -> {
            if (replica == null) {
                status.complete(new Status(
                        Optional.empty(),
                        Optional.empty(),
                        -1,
                        0,
                        -1,
                        -1,
                        Epoch.NONE,
                        failure != null,
                        List.of(),
                        new TreeMap<>()));
                return;
            }
            status.complete(new Status(
                    replica.owning(),
                    replica.following(),
                    replica.commitOffset(),
                    replica.start(),
                    replica.end(),
                    replica.durable(),
                    replica.sealedEpoch(),
                    failure != null,
                    replica.learners(),
                    replica.followerDurable()));
        });
        return status;
    }

    private void tick() {
        // on the shard, every tickMs with the shard's other replicas and queues
        if (closed || failure != null) {
            ticker.cancel();
            return;
        }
        handle(new ReplicaEvent.Tick());
        flushLingering();
    }

    private void onShard(Runnable task) {
        try {
            shard.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.debug("event=replica_task_dropped object={} reason=shard_closed", object);
        }
    }

    // ---------------------------------------------------------------------------------------------------- the loop

    /** Handles {@code event} and whatever its effects answer synchronously, each to completion. On the shard. */
    private void handle(ReplicaEvent event) {
        pending.addLast(event);
        if (handling || stalled != null) {
            return; // an effect answered, or an append waits for the log: handled once that is done
        }
        drainPending();
    }

    private void drainPending() {
        handling = true;
        try {
            while (stalled == null && !pending.isEmpty()) {
                handleOne(pending.pollFirst());
            }
        } finally {
            handling = false;
        }
    }

    /**
     * Flow control: the log refused an append with {@code BACKLOG} (its segment writer is far behind). The effects
     * from that append on wait here, in order, with every later event, and are retried every {@value
     * #BACKLOG_RETRY_MS} ms: the replica's picture of the log stays right, and its publishers see late confirms.
     */
    private ArrayDeque<ReplicaEffect> stalled;

    private Optional<Epoch> stalledOwnedBefore = Optional.empty();
    private final java.util.concurrent.atomic.AtomicLong backlogStalls = new java.util.concurrent.atomic.AtomicLong();

    /** How many times an append waited for the log's backlog to clear. Any thread. */
    public long backlogStalls() {
        return backlogStalls.get();
    }

    private static final long BACKLOG_RETRY_MS = 5;

    /** Thrown by {@link #append} when the log says {@code BACKLOG}: {@code remaining} are the records not taken. */
    private static final class Backlogged extends RuntimeException {
        final List<Record> remaining;

        Backlogged(List<Record> remaining) {
            super("backlog", null, false, false);
            this.remaining = remaining;
        }
    }

    /** Runs {@code effects} in order; on a backlog, keeps the rest for {@link #resumeStalled}. */
    private void executeAll(List<ReplicaEffect> effects, Optional<Epoch> ownedBefore) {
        for (int i = 0; i < effects.size(); i++) {
            try {
                execute(effects.get(i));
            } catch (Backlogged backlogged) {
                backlogStalls.incrementAndGet();
                stalled = new ArrayDeque<>();
                stalled.add(new ReplicaEffect.Append(backlogged.remaining));
                stalled.addAll(effects.subList(i + 1, effects.size()));
                stalledOwnedBefore = ownedBefore;
                scheduleStalledRetry();
                return;
            }
            if (failure != null) {
                return; // the replica's picture of the log is wrong now: nothing after a failed effect
            }
        }
        if (ownedBefore.isPresent() && !ownedBefore.equals(replica.ownedEpoch())) {
            refuseOutstanding("owner of epoch " + ownedBefore.get() + " no longer");
        }
    }

    private void scheduleStalledRetry() {
        try {
            shard.schedule(this::resumeStalled, BACKLOG_RETRY_MS);
        } catch (RejectedExecutionException e) {
            LOG.debug("event=replica_retry_dropped object={} reason=shard_closed", object);
        }
    }

    private void resumeStalled() {
        if (stalled == null) {
            return;
        }
        if (closed || failure != null) {
            stalled = null;
            drainPending(); // refuses what waits
            return;
        }
        List<ReplicaEffect> effects = List.copyOf(stalled);
        stalled = null;
        handling = true;
        try {
            executeAll(effects, stalledOwnedBefore);
        } finally {
            handling = false;
        }
        if (stalled == null) {
            drainPending();
        }
    }

    private void handleOne(ReplicaEvent event) {
        if (closed || failure != null || replica == null) {
            if (event instanceof ReplicaEvent.PublishAdmitted publish) {
                listener.refused(publish.id(), closed || replica == null ? "replica host closed" : failureReason());
            }
            return;
        }
        if (event instanceof ReplicaEvent.PublishAdmitted publish) {
            outstanding.add(publish.id());
        }
        Optional<Epoch> ownedBefore = replica.ownedEpoch();
        // only a durability report starts an owner (its epoch start durable): the others need no look
        boolean startedBefore = !(event instanceof ReplicaEvent.AppendDurable)
                || replica.owning().isPresent();
        Optional<Epoch> followedBefore = event instanceof ReplicaEvent.Received ? replica.following() : null;
        executeAll(replica.onEvent(event, context.clockMs().getAsLong()), ownedBefore);
        if (!startedBefore && replica != null) {
            // from now on publishes are admitted (with replica_assignment: a recovery's timeline in the logs)
            replica.owning().ifPresent(epoch -> LOG.info("event=owner_started object={} epoch={}", object, epoch));
        }
        if (replica != null
                && (event instanceof ReplicaEvent.Assigned
                        || event instanceof ReplicaEvent.SealRequested
                        || event instanceof ReplicaEvent.InstallRequested
                        || (followedBefore != null && !followedBefore.equals(replica.following())))) {
            listener.rolesMayHaveChanged();
        }
    }

    private void execute(ReplicaEffect effect) {
        try {
            switch (effect) {
                case ReplicaEffect.Append append -> append(append.records());
                case ReplicaEffect.Truncate truncate -> {
                    log.truncateAfter(truncate.from() - 1);
                    recent.truncateFrom(truncate.from());
                }
                case ReplicaEffect.Flush flush -> pending.addLast(new ReplicaEvent.AppendDurable(log.durableOffset()));
                case ReplicaEffect.PersistSeal seal -> persistSeal(seal.epoch());
                case ReplicaEffect.Discard discard -> discard(discard.below());
                case ReplicaEffect.Reseed reseed -> {
                    recent.clear();
                    log.installSnapshot(reseed.start() - 1, storageHistory(reseed.history()), NO_SNAPSHOT_DATA);
                }
                case ReplicaEffect.ReadLog read ->
                    pending.addLast(
                            new ReplicaEvent.LogRead(read.purpose(), read.peer(), read(read.from(), read.to())));
                case ReplicaEffect.Send send -> send(send.to(), send.message());
                case ReplicaEffect.ReplySealed sealed -> {
                    // with recovery_request_received: how long this broker took over its part of a recovery
                    LOG.info(
                            "event=recovery_reply object={} sealed={} log_end={}",
                            object,
                            sealed.epoch(),
                            sealed.reply().logEnd());
                    replies.sealed(sealed.controller(), object, sealed.epoch(), sealed.reply());
                }
                case ReplicaEffect.ReplyInstalled installed -> {
                    LOG.info("event=recovery_reply object={} installed={}", object, installed.epoch());
                    replies.installed(installed.controller(), object, installed.epoch(), context.self());
                }
                case ReplicaEffect.ReplyDropped dropped -> {
                    LOG.info(
                            "event=recovery_reply object={} dropped={} epoch={}",
                            object,
                            dropped.follower(),
                            dropped.epoch());
                    replies.dropped(dropped.controller(), object, dropped.epoch(), context.self(), dropped.follower());
                }
                case ReplicaEffect.Confirm confirm -> {
                    outstanding.remove(confirm.id());
                    listener.confirmed(confirm.id(), confirm.offset());
                }
                case ReplicaEffect.Refuse refuse -> {
                    outstanding.remove(refuse.id());
                    listener.refused(refuse.id(), refuse.reason());
                }
                case ReplicaEffect.Deliverable deliverable ->
                    listener.deliverable(deliverable.epoch(), deliverable.upTo());
            }
        } catch (Backlogged backlogged) {
            throw backlogged;
        } catch (IOException | RuntimeException e) {
            fail(e);
        }
    }

    private void append(List<Record> records) throws StorageException {
        long now = context.clockMs().getAsLong();
        // only an owner reads its newest records back (feeding followers, delivering); a follower keeping them would
        // only hold them across young collections, which then copy them
        boolean owning = replica.ownedEpoch().isPresent();
        if (!owning && recent.size() > 0) {
            recent.clear();
        }
        for (int i = 0; i < records.size(); i++) {
            Record record = records.get(i);
            long epoch = record.epoch().value();
            // the replica streams and admits only above its fence, which is the log's sealed epoch: a record at or
            // below it is an install copying the sealed epochs up to the recovery point
            AppendOutcome outcome = epoch <= log.sealedEpoch()
                    ? log.appendCopy(
                            record.offset(),
                            epoch,
                            ReplicatedRecords.type(record),
                            now,
                            ReplicatedRecords.payload(record))
                    : log.appendAt(
                            record.offset(),
                            epoch,
                            ReplicatedRecords.type(record),
                            now,
                            ReplicatedRecords.payload(record));
            switch (outcome) {
                case AppendOutcome.Appended appended -> {
                    if (owning) {
                        recent.appended(record);
                    }
                }
                case AppendOutcome.Rejected rejected
                when rejected.reason() == AppendOutcome.Reason.BACKLOG ->
                    throw new Backlogged(List.copyOf(records.subList(i, records.size())));
                case AppendOutcome.Rejected rejected ->
                    throw new StorageException("append of " + record.offset() + " refused: " + rejected.reason());
                case AppendOutcome.Failed failed ->
                    throw new StorageException("append of " + record.offset() + " failed", failed.cause());
            }
        }
    }

    private void persistSeal(Epoch epoch) {
        log.seal(epoch.value())
                .whenComplete((result, error) -> onShard(() -> {
                    if (error != null) {
                        fail(error);
                        return;
                    }
                    // the seal's force made everything before it durable: tell the replica first, so it replies with it
                    handle(new ReplicaEvent.AppendDurable(log.durableOffset()));
                    handle(new ReplicaEvent.SealPersisted(epoch));
                }));
    }

    private void discard(long below) {
        log.discardBefore(below).whenComplete((start, error) -> {
            if (error != null) {
                // nothing lost: the segments stay until the next discard; the replica reads only above its start
                LOG.warn("event=replica_discard_failed object={} below={} cause={}", object, below, error.toString());
            }
        });
    }

    /**
     * Records {@code from..to}; fewer when the log no longer holds them (discarded meanwhile) or past {@link
     * #READ_LIMIT_BYTES}: the replica copes with both.
     */
    private List<Record> read(long from, long to) throws IOException {
        if (from < log.startOffset()) {
            return new ArrayList<>();
        }
        return collect(from, to, READ_LIMIT_BYTES);
    }

    /**
     * The bytes to ask storage for when {@code count} records are wanted: about what they take (storage reads and
     * checks every record its budget covers, so a megabyte read for a few records is mostly waste), one byte (exactly
     * one record) for short ranges, {@link #READ_BYTES} at most.
     */
    private int readBudget(long count) {
        if (count < SMALL_READ_RECORDS) {
            return 1;
        }
        return (int) Math.min(READ_BYTES, count * (recent.averageBytes() + RECORD_FRAME_SLACK));
    }

    /**
     * Records {@code from..to} of the log, decoded, stopping before the record that would take their sizes past
     * {@code limitBytes} (at least one record). The newest come from {@link #recent}; older ones from storage, record
     * by record for short ranges (a delivery must not copy a megabyte of the log behind it). Fewer when the log holds
     * fewer. On the shard; {@code from} is at or above the log's start.
     */
    private List<Record> collect(long from, long to, long limitBytes) throws IOException {
        List<Record> records = new ArrayList<>();
        long last = Math.min(to, log.lastOffset());
        long next = from;
        long bytes = 0;
        while (next <= last) {
            Record held = recent.get(next);
            if (held != null) {
                bytes += held.size();
                if (bytes > limitBytes && !records.isEmpty()) {
                    return records;
                }
                records.add(held);
                next++;
                continue;
            }
            List<LogRecord> stored = log.read(next, readBudget(last - next + 1));
            if (stored.isEmpty()) {
                break;
            }
            for (LogRecord one : stored) {
                if (one.offset() > last) {
                    return records;
                }
                Record record = ReplicatedRecords.decode(one);
                bytes += record.size();
                if (bytes > limitBytes && !records.isEmpty()) {
                    return records;
                }
                records.add(record);
                next = one.offset() + 1;
            }
        }
        return records;
    }

    /**
     * Sends {@code message} to {@code to}, holding Replicates back until the shard is idle ({@link Shard#whenIdle}) so
     * that the records of many publishes go out in one message: a Replicate that continues the one held for the same
     * peer (same epoch, no truncation, the next offsets, within {@link #BATCH_RECORDS} and {@link #READ_LIMIT_BYTES})
     * joins it, taking its later stamp, which is what the follower would have echoed had they gone one by one. Any
     * other message to that peer first sends what is held, so the peer sees every message in the order the replica
     * sent it.
     */
    private void send(NodeId to, PeerMessage message) {
        OutgoingRecords held = outgoing.get(to);
        if (message instanceof Replicate replicate) {
            if (held == null || !held.join(replicate)) {
                if (held != null) {
                    transmit(to, held.message());
                }
                outgoing.put(to, new OutgoingRecords(replicate));
            }
            if (!flushRegistered) {
                flushRegistered = true;
                shard.whenIdle(this::flushOutgoing);
            }
            return;
        }
        if (held != null) {
            outgoing.remove(to);
            transmit(to, held.message());
        }
        transmit(to, message);
    }

    /**
     * At the shard's idle point: sends what is held, except a batch of acknowledgements alone ({@link
     * OutgoingRecords#lingers}), which waits for the next publish to that peer to join it, or for the replica's tick
     * ({@link #flushLingering}). A consumer acknowledges about as often as publishers publish, and its Settle records
     * going out on their own doubled the Replicates, the followers' journal appends and their progress replies; no
     * client waits for a Settle to be replicated, and the next message's records carry it at no cost to that message
     * (it was appended first, so its commit waited for it anyway).
     */
    private void flushOutgoing() {
        flushRegistered = false;
        Iterator<Map.Entry<NodeId, OutgoingRecords>> entries =
                outgoing.entrySet().iterator();
        while (entries.hasNext()) {
            Map.Entry<NodeId, OutgoingRecords> entry = entries.next();
            if (!entry.getValue().lingers()) {
                entries.remove();
                transmit(entry.getKey(), entry.getValue().message());
            }
        }
    }

    /** At the tick: sends everything held, lingering acknowledgements too (held one tick at most). */
    private void flushLingering() {
        for (Map.Entry<NodeId, OutgoingRecords> entry : outgoing.entrySet()) {
            transmit(entry.getKey(), entry.getValue().message());
        }
        outgoing.clear();
    }

    /** A Replicate held back for one peer, growing as the replica streams on. */
    private static final class OutgoingRecords {
        private final Epoch epoch;
        private final long truncateFrom;
        private final List<Record> records;
        private long sentMs;
        private long discardBelow;
        private long bytes;
        /** Every Replicate joined so far carried records, all of them Settles. */
        private boolean settlesOnly;

        OutgoingRecords(Replicate first) {
            this.epoch = first.epoch();
            this.truncateFrom = first.truncateFrom();
            this.records = new ArrayList<>(first.records());
            this.sentMs = first.sentMs();
            this.discardBelow = first.discardBelow();
            for (Record record : records) {
                bytes += record.size();
            }
            this.settlesOnly = settlesOnly(first);
        }

        private static boolean settlesOnly(Replicate replicate) {
            if (replicate.records().isEmpty() || replicate.truncateFrom() >= 0) {
                return false; // a heartbeat, or a truncation: these go at once
            }
            for (Record record : replicate.records()) {
                if (!(record instanceof Record.Settle)) {
                    return false;
                }
            }
            return true;
        }

        /** Whether this batch may wait past the shard's idle point: acknowledgements alone. */
        boolean lingers() {
            return settlesOnly;
        }

        boolean join(Replicate next) {
            if (!next.epoch().equals(epoch) || next.truncateFrom() >= 0) {
                return false;
            }
            long nextBytes = 0;
            for (Record record : next.records()) {
                nextBytes += record.size();
            }
            if (records.size() + next.records().size() > BATCH_RECORDS || bytes + nextBytes > READ_LIMIT_BYTES) {
                return false;
            }
            if (!records.isEmpty()
                    && !next.records().isEmpty()
                    && records.get(records.size() - 1).offset() + 1
                            != next.records().get(0).offset()) {
                return false;
            }
            records.addAll(next.records());
            settlesOnly = settlesOnly && settlesOnly(next);
            bytes += nextBytes;
            sentMs = Math.max(sentMs, next.sentMs());
            discardBelow = Math.max(discardBelow, next.discardBelow());
            return true;
        }

        Replicate message() {
            return new Replicate(epoch, truncateFrom, records, sentMs, discardBelow);
        }
    }

    private void transmit(NodeId to, PeerMessage message) {
        try {
            if (!sender.send(to, new Replication(object, message))) {
                LOG.debug("event=replication_send_dropped object={} to={} reason=no_link", object, to);
            }
        } catch (IllegalArgumentException e) {
            // too large for a frame (reads are bounded by READ_LIMIT_BYTES, so only a record near the frame limit):
            // the message is lost, as on a link that went down; the state machine's timers try again
            LOG.warn("event=replication_send_refused object={} to={} cause={}", object, to, e.getMessage());
        }
    }

    // ---------------------------------------------------------------------------------------------------- failure

    private void fail(Throwable cause) {
        // on the shard
        if (failure != null || closed) {
            return;
        }
        failure = cause;
        pending.clear();
        recent.clear();
        LOG.error("event=replica_storage_failed object={} node={} cause={}", object, context.self(), cause.toString());
        refuseOutstanding(failureReason());
        listener.failed(cause);
    }

    private String failureReason() {
        return "storage failed: " + failure;
    }

    private void refuseOutstanding(String reason) {
        if (outstanding.isEmpty()) {
            return;
        }
        List<PublishId> refused = new ArrayList<>(outstanding);
        outstanding.clear();
        for (PublishId id : refused) {
            listener.refused(id, reason);
        }
    }

    /** Hears the journal: once per batch holding records of this log, on the store's completion thread. */
    private final class Durability implements DurabilityListener {
        @Override
        public void durable(long offset) {
            if (durableScheduled.compareAndSet(false, true)) {
                onShard(ReplicaHost.this::reportDurable);
            }
        }

        @Override
        public void failed(StorageException cause) {
            onShard(() -> fail(cause));
        }
    }

    private void reportDurable() {
        // on the shard
        durableScheduled.set(false);
        if (log != null) {
            handle(new ReplicaEvent.AppendDurable(log.durableOffset()));
        }
    }

    // ---------------------------------------------------------------------------------------------------- histories

    /** Storage's history as the replica's. Two epochs starting at one offset (never written so): the later one wins. */
    static EpochHistory history(io.ganglion.storage.EpochHistory stored) {
        EpochHistory history = EpochHistory.EMPTY;
        List<io.ganglion.storage.EpochHistory.Entry> entries = stored.entries();
        for (int i = 0; i < entries.size(); i++) {
            io.ganglion.storage.EpochHistory.Entry entry = entries.get(i);
            boolean shadowed = i + 1 < entries.size() && entries.get(i + 1).firstOffset() == entry.firstOffset();
            if (!shadowed) {
                history = history.append(Epoch.of(entry.epoch()), entry.firstOffset());
            }
        }
        return history;
    }

    static io.ganglion.storage.EpochHistory storageHistory(EpochHistory history) {
        List<io.ganglion.storage.EpochHistory.Entry> entries = new ArrayList<>();
        for (long[] entry : history.entries()) {
            entries.add(new io.ganglion.storage.EpochHistory.Entry(entry[0], entry[1]));
        }
        return io.ganglion.storage.EpochHistory.of(entries);
    }

    private static IllegalArgumentException ownEvent(ReplicaEvent event) {
        return new IllegalArgumentException(
                event.getClass().getSimpleName() + " comes from the host's own storage and timer, not from outside");
    }

    @Override
    public String toString() {
        return "ReplicaHost{" + object + "@" + context.self() + " shard=" + shard.index() + "}";
    }
}
