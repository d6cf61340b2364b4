package io.ganglion.broker.replication;

import io.ganglion.broker.Shard;
import io.ganglion.broker.peer.PeerMessage.Replication;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.replication.PeerMessage;
import io.ganglion.replication.Record;
import io.ganglion.replication.RecoveredLog;
import io.ganglion.replication.Replica;
import io.ganglion.replication.ReplicaEffect;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.replication.ReplicationConfig;
import io.ganglion.storage.DurabilityListener;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
 * <p>The host owns the replica's lifecycle, the events in and the loop that handles them; its parts, in this package:
 * {@link EffectExecutor} carries out each effect, {@link HostLog} is its side of the log (opening, appends, reads),
 * {@link PeerOutbox} sends and batches its messages to peers, {@link OutstandingPublishes} remembers the publishes
 * awaiting an outcome.
 *
 * <p>Effects map to storage as follows: {@code Append} to {@link ReplicaLog#appendAt} at the replica's own offsets
 * (records encoded by {@link ReplicatedRecords}; {@link ReplicaLog#appendCopy} for a record at or below the sealed
 * epoch, which only an install copies, since the replica streams and admits only above its seal), made durable by
 * group commit and reported back as {@code AppendDurable} from the log's {@link DurabilityListener}; {@code
 * Truncate(from)} to {@code truncateAfter(from - 1)}; {@code Flush} to an {@code AppendDurable} of the log's durable
 * offset (a truncate already waited for its force); {@code PersistSeal} to {@link ReplicaLog#seal}, whose forced
 * completion becomes {@code SealPersisted}; {@code Discard} to {@code discardBefore}; {@code Reseed(start, history)} to
 * {@code installSnapshot(start - 1, history, empty)} (everything below {@code start} was settled, so the snapshot holds
 * nothing); {@code ReadLog} to reads answered by {@code LogRead}.
 *
 * <p>Implementation notes.
 *
 * <ul>
 *   <li>Threads. Everything of the host happens on its shard thread: opening, every event, every effect, every
 *       listener and sink callback. The public methods may be called from any thread (a Netty event loop, the
 *       controller, another shard); each hands one task to the shard and returns. The only other thread is the store's
 *       completion thread (or the journal writer), which runs the {@link DurabilityListener} and the seal and discard
 *       futures: they only set {@code durableScheduled} (atomic) and hand a task to the shard. No locks.
 *   <li>Fields. All but {@code durableScheduled}, {@code startRequested}, {@code opened} and {@code backlogStalls}
 *       (thread-safe) belong to the shard thread. {@code replica} and {@code executor} are set by the open task, which
 *       is the first task of the host on its shard, so every later task sees them.
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
    /** How long effects that met a full log backlog wait before they are tried again (see {@link #stalled}). */
    private static final long BACKLOG_RETRY_MS = 5;

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
    private final Shard shard;
    private final ReplicationContext context;
    private final RecoveryReplySink replies;
    private final ReplicaListener listener;
    /** Set by the durability listener when it handed the shard a task to report durability; cleared by that task. */
    private final AtomicBoolean durableScheduled = new AtomicBoolean();

    private final AtomicBoolean startRequested = new AtomicBoolean();
    /** Set by {@link #startAlone}: the open task then gives the replica its own assignment. */
    private volatile boolean alone;
    /** Completed by the open task on the shard. */
    private final CompletableFuture<Void> opened = new CompletableFuture<>();

    private final AtomicLong backlogStalls = new AtomicLong();

    // shard thread only
    private final HostLog log;
    private final PeerOutbox outbox;
    private final OutstandingPublishes outstanding;
    private final ArrayDeque<ReplicaEvent> pending = new ArrayDeque<>();
    private Replica replica;
    private EffectExecutor executor;
    private boolean handling;
    private boolean closed;
    /** The shard beat that ticks the replica, once it runs (on the shard). */
    private Shard.Ticker ticker;

    private Throwable failure;

    /**
     * Flow control: the log refused an append with {@code BACKLOG} (its segment writer is far behind). The effects
     * from that append on wait here, in order, with every later event, and are retried every {@value
     * #BACKLOG_RETRY_MS} ms: the replica's picture of the log stays right, and its publishers see late confirms.
     */
    private ArrayDeque<ReplicaEffect> stalled;

    private Optional<Epoch> stalledOwnedBefore = Optional.empty();

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
        this.shard = Objects.requireNonNull(shard, "shard");
        Objects.requireNonNull(storage, "storage");
        this.context = Objects.requireNonNull(context, "context");
        Objects.requireNonNull(sender, "sender");
        this.replies = Objects.requireNonNull(replies, "replies");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.log = new HostLog(object, storageId, shard, storage);
        this.outbox = new PeerOutbox(object, shard, sender);
        this.outstanding = new OutstandingPublishes(listener);
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
                    if (alone) {
                        ownAlone();
                    }
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

    /**
     * {@link #start()} for the only copy of its object, a classic queue: once open, the replica owns the epoch after the
     * last one its log holds, with no followers and W = 1. No controller assigns it: the one copy is its own recovery
     * point, and each start of the host is a change of owner to the same broker. Any thread; call it instead of {@link
     * #start()}, once.
     */
    public CompletableFuture<Void> startAlone() {
        alone = true;
        return start();
    }

    /** On the shard, right after the open: the assignment of {@link #startAlone}. */
    private void ownAlone() {
        Epoch next = replica.history().lastEpoch().next();
        NodeId self = context.self();
        handle(new ReplicaEvent.Assigned(new Assignment(next, self, List.of(), true), 1, Set.of(self), 0));
    }

    /** On the shard: the log as storage recovered it and the replica over it. */
    private void open() throws IOException {
        // a copy alone never changes owner, so nobody re-sends to another owner: it remembers no publish ids
        ReplicationConfig config = alone ? context.config().withoutPublishIndex() : context.config();
        RecoveredLog recovered = log.open(config.publishIndexCapacity());
        replica = Replica.start(object, context.self(), context.incarnation(), config, recovered);
        executor = new EffectExecutor(
                object, context, replica, log, outbox, replies, outstanding, listener, pending, this::sealForced);
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
                log.clearRecent();
                if (log.isOpen()) {
                    log.durabilityListener(null);
                }
                outstanding.refuseAll("replica host closed");
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
            default -> {
                if (shard.onShardThread() && replica != null) {
                    handle(event); // a publish or settle of the queue on this shard: no second task
                } else {
                    onShard(() -> handle(event));
                }
            }
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
     * epochMillis} ({@link io.ganglion.storage.LogTime#firstOffsetAtOrAfter}); 0 when not open. On the shard.
     *
     * @throws IOException if the log cannot be read
     */
    public long firstOffsetAtOrAfterNow(long epochMillis, long from) throws IOException {
        return log.firstOffsetAtOrAfter(epochMillis, from);
    }

    /**
     * Retention of a stream: the first offset to keep so that this copy's whole segments hold at most {@code maxBytes}
     * and none was appended before {@code appendedBeforeMs} as a whole ({@link
     * io.ganglion.storage.LogTime#retainedStart}: {@link Long#MAX_VALUE} and {@link Long#MIN_VALUE} for
     * no limit); 0 when not open. On the shard.
     *
     * @throws IOException if the log cannot be read
     */
    public long retainedStartNow(long maxBytes, long appendedBeforeMs) throws IOException {
        return log.retainedStart(maxBytes, appendedBeforeMs);
    }

    /**
     * How many epochs' start records lie at offsets {@code from} to {@code to}: a stream counts its messages without
     * them. 0 when not open. On the shard.
     */
    public long epochStartsNow(long from, long to) {
        if (replica == null) {
            return 0;
        }
        long starts = 0;
        for (long[] entry : replica.history().entries()) {
            if (entry[1] >= from && entry[1] <= to) {
                starts++;
            }
        }
        return starts;
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
        return log.readRecords(from, to, limitBytes);
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
        outbox.flushAll();
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

    /** How many times an append waited for the log's backlog to clear. Any thread. */
    public long backlogStalls() {
        return backlogStalls.get();
    }

    private void handleOne(ReplicaEvent event) {
        if (closed || failure != null || replica == null) {
            if (event instanceof ReplicaEvent.PublishAdmitted publish) {
                listener.refused(publish.id(), closed || replica == null ? "replica host closed" : failureReason());
            }
            return;
        }
        if (event instanceof ReplicaEvent.PublishAdmitted publish) {
            outstanding.admitted(publish.id());
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

    /**
     * Runs {@code effects} in order, stopping at the first that fails the host; on a backlog, keeps the rest for
     * {@link #resumeStalled}.
     */
    private void executeAll(List<ReplicaEffect> effects, Optional<Epoch> ownedBefore) {
        for (int i = 0; i < effects.size(); i++) {
            try {
                executor.execute(effects.get(i));
            } catch (HostLog.Backlogged backlogged) {
                backlogStalls.incrementAndGet();
                stalled = new ArrayDeque<>();
                stalled.add(new ReplicaEffect.Append(backlogged.remaining));
                stalled.addAll(effects.subList(i + 1, effects.size()));
                stalledOwnedBefore = ownedBefore;
                scheduleStalledRetry();
                return;
            } catch (IOException | RuntimeException e) {
                fail(e);
            }
            if (failure != null) {
                return; // the replica's picture of the log is wrong now: nothing after a failed effect
            }
        }
        if (ownedBefore.isPresent() && !ownedBefore.equals(replica.ownedEpoch())) {
            outstanding.refuseAll("owner of epoch " + ownedBefore.get() + " no longer");
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

    // ---------------------------------------------------------------------------------------------------- failure

    private void fail(Throwable cause) {
        // on the shard
        if (failure != null || closed) {
            return;
        }
        failure = cause;
        pending.clear();
        log.clearRecent();
        LOG.error("event=replica_storage_failed object={} node={} cause={}", object, context.self(), cause.toString());
        outstanding.refuseAll(failureReason());
        listener.failed(cause);
    }

    private String failureReason() {
        return "storage failed: " + failure;
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
        if (log.isOpen()) {
            handle(new ReplicaEvent.AppendDurable(log.durableOffset()));
        }
    }

    /** A persisted seal was forced, or failed ({@code error}): on the store's completion thread. */
    private void sealForced(Epoch epoch, Throwable error) {
        onShard(() -> {
            if (error != null) {
                fail(error);
                return;
            }
            // the seal's force made everything before it durable: tell the replica first, so it replies with it
            handle(new ReplicaEvent.AppendDurable(log.durableOffset()));
            handle(new ReplicaEvent.SealPersisted(epoch));
        });
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
