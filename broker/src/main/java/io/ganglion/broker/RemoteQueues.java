package io.ganglion.broker;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.broker.peer.PeerLink;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.broker.peer.PeerMessage.CancelConsumer;
import io.ganglion.broker.peer.PeerMessage.ConsumerCancelled;
import io.ganglion.broker.peer.PeerMessage.Deliver;
import io.ganglion.broker.peer.PeerMessage.PublishToHome;
import io.ganglion.broker.peer.PeerMessage.PublishToHomeOutcome;
import io.ganglion.broker.peer.PeerMessage.QueueCall;
import io.ganglion.broker.peer.PeerMessage.QueueReply;
import io.ganglion.broker.peer.PeerMessage.Settle;
import io.ganglion.broker.peer.PeerMessage.Subscribe;
import io.ganglion.coordination.NodeId;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.StreamStart;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Queues whose messages live on another broker of the cluster (their home): publishes, consumers, gets, acks, purges
 * and counts go to the home over the peer link, and the home serves them from its own {@link QueueReplica}.
 *
 * <pre>
 *   client ── AMQP ──> broker B (not home)                           broker H (home of q)
 *     publish          PublishToHome(seq, q, message) ─────────────>   replica.publish ── durable
 *     basic.ack   <──  PublishToHomeOutcome(seq, ok) <──────────────   ┘
 *     consume          Subscribe(req, q, consumer, tag, prefetch) ──>   replica.consume(sink -> Deliver)
 *     deliver     <──  Deliver(consumer, offset, message)  <────────   ┘
 *     ack              Settle(q, offsets, ack) ─────────────────────>   replica.settle
 * </pre>
 *
 * <p>Implementation notes. Both roles live here. As the client (B): pending publishes and calls wait in maps by
 * sequence and request id; each home has a session of {@link RemoteHandle}s, one per queue, that dies with the link.
 * When the link to a home closes, pending publishes fail (the client gets a nack: the outcome is unknown), pending
 * calls fail, every consumer on that home is cancelled ({@code basic.cancel}), and later settlements through a dead
 * handle are dropped: the home has already requeued those messages, and an ack meant for the old delivery must not
 * settle the message's next delivery.
 *
 * <p>As the home (H): each peer's consumers and the offsets delivered to that peer and not yet settled are kept per
 * queue and changed only on the queue's shard. A settlement for an offset not delivered to that peer is ignored. When
 * the link to a peer closes, its consumers are cancelled and its unsettled messages requeued, as for a closed channel.
 *
 * <p>Ordering: messages of one link arrive in order. Publishes forwarded by one broker reach the home in the order
 * they were sent. A replicated queue's publishes keep their order across a change of owner too: each queue has a
 * {@link Lane} that counts its publishes in flight (and to which broker) and waiting to be sent again; a new publish
 * goes straight to the owner only when none waits and every one in flight went to that same owner, else it waits
 * behind them; the resender sends waiting publishes in sequence order (the map is sorted), each only once every
 * publish of its queue still in flight went to the same broker. A channel's publishes then reach every owner in the
 * order the client sent them, and a stream or queue keeps that order in its log.
 */
final class RemoteQueues {
    private static final Logger LOG = LoggerFactory.getLogger(RemoteQueues.class);

    /** How long a forwarded publish or a call waits for the home's answer before it fails. */
    static final long REPLY_TIMEOUT_SECONDS = 30;

    static final int OP_COUNTS = 1;
    static final int OP_PURGE = 2;
    static final int OP_GET = 3;
    static final int OP_GET_NO_ACK = 4;
    static final int OP_DELETE_CHECK = 5;
    /** The owner replica's status of a replicated queue ({@link ReplicaStatus}), as JSON in the reply's message. */
    static final int OP_STATUS = 6;

    static final int FLAG_IF_UNUSED = 1;
    static final int FLAG_IF_EMPTY = 2;

    private final NodeId self;
    private final LongFunction<LocalQueue> localReplicas;
    /** How messages leave for other brokers: the peer link once attached (a test may give another). */
    private volatile java.util.function.BiPredicate<NodeId, PeerMessage> sender = (to, message) -> false;

    // client side
    private final AtomicLong ids = new AtomicLong();
    /** Undecided forwarded publishes by sequence, sorted: the resender sends waiting ones in the order they came. */
    private final java.util.concurrent.ConcurrentSkipListMap<Long, Forwarded> publishes =
            new java.util.concurrent.ConcurrentSkipListMap<>();
    /** Per replicated queue (object id), its {@link Lane}. */
    private final Map<Long, Lane> lanes = new ConcurrentHashMap<>();

    /**
     * The publishes of one replicated queue from this broker not decided yet: in flight (sent to {@code home}, or to
     * this broker's own replica) or waiting to be sent again. Guarded by itself, with the {@code waiting} flags of its
     * publishes.
     */
    static final class Lane {
        private int inFlight;
        private int waiting;
        private NodeId home;

