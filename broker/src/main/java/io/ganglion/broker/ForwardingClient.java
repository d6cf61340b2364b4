package io.ganglion.broker;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.broker.PublishLane.Forwarded;
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
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.LongFunction;
import org.agrona.collections.LongHashSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forwarding side of the remote-queue protocol ({@link RemoteQueues}): this broker sending publishes, consumers,
 * gets, settlements and calls to the broker that serves the queue (its home, or a replicated queue's owner), and
 * re-sending a replicated queue's publishes to its next owner when the owner changes.
 *
 * <p>Implementation notes. Pending publishes and calls wait in maps by sequence and request id; each home has a
 * session of {@link RemoteHandle}s, one per queue, that dies with the link. When the link to a home closes, pending
 * publishes to a queue that is not replicated fail (the client gets a nack: the outcome is unknown), pending calls
 * fail, every consumer on that home is cancelled ({@code basic.cancel}), and later settlements through a dead handle
 * are dropped: the home has already requeued those messages, and an ack meant for the old delivery must not settle the
 * message's next delivery.
 *
 * <p>Ordering: messages of one link arrive in order, so publishes forwarded by one broker reach the home in the order
 * they were sent. A replicated queue's publishes keep their order across a change of owner too, through the queue's
 * {@link PublishLane}: the resender sends waiting publishes in sequence order (the map is sorted), each only once
 * every publish of its queue still in flight went to the same broker. A channel's publishes then reach every owner in
 * the order the client sent them, and a stream or queue keeps that order in its log.
 */
final class ForwardingClient {
    private static final Logger LOG = LoggerFactory.getLogger(ForwardingClient.class);

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

    private final NodeId self;
    private final LongFunction<LocalQueue> localReplicas;
    private final BiPredicate<NodeId, PeerMessage> sender;
    /** How long a forwarded publish waits for its home's answer. */
    private final long publishTimeoutNanos;

    private final AtomicLong ids = new AtomicLong();
    /** Undecided forwarded publishes by sequence, sorted: the resender sends waiting ones in the order they came. */
    private final ConcurrentSkipListMap<Long, Forwarded> publishes = new ConcurrentSkipListMap<>();
    /** Per replicated queue (object id), its {@link PublishLane}. */
    private final Map<Long, PublishLane> lanes = new ConcurrentHashMap<>();

    private final Map<Long, Pending<QueueReply>> calls = new ConcurrentHashMap<>();
    private final Map<Long, RemoteConsumer> consumers = new ConcurrentHashMap<>();
    private final Map<NodeId, Map<Long, RemoteHandle>> sessions = new ConcurrentHashMap<>();

    /** This broker's publisher id in replicated queues' logs: its publishes are (publisher, sequence). */
    private volatile long publisher = ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE;
    /** The active owner of a replicated queue (vhost, name) as this broker's image shows it. */
    private volatile BiFunction<String, String, Optional<NodeId>> ownerOf = (vhost, queue) -> Optional.empty();

    private final ScheduledExecutorService resender = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "ganglion-resend");
        thread.setDaemon(true);
        return thread;
    });
    /** Whether the first answer to a publish of the last re-send round was logged (a failover's timeline). */
    private final AtomicBoolean resentAnswerLogged = new AtomicBoolean(true);
    /** A resend is scheduled {@value #RESEND_SOON_MS} ms from now; set and cleared on the resender's schedule. */
    private final AtomicBoolean resendSoon = new AtomicBoolean();

    private record Pending<T>(NodeId home, CompletableFuture<T> future) {}

    private record RemoteConsumer(RemoteHandle handle, String tag, DeliverySink sink) {}

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

    /**
     * A client of the homes reached through {@code sender}; a publish it forwards fails after {@code
     * publishTimeoutNanos} without an answer.
     */
    ForwardingClient(
            NodeId self,
            LongFunction<LocalQueue> localReplicas,
            long publishTimeoutNanos,
            BiPredicate<NodeId, PeerMessage> sender) {
        this.self = self;
        this.localReplicas = localReplicas;
        this.publishTimeoutNanos = publishTimeoutNanos;
        this.sender = sender;
    }

    /** Starts the resender's round. */
    void startResending() {
        resender.scheduleWithFixedDelay(this::resend, RESEND_EVERY_MS, RESEND_EVERY_MS, TimeUnit.MILLISECONDS);
    }

    /** How re-sends find a replicated queue's owner, and this broker's publisher id (from its incarnation). */
    void replication(BiFunction<String, String, Optional<NodeId>> ownerOf, long publisher) {
        this.ownerOf = ownerOf;
        this.publisher = publisher;
    }

    /** The image changed: publishes waiting for an owner are sent at once if it names one. Any thread. */
    void ownersMayHaveChanged() {
        if (!publishes.isEmpty()) {
            resender.execute(this::resend);
        }
    }

    // ------------------------------------------------------------------------------------------------ publishes

    /**
     * Forwards a publish; the future completes when the home made it durable, exceptionally otherwise. A replicated
     * queue's publish waits in its lane when an earlier one of the queue waits or is in flight elsewhere, or when its
     * owner is not known here yet ({@code home} is this broker); the resender sends it in its turn.
     */
    CompletableFuture<Void> publish(
            NodeId home, String vhost, long queueId, String queue, boolean replicated, ByteBuffer message) {
        long sequence = ids.incrementAndGet();
        Forwarded forwarded = forwarded(home, vhost, queue, queueId, message, replicated);
        CompletableFuture<Void> done = forwarded.future;
        if (replicated) {
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
                RemoteQueues.bytes(message),
                replicated,
                System.nanoTime() + publishTimeoutNanos,
                replicated ? lane(queueId) : new PublishLane());
    }

    private PublishLane lane(long queueId) {
        return lanes.computeIfAbsent(queueId, id -> new PublishLane());
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
     * Whether a client's publish to replicated queue {@code queueId} may go to this broker's own replica now (see
     * {@link PublishLane}); if so it counts as in flight there until {@link #decidedLocally} or {@link #adopt}.
     */
    boolean publishLocallyNow(long queueId) {
        return lane(queueId).sendNow(self);
    }

    /** A publish {@link #publishLocallyNow} let through was decided by this broker's replica. */
    void decidedLocally(long queueId) {
        lane(queueId).decidedInFlight();
    }

    /**
     * Takes over a publish to a replicated queue that this broker's own replica could not decide ({@link QueueMoved}):
     * it is sent, with the same (publisher, sequence), to the queue's next owner like a forwarded publish whose owner
     * died, and the future completes with its outcome there.
     */
    CompletableFuture<Void> adopt(long sequence, String vhost, long queueId, String queue, ByteBuffer message) {
        Forwarded forwarded = forwarded(self, vhost, queue, queueId, message, true);
        publishes.put(sequence, forwarded);
        forwarded.adoptedFromInFlight();
        ownersMayHaveChanged();
        return forwarded.future;
    }

    /**
     * Forgets the idle lanes of queues that are gone ({@code live}: the replicated queues the image holds). A publish
     * still holding a forgotten lane counts on it alone; its queue is deleted.
     */
    void forgetLanesExcept(Set<Long> live) {
        lanes.entrySet()
                .removeIf(entry ->
                        !live.contains(entry.getKey()) && entry.getValue().idle());
    }

    /** How many lanes are kept, for tests. */
    int laneCount() {
        return lanes.size();
    }

    /** The lane of a replicated queue, for tests. */
    PublishLane laneOf(long queueId) {
        return lane(queueId);
    }

    /** Forwarded publishes not yet answered, failed or timed out. */
    int forwardedCount() {
        return publishes.size();
    }

    // -------------------------------------------------------------------------------------------------- re-sends

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
     * forwarded publish whose home did not answer in time. The deadline is checked here, every {@value
     * #RESEND_EVERY_MS} ms, rather than by a timer per publish: {@code orTimeout} would schedule each one on the
     * common pool's delay scheduler and wake that thread to arm and again to cancel it, two context switches a
     * forwarded publish.
     */
    private void resend() {
        try {
            long now = System.nanoTime();
            // each queue's owner looked up once a round: many publishes may be in flight
            Map<Long, Optional<NodeId>> owners = new HashMap<>();
            sendBackToWaiting(owners);
            int resent = 0;
            // a queue one of whose waiting publishes could not go this round: its later ones wait too, in order
            LongHashSet held = new LongHashSet();
            for (Map.Entry<Long, Forwarded> entry : publishes.entrySet()) {
                Forwarded forwarded = entry.getValue();
                if (now - forwarded.deadline >= 0) {
                    timeOut(entry.getKey(), forwarded);
                    continue;
                }
                if (!forwarded.waiting || held.contains(forwarded.queueId)) {
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

    /**
     * Publishes in flight to a broker that no longer owns their queue (dead, frozen or deposed) go back to waiting,
     * all of them before any is sent again: the next owner takes them in order, finding in its log any the old owner
     * committed (same id); a frozen owner would otherwise hold them, and the publishes queued behind them, until the
     * timeout.
     */
    private void sendBackToWaiting(Map<Long, Optional<NodeId>> owners) {
        for (Forwarded forwarded : publishes.values()) {
            if (forwarded.replicated && !forwarded.waiting) {
                Optional<NodeId> owner = owners.computeIfAbsent(
                        forwarded.queueId, id -> ownerOf.apply(forwarded.vhost, forwarded.queue));
                if (owner.isPresent() && !owner.get().equals(forwarded.home)) {
                    forwarded.backToWaiting();
                }
            }
        }
    }

    private void timeOut(long sequence, Forwarded forwarded) {
        if (publishes.remove(sequence, forwarded)) {
            forwarded.decided();
            forwarded.future.completeExceptionally(new TimeoutException("home node '" + forwarded.home + "' of queue '"
                    + forwarded.queue + "' did not answer the publish in time"));
        }
    }

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

    // ------------------------------------------------------------------------------------ consumers, gets, calls

    private RemoteHandle handle(NodeId home, long queueId, String name) {
        return sessions.computeIfAbsent(home, h -> new ConcurrentHashMap<>())
                .computeIfAbsent(queueId, id -> new RemoteHandle(home, id, name));
    }

    private static BrokerFailure homeDown(NodeId home, String queue) {
        return new BrokerFailure(
                ReplyCode.NOT_FOUND,
                "home node '" + home + "' of queue '" + queue + "' is unreachable, the queue is unavailable");
    }

    CompletableFuture<QueueHandle> consume(NodeId home, long queueId, String queue, QueueConsumer consumer) {
        long consumerId = ids.incrementAndGet();
        RemoteHandle handle = handle(home, queueId, queue);
        consumers.put(consumerId, new RemoteConsumer(handle, consumer.tag(), consumer.sink()));
        return call(
                        home,
                        queue,
                        requestId -> new Subscribe(
                                requestId,
                                queueId,
                                consumerId,
                                consumer.tag(),
                                consumer.noAck(),
                                consumer.exclusive(),
                                consumer.prefetch(),
                                consumer.start()))
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
        int op = noAck ? RemoteQueues.OP_GET_NO_ACK : RemoteQueues.OP_GET;
        return call(home, queue, requestId -> new QueueCall(requestId, queueId, op, 0))
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
                            message.header(),
                            Unpooled.wrappedBuffer(message.body()),
                            reply.count()));
                });
    }

    /** Message and consumer counts, a purge or the checks before a delete: see {@link RemoteQueues}'s op codes. */
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
        return reply.orTimeout(RemoteQueues.REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .whenComplete((ignored, failure) -> calls.remove(requestId))
                .thenApply(answer -> {
                    if (answer.replyCode() != 0) {
                        ReplyCode code = ReplyCode.of(answer.replyCode()).orElse(ReplyCode.INTERNAL_ERROR);
                        throw new BrokerFailure(code, answer.text());
                    }
                    return answer;
                });
    }

    // ---------------------------------------------------------------------------------------------------- links

    /** An answer from a home: a publish's outcome, a call's reply, a delivery or a cancel. On a peer link thread. */
    void onMessage(NodeId from, PeerMessage message) {
        switch (message) {
            case PublishToHomeOutcome outcome -> publishDecided(from, outcome);
            case QueueReply reply -> {
                Pending<QueueReply> pending = calls.remove(reply.requestId());
                if (pending != null) {
                    pending.future().complete(reply);
                }
            }
            case Deliver deliver -> deliver(deliver);
            case ConsumerCancelled cancelled -> {
                RemoteConsumer consumer = consumers.remove(cancelled.consumerId());
                if (consumer != null) {
                    consumer.sink().cancelled(consumer.tag());
                }
            }
            default -> LOG.warn("event=peer_message_unexpected from={} message={}", from, message);
        }
    }

    private void publishDecided(NodeId from, PublishToHomeOutcome outcome) {
        Forwarded forwarded = publishes.get(outcome.sequence());
        if (forwarded == null) {
            return;
        }
        if (outcome.replyCode() != 0 && forwarded.replicated) {
            // not its owner (any more, or yet), or the owner lost the role before it committed: its outcome is decided
            // by the next owner, which finds it in its log or appends it
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

    private void deliver(Deliver deliver) {
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
                                decoded.header(),
                                Unpooled.wrappedBuffer(decoded.body()),
                                0));
    }

    /**
     * The link to {@code peer} closed: publishes to its queues that are not replicated and pending calls fail (a
     * replicated queue's publishes wait for its next owner), and its consumers are cancelled.
     */
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
    }

    private boolean send(NodeId to, PeerMessage message) {
        return sender.test(to, message);
    }
}
