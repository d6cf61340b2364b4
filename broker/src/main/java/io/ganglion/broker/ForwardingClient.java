package io.ganglion.broker;

import static io.ganglion.broker.Failures.unwrap;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.Settlement;
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
import io.ganglion.serving.ForwardLanes;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forwarding side of the remote-queue protocol ({@link RemoteQueues}): this broker sending publishes, consumers,
 * gets, settlements and calls to the broker that serves the queue (its home, or a replicated queue's owner), and
 * re-sending a replicated queue's publishes to its next owner when the owner changes.
 *
 * <p>Implementation notes. A replicated queue's publishes from this broker, this broker's own replica's included, go
 * through the shipping {@link ForwardLanes} (the simulator runs the same), one instance per shard, confined to it: a
 * queue's lane lives on the shard its copy here runs on ({@link QueueRegistry#shardOf}, stable per queue), so the own
 * replica's publishes pass their lane in the task that hands them to the replica, with no lock and no extra hop. A
 * publish's sequence names its shard ({@code sequence % shards}), so an answer from the owner finds its lane. A queue
 * that is not replicated has no lanes: its forwarded publishes wait in a map by sequence, fail when the link to their
 * home closes (the client gets a nack: the outcome is unknown) or after the timeout. Each home has a session of {@link
 * RemoteHandle}s, one per queue, that dies with the link: pending calls fail, every consumer on that home is
 * cancelled ({@code basic.cancel}), and later settlements through a dead handle are dropped: the home has already
 * requeued those messages, and an ack meant for the old delivery must not settle the message's next delivery.
 *
 * <p>Ordering: messages of one link arrive in order, so publishes forwarded by one broker reach the home in the order
 * they were sent; a replicated queue's keep their order across a change of owner through their lane, so a channel's
 * publishes reach every owner in the order the client sent them, and a stream or queue keeps that order in its log.
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

    private final NodeId self;
    private final LongFunction<LocalQueue> localReplicas;
    private final LongFunction<Shard> shardOf;
    private final BiPredicate<NodeId, PeerMessage> sender;
    /** How long a forwarded publish waits for its home's answer. */
    private final long publishTimeoutNanos;

    private final AtomicLong ids = new AtomicLong();
    /** Counts publishes: a publish's sequence is this count times the shards, plus its lanes' shard. */
    private final AtomicLong publishCount = new AtomicLong();

    private final List<ShardLanes> lanes;
    private final Map<Shard, ShardLanes> lanesOf = new IdentityHashMap<>();
    /** Forwarded publishes to queues that are not replicated, by sequence, until answered, failed or timed out. */
    private final Map<Long, Plain> plain = new ConcurrentHashMap<>();

    private final Map<Long, Pending<QueueReply>> calls = new ConcurrentHashMap<>();
    private final Map<Long, RemoteConsumer> consumers = new ConcurrentHashMap<>();
    private final Map<NodeId, Map<Long, RemoteHandle>> sessions = new ConcurrentHashMap<>();

    /** This broker's publisher id in replicated queues' logs: its publishes are (publisher, sequence). */
    private volatile long publisher = ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE;
    /** The active owner of a replicated queue (vhost, name) as this broker's image shows it. */
    private volatile BiFunction<String, String, Optional<NodeId>> ownerOf = (vhost, queue) -> Optional.empty();

    private final ScheduledExecutorService timeouts = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "ganglion-forward-timeouts");
        thread.setDaemon(true);
        return thread;
    });

    private record Pending<T>(NodeId home, CompletableFuture<T> future) {}

    private record RemoteConsumer(RemoteHandle handle, String tag, DeliverySink sink) {}

    /** A forwarded publish to a queue that is not replicated: never sent again. */
    private record Plain(NodeId home, String queue, CompletableFuture<Void> future, long deadline) {}

    /** A publish to a replicated queue, as its lane holds it. */
    private static final class Forwarded {
        final String vhost;
        final String queue;
        final long queueId;
        final ByteBuffer message;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        private byte[] bytes;

        Forwarded(String vhost, String queue, long queueId, ByteBuffer message) {
            this.vhost = vhost;
            this.queue = queue;
            this.queueId = queueId;
            this.message = message;
        }

        /** Its message as the peer link sends it, copied once. */
        byte[] bytes() {
            if (bytes == null) {
                bytes = RemoteQueues.bytes(message);
            }
            return bytes;
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

    /**
     * A client of the homes reached through {@code sender}; a replicated queue's lane is on {@code shardOf(queue)}, one
     * of {@code shards}; a publish it forwards fails after {@code publishTimeoutNanos} without an answer.
     */
    ForwardingClient(
            NodeId self,
            LongFunction<LocalQueue> localReplicas,
            LongFunction<Shard> shardOf,
            List<Shard> shards,
            long publishTimeoutNanos,
            BiPredicate<NodeId, PeerMessage> sender) {
        this.self = self;
        this.localReplicas = localReplicas;
        this.shardOf = shardOf;
        this.publishTimeoutNanos = publishTimeoutNanos;
        this.sender = sender;
        List<ShardLanes> made = new ArrayList<>();
        for (Shard shard : shards) {
            ShardLanes one = new ShardLanes(shard, made.size());
            made.add(one);
            lanesOf.put(shard, one);
        }
        this.lanes = List.copyOf(made);
    }

    /** Starts the rounds of re-sends and timeouts. */
    void startResending() {
        for (ShardLanes one : lanes) {
            one.shard.every(RESEND_EVERY_MS, one::round);
        }
        timeouts.scheduleWithFixedDelay(this::timeOutPlain, RESEND_EVERY_MS, RESEND_EVERY_MS, TimeUnit.MILLISECONDS);
    }

    /** How re-sends find a replicated queue's owner, and this broker's publisher id (from its incarnation). */
    void replication(BiFunction<String, String, Optional<NodeId>> ownerOf, long publisher) {
        this.ownerOf = ownerOf;
        this.publisher = publisher;
    }

    /** The image changed: publishes waiting for an owner are sent at once if it names one. Any thread. */
    void ownersMayHaveChanged() {
        onEveryShard(ShardLanes::roundIfAny);
    }

    // ------------------------------------------------------------------------------------------------ publishes

    /**
     * Forwards a publish; the future completes when the home made it durable, exceptionally otherwise. A replicated
     * queue's publish waits in its lane when an earlier one of the queue waits or is in flight elsewhere, or when its
     * owner is not known here yet ({@code home} is this broker); a round sends it in its turn.
     */
    CompletableFuture<Void> publish(
            NodeId home, String vhost, long queueId, String queue, boolean replicated, ByteBuffer message) {
        if (replicated) {
            Forwarded forwarded = new Forwarded(vhost, queue, queueId, message);
            ShardLanes one = lanesOf(queueId);
            long sequence = one.nextSequence();
            Optional<NodeId> owner = home.equals(self) ? Optional.empty() : Optional.of(home);
            one.shard.execute(() -> one.submit(queueId, sequence, forwarded, owner));
            return forwarded.future;
        }
        long sequence = publishCount.incrementAndGet() * lanes.size();
        CompletableFuture<Void> done = new CompletableFuture<>();
        plain.put(sequence, new Plain(home, queue, done, System.nanoTime() + publishTimeoutNanos));
        if (home.equals(self)
                || !send(
                        home,
                        new PublishToHome(
                                publisher, sequence, ForwardLanes.NONE, queueId, RemoteQueues.bytes(message)))) {
            plain.remove(sequence);
            done.completeExceptionally(homeDown(home, queue));
        }
        return done;
    }

    /**
     * A client's publish to a replicated queue this broker owns: handed to its replica on the replica's shard when its
     * lane lets it pass (no earlier publish of the queue from this broker waits or is in flight elsewhere), else
     * behind them in the lane. If the replica cannot decide it ({@link QueueMoved}: the owner role is being taken or
     * was just lost), it goes on to the next owner with the same id instead of a nack.
     */
    CompletableFuture<Void> publishToOwnReplica(
            String vhost, long queueId, String queue, LocalQueue replica, ByteBuffer message) {
        Forwarded forwarded = new Forwarded(vhost, queue, queueId, message);
        ShardLanes one = lanesOf.get(replica.shard());
        long sequence = one.nextSequence();
        long id = publisher;
        one.shard.execute(() -> {
            long after = one.lanes.sendLocally(queueId, sequence, self);
            if (after == ForwardLanes.HELD) {
                one.submit(queueId, sequence, forwarded, Optional.of(self));
                return;
            }
            CompletableFuture<Void> done = new CompletableFuture<>();
            replica.publish(message.duplicate(), done, id, sequence, after);
            done.whenComplete((ignored, failure) -> one.onShard(() -> one.decidedHere(sequence, forwarded, failure)));
        });
        return forwarded.future;
    }

    private ShardLanes lanesOf(long queueId) {
        return lanesOf.get(shardOf.apply(queueId));
    }

    /** Forgets the idle lanes of queues that are gone ({@code live}: the replicated queues the image holds). */
    void forgetLanesExcept(Set<Long> live) {
        onEveryShard(one -> one.lanes.forgetLanesExcept(live));
    }

    /**
     * Runs {@code task} for the lanes of every shard, each on its shard; a shard that stopped (the broker is stopping,
     * and the peer links and the metadata log still call in) is skipped: its lanes go with it.
     */
    private void onEveryShard(Consumer<ShardLanes> task) {
        for (ShardLanes one : lanes) {
            try {
                one.shard.execute(() -> task.accept(one));
            } catch (RejectedExecutionException e) {
                LOG.debug("event=lanes_task_dropped reason=shard_stopped");
            }
        }
    }

    /** How many lanes are kept, for tests: read on each shard. */
    int laneCount() {
        return sumOverShards(one -> one.lanes.laneCount());
    }

    /** Publishes of queue {@code queueId} in flight and waiting in its lane, for tests. */
    int[] laneOf(long queueId) {
        ShardLanes one = lanesOf(queueId);
        return CompletableFuture.supplyAsync(
                        () -> new int[] {one.lanes.inFlight(queueId), one.lanes.waiting(queueId)}, one.shard)
                .join();
    }

    /** Forwarded publishes not yet answered, failed or timed out, for tests. */
    int forwardedCount() {
        return plain.size() + sumOverShards(one -> one.lanes.size());
    }

    private int sumOverShards(ToIntFunction<ShardLanes> count) {
        int total = 0;
        for (ShardLanes one : lanes) {
            total += CompletableFuture.supplyAsync(() -> count.applyAsInt(one), one.shard)
                    .join();
        }
        return total;
    }

    private void timeOutPlain() {
        long now = System.nanoTime();
        plain.entrySet().removeIf(entry -> {
            Plain pending = entry.getValue();
            if (now - pending.deadline() < 0) {
                return false;
            }
            pending.future().completeExceptionally(timedOut(pending.home(), pending.queue()));
            return true;
        });
    }

    private static TimeoutException timedOut(NodeId home, String queue) {
        return new TimeoutException(
                "home node '" + home + "' of queue '" + queue + "' did not answer the publish in time");
    }

    /**
     * The lanes of one shard, confined to it: the shipping {@link ForwardLanes} with the runtime it asks for (the peer
     * link, this broker's replicas, the shard's timer).
     */
    private final class ShardLanes implements ForwardLanes.Effects<Forwarded> {
        final Shard shard;
        final int position;
        final ForwardLanes<Forwarded> lanes;
        /** The names of the queues with a lane here, for their owners' look-up. */
        private final Map<Long, Forwarded> named = new HashMap<>();

        private boolean soon;
        /** Whether the first answer to a publish of the last round that re-sent any was logged (a failover's timeline). */
        private boolean resentAnswerLogged = true;

        ShardLanes(Shard shard, int position) {
            this.shard = shard;
            this.position = position;
            this.lanes = new ForwardLanes<>(this, TimeUnit.NANOSECONDS.toMillis(publishTimeoutNanos));
        }

        @Override
        public long nextSequence() {
            return publishCount.incrementAndGet() * ForwardingClient.this.lanes.size() + position;
        }

        void onShard(Runnable task) {
            if (shard.onShardThread()) {
                task.run();
            } else {
                shard.execute(task);
            }
        }

        void submit(long queueId, long sequence, Forwarded forwarded, Optional<NodeId> owner) {
            named.put(queueId, forwarded);
            lanes.submit(queueId, sequence, forwarded, owner, nowMs());
        }

        /** This broker's replica decided a publish its lane let through, or gave it back. */
        void decidedHere(long sequence, Forwarded forwarded, Throwable failure) {
            if (failure != null && unwrap(failure) instanceof QueueMoved) {
                named.put(forwarded.queueId, forwarded);
                lanes.adopt(forwarded.queueId, sequence, forwarded, nowMs());
                return;
            }
            lanes.decidedLocally(forwarded.queueId);
            if (failure == null) {
                forwarded.future.complete(null);
            } else {
                forwarded.future.completeExceptionally(failure);
            }
        }

        void answered(NodeId from, PublishToHomeOutcome outcome) {
            long sequence = outcome.sequence();
            if (outcome.replyCode() == 0 && lanes.wasResent(sequence) && !resentAnswerLogged) {
                resentAnswerLogged = true;
                LOG.info(
                        "event=resent_publish_answered from={} code={} refusals={}",
                        from,
                        outcome.replyCode(),
                        lanes.refusals(sequence));
            }
            if (outcome.replyCode() == PublishRejected.OUTCOME_CODE) {
                lanes.rejected(sequence)
                        .ifPresent(forwarded ->
                                forwarded.future.completeExceptionally(new PublishRejected(outcome.text())));
                return;
            }
            // any refusal (not its owner any more, or yet; the owner lost the role before it committed) leaves the
            // outcome to the next owner, which finds it in its log or appends it
            answer(sequence, outcome.replyCode() != 0);
        }

        /** The owner answered a publish: confirmed, or refused (it waits in its lane for the next owner). */
        private void answer(long sequence, boolean refused) {
            lanes.answered(sequence, refused).ifPresent(forwarded -> forwarded.future.complete(null));
        }

        void roundIfAny() {
            if (lanes.size() > 0) {
                round();
            }
        }

        void round() {
            try {
                ForwardLanes.Round<Forwarded> round = lanes.resend(this::owner, nowMs());
                for (Forwarded failed : round.timedOut()) {
                    failed.future.completeExceptionally(
                            timedOut(owner(failed.queueId).orElse(null), failed.queue));
                }
                if (round.resent() > 0) {
                    resentAnswerLogged = false;
                    LOG.info("event=publishes_resent count={} shard={}", round.resent(), shard.index());
                }
                if (lanes.size() == 0) {
                    named.clear();
                }
            } catch (RuntimeException e) {
                LOG.error("event=resend_failed", e);
            }
        }

        private Optional<NodeId> owner(long queueId) {
            Forwarded any = named.get(queueId);
            return any == null ? Optional.empty() : ownerOf.apply(any.vhost, any.queue);
        }

        @Override
        public boolean send(NodeId owner, long sequence, long after, Forwarded forwarded) {
            if (!owner.equals(self)) {
                return ForwardingClient.this.send(
                        owner, new PublishToHome(publisher, sequence, after, forwarded.queueId, forwarded.bytes()));
            }
            // this broker became the queue's owner: the publish goes to its own replica, with the same id
            LocalQueue queue = localReplicas.apply(forwarded.queueId);
            if (queue == null) {
                return false;
            }
            CompletableFuture<Void> local = new CompletableFuture<>();
            local.whenComplete((ignored, failure) -> onShard(() -> answer(sequence, failure != null)));
            long id = publisher;
            queue.shard().execute(() -> queue.publish(forwarded.message.duplicate(), local, id, sequence, after));
            return true;
        }

        @Override
        public void resendSoon() {
            if (!soon) {
                soon = true;
                shard.schedule(
                        () -> {
                            soon = false;
                            round();
                        },
                        RESEND_SOON_MS);
            }
        }
    }

    private static long nowMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
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
        Plain pending = plain.remove(outcome.sequence());
        if (pending != null) {
            if (outcome.replyCode() == 0) {
                pending.future().complete(null);
            } else {
                ReplyCode code = ReplyCode.of(outcome.replyCode()).orElse(ReplyCode.INTERNAL_ERROR);
                pending.future()
                        .completeExceptionally(
                                outcome.replyCode() == PublishRejected.OUTCOME_CODE
                                        ? new PublishRejected(outcome.text())
                                        : new BrokerFailure(code, outcome.text()));
            }
            return;
        }
        ShardLanes one = lanes.get((int) Math.floorMod(outcome.sequence(), (long) lanes.size()));
        one.shard.execute(() -> one.answered(from, outcome));
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
        plain.entrySet().removeIf(entry -> {
            Plain pending = entry.getValue();
            if (!pending.home().equals(peer)) {
                return false;
            }
            pending.future().completeExceptionally(homeDown(peer, pending.queue()));
            return true;
        });
        onEveryShard(one -> one.lanes.linkClosed(peer));
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
