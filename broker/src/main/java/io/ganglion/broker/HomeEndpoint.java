package io.ganglion.broker;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
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
import io.ganglion.queues.ConsumerKey;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;
import java.util.function.LongFunction;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The home's side of the remote-queue protocol ({@link RemoteQueues}): serves the publishes, consumers, gets,
 * settlements and calls that other brokers forward to a queue this broker serves, from its {@link LocalQueue}.
 *
 * <p>Implementation notes. Each peer's consumers and the offsets delivered to that peer and not yet settled are kept
 * per queue ({@link PeerQueue}) and changed only on the queue's shard: a message from a peer link thread is posted
 * there. A settlement for an offset not delivered to that peer is ignored. When the link to a peer closes, its
 * consumers are cancelled and its unsettled messages requeued, as for a closed channel.
 */
final class HomeEndpoint {
    private static final Logger LOG = LoggerFactory.getLogger(HomeEndpoint.class);

    private final LongFunction<LocalQueue> localReplicas;
    private final BiPredicate<NodeId, PeerMessage> sender;
    /** Numbers the consumers of other brokers here: their channel ids are the negated numbers. */
    private final AtomicLong consumerIds = new AtomicLong();
    /** Per peer, per queue; each {@link PeerQueue} is touched only on its queue's shard. */
    private final Map<NodeId, Map<Long, PeerQueue>> served = new ConcurrentHashMap<>();

    HomeEndpoint(LongFunction<LocalQueue> localReplicas, BiPredicate<NodeId, PeerMessage> sender) {
        this.localReplicas = localReplicas;
        this.sender = sender;
    }

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

    /**
     * A message of the remote-queue protocol from {@code from}, on a peer link thread: true if it is one a home
     * serves, false if it is for the forwarding side.
     */
    boolean onMessage(NodeId from, PeerMessage message) {
        switch (message) {
            case PublishToHome publish -> publish(from, publish);
            case Subscribe subscribe -> {
                LocalQueue replica = localReplicas.apply(subscribe.queueId());
                if (replica == null) {
                    send(from, notFound(subscribe.requestId()));
                } else {
                    replica.firstServed().thenRunAsync(() -> subscribe(from, replica, subscribe), replica.shard());
                }
            }
            case CancelConsumer cancel -> cancel(from, cancel);
            case Settle settle -> settle(from, settle);
            case QueueCall call -> call(from, call);
            default -> {
                return false;
            }
        }
        return true;
    }

    private void publish(NodeId from, PublishToHome publish) {
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
        replica.shard()
                .execute(
                        () -> replica.publish(payload, done, publish.publisher(), publish.sequence(), publish.after()));
    }

    private void cancel(NodeId from, CancelConsumer cancel) {
        LocalQueue replica = localReplicas.apply(cancel.queueId());
        if (replica != null) {
            replica.shard().execute(() -> {
                ConsumerKey key = peerQueue(from, cancel.queueId()).consumers.remove(cancel.consumerId());
                if (key != null) {
                    replica.cancel(key);
                }
            });
        }
    }

    private void settle(NodeId from, Settle settle) {
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

    private void call(NodeId from, QueueCall call) {
        LocalQueue replica = localReplicas.apply(call.queueId());
        if (replica == null) {
            send(from, notFound(call.requestId()));
            return;
        }
        if (call.op() == RemoteQueues.OP_STATUS) {
            ReplicaStatus.of(replica)
                    .whenComplete((status, failure) -> send(
                            from,
                            failure == null
                                    ? new QueueReply(
                                            call.requestId(), 0, "", 0, 0, -1, false, ReplicaStatus.encode(status))
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
        // a queue opened a moment ago answers once it first served
        replica.firstServed().thenRunAsync(() -> send(from, answer(from, replica, call)), replica.shard());
    }

    // on the replica's shard
    private void subscribe(NodeId from, LocalQueue replica, Subscribe subscribe) {
        PeerQueue peerQueue = peerQueue(from, subscribe.queueId());
        // channel ids of remote consumers are negative and unique on this broker, so tags of different peers and
        // channels never collide
        ConsumerKey key = new ConsumerKey(-consumerIds.incrementAndGet(), subscribe.tag());
        long consumerId = subscribe.consumerId();
        DeliverySink sink = new DeliverySink() {
            @Override
            public void deliver(String consumerTag, Delivery delivery) {
                try {
                    if (!subscribe.noAck()) {
                        peerQueue.delivered(delivery.offset());
                    }
                    ByteBuffer encoded = MessageRecord.encodeMessage(
                            delivery.exchange(), delivery.routingKey(), delivery.header(), delivery.body());
                    send(
                            from,
                            new Deliver(
                                    consumerId,
                                    delivery.offset(),
                                    delivery.redelivered(),
                                    RemoteQueues.bytes(encoded)));
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
                    new QueueConsumer(
                            subscribe.tag(),
                            subscribe.noAck(),
                            subscribe.exclusive(),
                            subscribe.prefetch(),
                            subscribe.start(),
                            sink));
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
                case RemoteQueues.OP_COUNTS -> {
                    replica.declared();
                    yield ok(call, replica.readyCount(), replica.consumerCount());
                }
                case RemoteQueues.OP_PURGE -> ok(call, replica.purge(), 0);
                case RemoteQueues.OP_DELETE_CHECK -> {
                    long ready = replica.checkDeletable(
                            (call.flags() & RemoteQueues.FLAG_IF_UNUSED) != 0,
                            (call.flags() & RemoteQueues.FLAG_IF_EMPTY) != 0);
                    yield ok(call, ready, replica.consumerCount());
                }
                case RemoteQueues.OP_GET, RemoteQueues.OP_GET_NO_ACK -> get(from, replica, call);
                default -> throw new BrokerFailure(ReplyCode.NOT_IMPLEMENTED, "unknown queue operation " + call.op());
            };
        } catch (AmqpException e) {
            return new QueueReply(
                    call.requestId(), e.replyCode().code(), e.explanation(), 0, 0, -1, false, new byte[0]);
        }
    }

    // on the replica's shard
    private QueueReply get(NodeId from, LocalQueue replica, QueueCall call) {
        boolean noAck = call.op() == RemoteQueues.OP_GET_NO_ACK;
        Optional<Delivery> got = replica.get(noAck);
        if (got.isEmpty()) {
            return new QueueReply(call.requestId(), 0, "", 0, 0, -1, false, new byte[0]);
        }
        Delivery delivery = got.get();
        try {
            if (!noAck) {
                peerQueue(from, call.queueId()).delivered(delivery.offset());
            }
            ByteBuffer encoded = MessageRecord.encodeMessage(
                    delivery.exchange(), delivery.routingKey(), delivery.header(), delivery.body());
            return new QueueReply(
                    call.requestId(),
                    0,
                    "",
                    delivery.messageCount(),
                    0,
                    delivery.offset(),
                    delivery.redelivered(),
                    RemoteQueues.bytes(encoded));
        } finally {
            delivery.release();
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
        if (cause instanceof PublishRejected) {
            return PublishRejected.OUTCOME_CODE;
        }
        return cause instanceof AmqpException a ? a.replyCode().code() : ReplyCode.INTERNAL_ERROR.code();
    }

    /** The link to {@code peer} closed: its consumers here are cancelled and what it had not settled requeued. */
    void onDisconnected(NodeId peer) {
        Map<Long, PeerQueue> queues = served.remove(peer);
        if (queues == null) {
            return;
        }
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

    private boolean send(NodeId to, PeerMessage message) {
        return sender.test(to, message);
    }
}