        /** Whether a publish may go to {@code to} now without passing one sent before it; if so it is in flight. */
        synchronized boolean sendNow(NodeId to) {
            if (waiting > 0 || (inFlight > 0 && !to.equals(home))) {
                return false;
            }
            inFlight++;
            home = to;
            return true;
        }

        /** A publish sent to {@code to} by {@link #sendNow} was decided without going through {@link Forwarded}. */
        synchronized void decidedInFlight() {
            inFlight--;
        }

        synchronized int inFlight() {
            return inFlight;
        }

        synchronized boolean idle() {
            return inFlight == 0 && waiting == 0;
        }

        synchronized int waiting() {
            return waiting;
        }
    }

    private Lane lane(long queueId) {
        return lanes.computeIfAbsent(queueId, id -> new Lane());
    }
    /** This broker's publisher id in replicated queues' logs: its publishes are (publisher, sequence). */
    private volatile long publisher =
            java.util.concurrent.ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE;
    /** The active owner of a replicated queue (vhost, name) as this broker's image shows it. */
    private volatile java.util.function.BiFunction<String, String, Optional<NodeId>> ownerOf =
            (vhost, queue) -> Optional.empty();

    private final java.util.concurrent.ScheduledExecutorService resender =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "ganglion-resend");
                thread.setDaemon(true);
                return thread;
            });
    /**
     * How often publishes waiting for a replicated queue's new owner are tried again, besides at once on every new
     * image (a new owner may be in it) and {@value #RESEND_SOON_MS} ms after an owner refused one (it may own the new
     * epoch a moment later: it learns so from the metadata log on its own).
     */
    private static final long RESEND_EVERY_MS = 50;

    private static final long RESEND_SOON_MS = 5;

    /**
     * Quick retries a publish gets after refusals, about 100 ms of them (a new owner takes the role a little after the
     * forwarding broker learns of it); then only the 50 ms round, for an owner that keeps refusing.
     */
    private static final int QUICK_RETRIES = 20;

    /** Whether the first answer to a publish of the last re-send round was logged (a failover's timeline). */
    private final java.util.concurrent.atomic.AtomicBoolean resentAnswerLogged =
            new java.util.concurrent.atomic.AtomicBoolean(true);

    /** A resend is scheduled {@value #RESEND_SOON_MS} ms from now; set and cleared on the resender's schedule. */
    private final java.util.concurrent.atomic.AtomicBoolean resendSoon =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * A publish forwarded to another broker. For a replicated queue it survives the loss of that broker: it is sent
     * again, with the same (publisher, sequence), to the queue's next owner, which finds it in its log or appends it.
     */
    private static final class Forwarded {
        final String vhost;
        final String queue;
        final long queueId;
        final byte[] message;
        final boolean replicated;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        /** {@link System#nanoTime} after which the resender fails it: its home never answered. */
        final long deadline;
        /** Its queue's lane (a lane of its own for a queue that is not replicated, which is never sent again). */
        final Lane lane;

        volatile NodeId home;
        /**
         * Set when it must be sent again (its home died or refused it for now); the resender clears it. Changed only
         * under {@link #lane}, with its counts.
         */
        volatile boolean waiting;

        private boolean decided;
        /** Refusals so far; the first {@link #QUICK_RETRIES} are retried within {@link #RESEND_SOON_MS}. */
        volatile int refusals;
        /** {@link System#nanoTime} of its last re-send, 0 if never re-sent. */
        volatile long resentAt;

        Forwarded(
                NodeId home,
                String vhost,
                String queue,
                long queueId,
                byte[] message,
                boolean replicated,
                long deadline,
                Lane lane) {
            this.deadline = deadline;
            this.lane = lane;
            this.home = home;
            this.vhost = vhost;
            this.queue = queue;
            this.queueId = queueId;
            this.message = message;
            this.replicated = replicated;
        }

        /** Sends it to {@code to} now if that passes no earlier publish of its queue ({@link Lane#sendNow}). */
        boolean sendNow(NodeId to) {
            synchronized (lane) {
                if (lane.sendNow(to)) {
                    home = to;
                    return true;
                }
                waiting = true;
                lane.waiting++;
                return false;
            }
        }

        /** Starts waiting: its queue's owner is not known here yet. */
        void startWaiting() {
            synchronized (lane) {
                waiting = true;
                lane.waiting++;
            }
        }

        /** Starts waiting: adopted from this broker's replica, whose publish was in flight in the lane. */
        void adoptedFromInFlight() {
            synchronized (lane) {
                lane.inFlight--;
                lane.waiting++;
                waiting = true;
            }
        }

        /** In flight until now: it must be sent again (refused, or its home's link closed). */
        void backToWaiting() {
            synchronized (lane) {
                if (!waiting && !decided) {
                    waiting = true;
                    lane.inFlight--;
                    lane.waiting++;
                }
            }
        }

        /**
         * The resender's turn: true (and it is in flight to {@code to}) if it waits and every publish of its queue in
         * flight went to {@code to}; false otherwise, and it keeps waiting.
         */
        boolean resendTo(NodeId to) {
            synchronized (lane) {
                if (!waiting || decided || (lane.inFlight > 0 && !to.equals(lane.home))) {
                    return false;
                }
                waiting = false;
                lane.waiting--;
                lane.inFlight++;
                lane.home = to;
                home = to;
                return true;
            }
        }

        /** Confirmed, failed for good or timed out: it no longer holds its queue's later publishes back. */
        void decided() {
            synchronized (lane) {
                if (decided) {
                    return;
                }
                decided = true;
                if (waiting) {
                    lane.waiting--;
                } else {
                    lane.inFlight--;
                }
            }
        }
    }

    private final Map<Long, Pending<QueueReply>> calls = new ConcurrentHashMap<>();
    private final Map<Long, RemoteConsumer> consumers = new ConcurrentHashMap<>();
    private final Map<NodeId, Map<Long, RemoteHandle>> sessions = new ConcurrentHashMap<>();

    // home side: per peer, per queue; each PeerQueue is touched only on its replica's shard
    private final Map<NodeId, Map<Long, PeerQueue>> served = new ConcurrentHashMap<>();

    private record Pending<T>(NodeId home, CompletableFuture<T> future) {}

    private record RemoteConsumer(RemoteHandle handle, String tag, DeliverySink sink) {}

    /** How long a forwarded publish waits for its home's answer; {@link #REPLY_TIMEOUT_SECONDS} but in tests. */
    private final long publishTimeoutNanos;

    RemoteQueues(NodeId self, LongFunction<LocalQueue> localReplicas) {
        this(self, localReplicas, TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS));
    }

    RemoteQueues(NodeId self, LongFunction<LocalQueue> localReplicas, long publishTimeoutNanos) {
        this.publishTimeoutNanos = publishTimeoutNanos;
        this.self = self;
        this.localReplicas = localReplicas;
    }

    void attach(PeerLink link) {
        attach(link == null ? (to, message) -> false : link::send);
    }

    /** Starts the resender, with {@code sender} taking every message to another broker. */
    void attach(java.util.function.BiPredicate<NodeId, PeerMessage> sender) {
        this.sender = sender;
        resender.scheduleWithFixedDelay(this::resend, RESEND_EVERY_MS, RESEND_EVERY_MS, TimeUnit.MILLISECONDS);
    }

    /** How re-sends find a replicated queue's owner, and this broker's publisher id (from its incarnation). */
    void replication(java.util.function.BiFunction<String, String, Optional<NodeId>> ownerOf, long publisher) {
        this.ownerOf = ownerOf;
        this.publisher = publisher;
    }

    /** The image changed: publishes waiting for an owner are sent at once if it names one. Any thread. */
    void ownersMayHaveChanged() {
        if (!publishes.isEmpty()) {
            resender.execute(this::resend);
        }
    }

    /** One refused or undeliverable publish is waiting again: try again shortly, a few times. Any thread. */
    private void waitAgain(Forwarded forwarded) {
        forwarded.backToWaiting();
        if (forwarded.refusals++ < QUICK_RETRIES && resendSoon.compareAndSet(false, true)) {
            resender.schedule(
                    () -> {
                        resendSoon.set(false);
                        resend();
                    },
                    RESEND_SOON_MS,
                    TimeUnit.MILLISECONDS);
        }
    }

    /**
     * On the resender thread: sends every waiting replicated publish to its queue's current owner, and fails every
     * forwarded publish whose home did not answer in time. (The deadline is checked here, every
     * {@value #RESEND_EVERY_MS} ms, rather than by a timer per publish: on JDK 25 {@code orTimeout} schedules each one
     * on the common pool's delay scheduler and wakes that thread to arm and again to cancel it, two context switches a
     * forwarded publish.)
     */
    private void resend() {
        try {
            long now = System.nanoTime();
            // publishes in flight to a broker that no longer owns their queue (dead, frozen or deposed) go back to
            // waiting, all of them before any is sent again: the next owner takes them in order, finding in its log
            // any the old owner committed (same id); a frozen owner would otherwise hold them, and the publishes
            // queued behind them, until the timeout
            // each queue's owner looked up once a round: many publishes may be in flight
            Map<Long, Optional<NodeId>> owners = new java.util.HashMap<>();
            for (Forwarded forwarded : publishes.values()) {
                if (forwarded.replicated && !forwarded.waiting) {
                    Optional<NodeId> owner = owners.computeIfAbsent(
                            forwarded.queueId, id -> ownerOf.apply(forwarded.vhost, forwarded.queue));
                    if (owner.isPresent() && !owner.get().equals(forwarded.home)) {
                        forwarded.backToWaiting();
                    }
                }
            }
            int resent = 0;
            // a queue one of whose waiting publishes could not go this round: its later ones wait too, in order
            LongHashSet held = new LongHashSet();
            for (Map.Entry<Long, Forwarded> entry : publishes.entrySet()) {
                Forwarded forwarded = entry.getValue();
                if (now - forwarded.deadline >= 0) {
                    if (publishes.remove(entry.getKey(), forwarded)) {
                        forwarded.decided();
                        forwarded.future.completeExceptionally(new TimeoutException("home node '" + forwarded.home
                                + "' of queue '" + forwarded.queue + "' did not answer the publish in time"));
                    }
                    continue;
                }
                if (!forwarded.waiting) {
                    continue;
                }
                if (held.contains(forwarded.queueId)) {
                    continue;
                }
                Optional<NodeId> owner = owners.computeIfAbsent(
                        forwarded.queueId, id -> ownerOf.apply(forwarded.vhost, forwarded.queue));
                if (owner.isEmpty() || !forwarded.resendTo(owner.get())) {
                    // recovering, or an earlier publish of its queue still in flight to another broker: next round
                    held.add(forwarded.queueId);
                    continue;
                }
                forwarded.resentAt = now;
                resent++;
                long sequence = entry.getKey();
                if (owner.get().equals(self)) {
                    resendLocally(sequence, forwarded);
                } else if (!send(
                        owner.get(), new PublishToHome(publisher, sequence, forwarded.queueId, forwarded.message))) {
                    forwarded.backToWaiting();
                    held.add(forwarded.queueId);
                }
            }
            if (resent > 0) {
                resentAnswerLogged.set(false);
                LOG.info("event=publishes_resent count={}", resent);
            }
        } catch (RuntimeException e) {
            LOG.error("event=resend_failed", e);
        }
    }

    /** A queue on another broker as a channel sees it: dead once the link it was reached through closed. */
    static final class RemoteHandle implements QueueHandle {
        final NodeId home;
        final long queueId;
        private final String name;
        volatile boolean alive = true;

        RemoteHandle(NodeId home, long queueId, String name) {
            this.home = home;
            this.queueId = queueId;
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }
    }

    // ------------------------------------------------------------------------------------------------- client side

    private RemoteHandle handle(NodeId home, long queueId, String name) {
        return sessions.computeIfAbsent(home, h -> new ConcurrentHashMap<>())
                .computeIfAbsent(queueId, id -> new RemoteHandle(home, id, name));
    }

    private static BrokerFailure homeDown(NodeId home, String queue) {
        return new BrokerFailure(
                ReplyCode.NOT_FOUND,
                "home node '" + home + "' of queue '" + queue + "' is unreachable, the queue is unavailable");
    }

    /** Forwards a publish; the future completes when the home made it durable, exceptionally otherwise. */
    /** This broker became the queue's owner: the publish goes to its own replica, with the same id. */
    private void resendLocally(long sequence, Forwarded forwarded) {
        LocalQueue queue = localReplicas.apply(forwarded.queueId);
        if (queue == null) {
            forwarded.backToWaiting();
            return;
        }
        CompletableFuture<Void> local = new CompletableFuture<>();
        local.whenComplete((ignored, failure) -> {
            if (failure == null) {
                publishes.remove(sequence);
                forwarded.decided();
                forwarded.future.complete(null);
            } else {
                waitAgain(forwarded);
            }
        });
        long id = publisher;
        queue.shard().execute(() -> queue.publish(ByteBuffer.wrap(forwarded.message), local, id, sequence));
    }

    /** A sequence for a client's publish to a replicated queue this broker owns: its id is (publisher, sequence). */
    long nextSequence() {
        return ids.incrementAndGet();
    }

    /** This broker's publisher id in replicated queues' logs. */
    long publisherId() {
        return publisher;
    }

    /**
     * Takes over a publish to a replicated queue that this broker's own replica could not decide ({@link QueueMoved}):
     * it is sent, with the same (publisher, sequence), to the queue's next owner like a forwarded publish whose owner
     * died, and {@code done} completes with its outcome there.
     */
    CompletableFuture<Void> adopt(long sequence, String vhost, long queueId, String queue, ByteBuffer message) {
        Forwarded forwarded = forwarded(self, vhost, queue, queueId, message, true);
        publishes.put(sequence, forwarded);
        forwarded.adoptedFromInFlight();
        ownersMayHaveChanged();
        return forwarded.future;
    }

    /**
     * Whether a client's publish to replicated queue {@code queueId} may go to this broker's own replica now (see
     * {@link Lane}); if so it counts as in flight there until {@link #decidedLocally} or {@link #adopt}.
     */
    boolean publishLocallyNow(long queueId) {
        return lane(queueId).sendNow(self);
    }

    /** A publish {@link #publishLocallyNow} let through was decided by this broker's replica. */
    void decidedLocally(long queueId) {
        lane(queueId).decidedInFlight();
    }

    /**
     * Forgets the idle lanes of queues that are gone ({@code live}: the replicated queues the image holds). A publish
     * still holding a forgotten lane counts on it alone; its queue is deleted.
     */
    void forgetLanesExcept(java.util.Set<Long> live) {
        lanes.entrySet()
                .removeIf(entry ->
                        !live.contains(entry.getKey()) && entry.getValue().idle());
    }

    /** How many lanes are kept, for tests. */
    int laneCount() {
        return lanes.size();
    }

    /** The lane of a replicated queue, for tests. */
    Lane laneOf(long queueId) {
        return lane(queueId);
    }

    /**
     * A publish to forward. A home that never answers (stuck, or a message lost with a link that broke and came back)
     * must not leave the publisher waiting for ever: after the timeout the resender fails it (the client's publish is
     * nacked, its outcome unknown) and forgets it.
     */
    private Forwarded forwarded(
            NodeId home, String vhost, String queue, long queueId, ByteBuffer message, boolean replicated) {
        return new Forwarded(
                home,
                vhost,
                queue,
                queueId,
                bytes(message),
                replicated,
                System.nanoTime() + publishTimeoutNanos,
                replicated ? lane(queueId) : new Lane());
    }

    /** Forwarded publishes not yet answered, failed or timed out. */
    int forwardedCount() {
        return publishes.size();
    }

    CompletableFuture<Void> publish(
            NodeId home, String vhost, long queueId, String queue, boolean replicated, ByteBuffer message) {
        long sequence = ids.incrementAndGet();
        Forwarded forwarded = forwarded(home, vhost, queue, queueId, message, replicated);
        CompletableFuture<Void> done = forwarded.future;
        if (replicated) {
            // the owner not known here yet (recovering, or its replica not open), or an earlier publish of the queue
            // waiting or in flight elsewhere: it waits, and the resender sends it in its turn
            boolean now = !home.equals(self) && forwarded.sendNow(home);
            if (home.equals(self)) {
                forwarded.startWaiting();
            }
            publishes.put(sequence, forwarded);
            if (now && !send(home, new PublishToHome(publisher, sequence, queueId, forwarded.message))) {
                forwarded.backToWaiting(); // its owner may be moving: the resender tries the next one
            }
            return done;
        }
        publishes.put(sequence, forwarded);
        if (home.equals(self) || !send(home, new PublishToHome(publisher, sequence, queueId, forwarded.message))) {
            publishes.remove(sequence);
            done.completeExceptionally(homeDown(home, queue));
        }
        return done;
    }

    CompletableFuture<QueueHandle> consume(
            NodeId home,
            long queueId,
            String queue,
            String tag,
            boolean noAck,
            boolean exclusive,
            int prefetch,
            StreamStart start,
            DeliverySink sink) {
        long consumerId = ids.incrementAndGet();
        RemoteHandle handle = handle(home, queueId, queue);
        consumers.put(consumerId, new RemoteConsumer(handle, tag, sink));
        return call(
                        home,
                        queue,
                        requestId ->
                                new Subscribe(requestId, queueId, consumerId, tag, noAck, exclusive, prefetch, start))
                .handle((reply, failure) -> {
                    if (failure != null) {
                        consumers.remove(consumerId);
                        throw failure instanceof RuntimeException r ? r : new IllegalStateException(failure);
                    }
                    return (QueueHandle) handle;
                })
                .toCompletableFuture();
    }

    void cancel(RemoteHandle handle, String tag) {
        consumers.entrySet().removeIf(entry -> {
            RemoteConsumer consumer = entry.getValue();
            if (consumer.handle() == handle && consumer.tag().equals(tag)) {
                send(handle.home, new CancelConsumer(handle.queueId, entry.getKey()));
                return true;
            }
            return false;
        });
    }

    void settle(RemoteHandle handle, long[] offsets, Settlement settlement) {
        if (!handle.alive) {
            return; // the home requeued these when the link closed
        }
        List<Long> list = new ArrayList<>(offsets.length);
        for (long offset : offsets) {
            list.add(offset);
        }
        send(handle.home, new Settle(handle.queueId, list, settlement.ordinal()));
    }

    CompletableFuture<Optional<Delivery>> get(NodeId home, long queueId, String queue, boolean noAck) {
        RemoteHandle handle = handle(home, queueId, queue);
        return call(home, queue, requestId -> new QueueCall(requestId, queueId, noAck ? OP_GET_NO_ACK : OP_GET, 0))
                .thenApply(reply -> {
                    if (reply.message().length == 0 && reply.offset() < 0) {
                        return Optional.empty();
                    }
                    MessageRecord.Message message = MessageRecord.decodeMessage(ByteBuffer.wrap(reply.message()));
                    return Optional.of(new Delivery(
                            handle,
                            reply.offset(),
                            reply.redelivered(),
                            message.exchange(),
                            message.routingKey(),
                            message.properties(),
                            Unpooled.wrappedBuffer(message.body()),
                            reply.count()));
                });
    }

    /** Message and consumer counts, a purge or the checks before a delete: see the {@code OP_} codes. */
    CompletableFuture<QueueReply> call(NodeId home, long queueId, String queue, int op, int flags) {
        return call(home, queue, requestId -> new QueueCall(requestId, queueId, op, flags));
    }

    private CompletableFuture<QueueReply> call(NodeId home, String queue, LongFunction<PeerMessage> request) {
        long requestId = ids.incrementAndGet();
        CompletableFuture<QueueReply> reply = new CompletableFuture<>();
        calls.put(requestId, new Pending<>(home, reply));
        if (!send(home, request.apply(requestId))) {
            calls.remove(requestId);
            reply.completeExceptionally(homeDown(home, queue));
        }
        return reply.orTimeout(REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .whenComplete((ignored, failure) -> calls.remove(requestId))
                .thenApply(answer -> {
                    if (answer.replyCode() != 0) {
                        ReplyCode code = ReplyCode.of(answer.replyCode()).orElse(ReplyCode.INTERNAL_ERROR);
                        throw new BrokerFailure(code, answer.text());
                    }
                    return answer;
                });
    }

    private void onClientMessage(NodeId from, PeerMessage message) {
        switch (message) {
            case PublishToHomeOutcome outcome -> {
                Forwarded forwarded = publishes.get(outcome.sequence());
                if (forwarded == null) {
                    return;
                }
                if (outcome.replyCode() != 0 && forwarded.replicated) {
                    // not its owner (any more, or yet), or the owner lost the role before it committed: its outcome
                    // is decided by the next owner, which finds it in its log or appends it
                    waitAgain(forwarded);
                    return;
                }
                publishes.remove(outcome.sequence());
                forwarded.decided();
                if (forwarded.resentAt != 0 && resentAnswerLogged.compareAndSet(false, true)) {
                    LOG.info(
                            "event=resent_publish_answered from={} code={} after_us={} refusals={}",
                            from,
                            outcome.replyCode(),
                            (System.nanoTime() - forwarded.resentAt) / 1000,
                            forwarded.refusals);
                }
                if (outcome.replyCode() == 0) {
                    forwarded.future.complete(null);
                } else {
                    ReplyCode code = ReplyCode.of(outcome.replyCode()).orElse(ReplyCode.INTERNAL_ERROR);
                    forwarded.future.completeExceptionally(new BrokerFailure(code, outcome.text()));
                }
            }
            case QueueReply reply -> {
                Pending<QueueReply> pending = calls.remove(reply.requestId());
                if (pending != null) {
                    pending.future().complete(reply);
                }
            }
            case Deliver deliver -> {
                RemoteConsumer consumer = consumers.get(deliver.consumerId());
                if (consumer == null || !consumer.handle().alive) {
                    return; // cancelled meanwhile: the home requeues it when the cancel or settle arrives
                }
                MessageRecord.Message decoded = MessageRecord.decodeMessage(ByteBuffer.wrap(deliver.message()));
                consumer.sink()
                        .deliver(
                                consumer.tag(),
                                new Delivery(
                                        consumer.handle(),
                                        deliver.offset(),
                                        deliver.redelivered(),
                                        decoded.exchange(),
                                        decoded.routingKey(),
                                        decoded.properties(),
                                        Unpooled.wrappedBuffer(decoded.body()),
                                        0));
            }
            case ConsumerCancelled cancelled -> {
                RemoteConsumer consumer = consumers.remove(cancelled.consumerId());
                if (consumer != null) {
                    consumer.sink().cancelled(consumer.tag());
                }
            }
            default -> LOG.warn("event=peer_message_unexpected from={} message={}", from, message);
        }
    }

    // --------------------------------------------------------------------------------------------------- home side

    /** One peer's use of one local queue. Shard-confined. */
    private static final class PeerQueue {
        final Map<Long, ConsumerKey> consumers = new ConcurrentHashMap<>();
        /**
         * Offsets delivered to the peer's consumers and not settled, each with how many times: a queue delivers an
         * offset to one consumer at a time, but every reader of a stream gets it.
         */
        final Long2LongHashMap unsettled = new Long2LongHashMap(0);

        void delivered(long offset) {
            unsettled.put(offset, unsettled.get(offset) + 1);
        }

        /** Whether {@code offset} was delivered to the peer and not settled; if so, one delivery of it is settled. */
        boolean settled(long offset) {
            long count = unsettled.get(offset);
            if (count == 0) {
                return false;
            }
            if (count == 1) {
                unsettled.remove(offset);
            } else {
                unsettled.put(offset, count - 1);
            }
            return true;
        }

        /** Every delivery not settled, an offset once per delivery; forgets them. */
        long[] takeUnsettled() {
            LongArrayList offsets = new LongArrayList();
            unsettled.forEach((offset, count) -> {
                for (long i = 0; i < count; i++) {
                    offsets.addLong(offset);
                }
            });
            unsettled.clear();
            return offsets.toLongArray();
        }
    }

    private PeerQueue peerQueue(NodeId peer, long queueId) {
        return served.computeIfAbsent(peer, p -> new ConcurrentHashMap<>())
                .computeIfAbsent(queueId, id -> new PeerQueue());
    }

    private void onHomeMessage(NodeId from, PeerMessage message) {
        switch (message) {
            case PublishToHome publish -> {
                LocalQueue replica = localReplicas.apply(publish.queueId());
                if (replica == null) {
                    send(from, new PublishToHomeOutcome(publish.sequence(), ReplyCode.NOT_FOUND.code(), "queue gone"));
                    return;
                }
                CompletableFuture<Void> done = new CompletableFuture<>();
                done.whenComplete((ignored, failure) -> send(
                        from,
                        failure == null
                                ? new PublishToHomeOutcome(publish.sequence(), 0, "")
                                : new PublishToHomeOutcome(
                                        publish.sequence(), replyCode(failure), String.valueOf(failure.getMessage()))));
                ByteBuffer payload = ByteBuffer.wrap(publish.message());
                replica.shard().execute(() -> replica.publish(payload, done, publish.publisher(), publish.sequence()));
            }
            case Subscribe subscribe -> {
                LocalQueue replica = localReplicas.apply(subscribe.queueId());
                if (replica == null) {
                    send(from, notFound(subscribe.requestId()));
                    return;
                }
                replica.shard().execute(() -> subscribe(from, replica, subscribe));
            }
            case CancelConsumer cancel -> {
                LocalQueue replica = localReplicas.apply(cancel.queueId());
                if (replica != null) {
                    replica.shard().execute(() -> {
                        ConsumerKey key =
                                peerQueue(from, cancel.queueId()).consumers.remove(cancel.consumerId());
                        if (key != null) {
                            replica.cancel(key);
                        }
                    });
                }
            }
            case Settle settle -> {
                LocalQueue replica = localReplicas.apply(settle.queueId());
                if (replica != null) {
                    replica.shard().execute(() -> {
                        PeerQueue peerQueue = peerQueue(from, settle.queueId());
                        long[] offsets = settle.offsets().stream()
                                .mapToLong(Long::longValue)
                                .filter(peerQueue::settled)
                                .toArray();
                        if (offsets.length > 0) {
                            replica.settle(offsets, Settlement.values()[settle.settlement()]);
                        }
                    });
                }
            }
            case QueueCall call -> {
                LocalQueue replica = localReplicas.apply(call.queueId());
                if (replica == null) {
                    send(from, notFound(call.requestId()));
                    return;
                }
                if (call.op() == OP_STATUS) {
                    ReplicaStatus.of(replica)
                            .whenComplete((status, failure) -> send(
                                    from,
                                    failure == null
                                            ? new QueueReply(
                                                    call.requestId(),
                                                    0,
                                                    "",
                                                    0,
                                                    0,
                                                    -1,
                                                    false,
                                                    ReplicaStatus.encode(status))
                                            : new QueueReply(
                                                    call.requestId(),
                                                    ReplyCode.INTERNAL_ERROR.code(),
                                                    String.valueOf(failure.getMessage()),
                                                    0,
                                                    0,
                                                    -1,
                                                    false,
                                                    new byte[0])));
                    return;
                }
                replica.shard().execute(() -> send(from, answer(from, replica, call)));
            }
            default -> onClientMessage(from, message);
        }
    }

    // on the replica's shard
    private void subscribe(NodeId from, LocalQueue replica, Subscribe subscribe) {
        PeerQueue peerQueue = peerQueue(from, subscribe.queueId());
        // channel ids of remote consumers are negative and unique on this broker, so tags of different peers and
        // channels never collide
        ConsumerKey key = new ConsumerKey(-ids.incrementAndGet(), subscribe.tag());
        long consumerId = subscribe.consumerId();
        DeliverySink sink = new DeliverySink() {
            @Override
            public void deliver(String consumerTag, Delivery delivery) {
                try {
                    if (!subscribe.noAck()) {
                        peerQueue.delivered(delivery.offset());
                    }
                    ByteBuffer encoded = MessageRecord.encodeMessage(
                            delivery.exchange(), delivery.routingKey(), delivery.properties(), delivery.body());
                    send(from, new Deliver(consumerId, delivery.offset(), delivery.redelivered(), bytes(encoded)));
                } finally {
                    delivery.release();
                }
            }

            @Override
            public void cancelled(String consumerTag) {
                peerQueue.consumers.remove(consumerId);
                send(from, new ConsumerCancelled(consumerId));
            }
        };
        try {
            replica.consume(
                    key,
                    subscribe.tag(),
                    subscribe.noAck(),
                    subscribe.exclusive(),
                    subscribe.prefetch(),
                    subscribe.start(),
                    sink);
            peerQueue.consumers.put(consumerId, key);
            send(from, new QueueReply(subscribe.requestId(), 0, "", 0, 0, -1, false, new byte[0]));
        } catch (AmqpException e) {
            send(
                    from,
                    new QueueReply(
                            subscribe.requestId(),
                            e.replyCode().code(),
                            e.explanation(),
                            0,
                            0,
                            -1,
                            false,
                            new byte[0]));
        }
    }

    // on the replica's shard
    private QueueReply answer(NodeId from, LocalQueue replica, QueueCall call) {
        try {
            return switch (call.op()) {
                case OP_COUNTS -> ok(call, replica.readyCount(), replica.consumerCount());
                case OP_PURGE -> ok(call, replica.purge(), 0);
                case OP_DELETE_CHECK -> {
                    if ((call.flags() & FLAG_IF_UNUSED) != 0 && replica.consumerCount() > 0) {
                        throw new BrokerFailure(ReplyCode.PRECONDITION_FAILED, "queue '" + replica.name() + "' in use");
                    }
                    if ((call.flags() & FLAG_IF_EMPTY) != 0 && replica.readyCount() > 0) {
                        throw new BrokerFailure(
                                ReplyCode.PRECONDITION_FAILED, "queue '" + replica.name() + "' is not empty");
                    }
                    yield ok(call, replica.readyCount(), replica.consumerCount());
                }
                case OP_GET, OP_GET_NO_ACK -> {
                    boolean noAck = call.op() == OP_GET_NO_ACK;
                    Optional<Delivery> got = replica.get(noAck);
                    if (got.isEmpty()) {
                        yield new QueueReply(call.requestId(), 0, "", 0, 0, -1, false, new byte[0]);
                    }
                    Delivery delivery = got.get();
                    try {
                        if (!noAck) {
                            peerQueue(from, call.queueId()).delivered(delivery.offset());
                        }
                        ByteBuffer encoded = MessageRecord.encodeMessage(
                                delivery.exchange(), delivery.routingKey(), delivery.properties(), delivery.body());
                        yield new QueueReply(
                                call.requestId(),
                                0,
                                "",
                                delivery.messageCount(),
                                0,
                                delivery.offset(),
                                delivery.redelivered(),
                                bytes(encoded));
                    } finally {
                        delivery.release();
                    }
                }
                default -> throw new BrokerFailure(ReplyCode.NOT_IMPLEMENTED, "unknown queue operation " + call.op());
            };
        } catch (AmqpException e) {
            return new QueueReply(
                    call.requestId(), e.replyCode().code(), e.explanation(), 0, 0, -1, false, new byte[0]);
        }
    }

    private static QueueReply ok(QueueCall call, long count, long consumers) {
        return new QueueReply(call.requestId(), 0, "", count, consumers, -1, false, new byte[0]);
    }

    private static QueueReply notFound(long requestId) {
        return new QueueReply(
                requestId, ReplyCode.NOT_FOUND.code(), "queue is not on this node", 0, 0, -1, false, new byte[0]);
    }

    private static int replyCode(Throwable failure) {
        Throwable cause = Failures.unwrap(failure);
        return cause instanceof AmqpException a ? a.replyCode().code() : ReplyCode.INTERNAL_ERROR.code();
    }

    // ------------------------------------------------------------------------------------------------------- links

    /** Every message of the remote-queue protocol from {@code from}. On a peer link thread. */
    void onMessage(NodeId from, PeerMessage message) {
        onHomeMessage(from, message);
    }

    /** The link to {@code peer} closed: fail what waited on it, cancel its consumers both ways, requeue. */
    void onDisconnected(NodeId peer) {
        publishes.entrySet().removeIf(entry -> {
            Forwarded forwarded = entry.getValue();
            if (!forwarded.home.equals(peer)) {
                return false;
            }
            if (forwarded.replicated) {
                forwarded.backToWaiting(); // sent again to the queue's next owner
                return false;
            }
            forwarded.future.completeExceptionally(homeDown(peer, forwarded.queue));
            return true;
        });
        calls.entrySet().removeIf(entry -> {
            if (entry.getValue().home().equals(peer)) {
                entry.getValue().future().completeExceptionally(homeDown(peer, "?"));
                return true;
            }
            return false;
        });
        Map<Long, RemoteHandle> handles = sessions.remove(peer);
        if (handles != null) {
            handles.values().forEach(handle -> handle.alive = false);
        }
        consumers.entrySet().removeIf(entry -> {
            RemoteConsumer consumer = entry.getValue();
            if (consumer.handle().home.equals(peer)) {
                consumer.sink().cancelled(consumer.tag());
                return true;
            }
            return false;
        });
        Map<Long, PeerQueue> queues = served.remove(peer);
        if (queues != null) {
            queues.forEach((queueId, peerQueue) -> {
                LocalQueue replica = localReplicas.apply(queueId);
                if (replica != null) {
                    replica.shard().execute(() -> {
                        peerQueue.consumers.values().forEach(replica::cancel);
                        long[] offsets = peerQueue.takeUnsettled();
                        if (offsets.length > 0) {
                            replica.settle(offsets, Settlement.REQUEUE);
                        }
                    });
                }
            });
            LOG.info("event=peer_consumers_dropped peer={} queues={}", peer, queues.size());
        }
    }

    private boolean send(NodeId to, PeerMessage message) {
        return sender.test(to, message);
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
