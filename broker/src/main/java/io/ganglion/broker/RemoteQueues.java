package io.ganglion.broker;

import io.ganglion.broker.peer.PeerLink;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.NodeId;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.LongFunction;

/**
 * The remote-queue protocol on the peer link: queues whose messages live on another broker of the cluster (their
 * home, or a replicated queue's owner). Publishes, consumers, gets, acks, purges and counts go to the home ({@link
 * ForwardingClient}), and the home serves them from its own queue ({@link HomeEndpoint}).
 *
 * <pre>
 *   client ── AMQP ──> broker B (not home)                           broker H (home of q)
 *     publish          PublishToHome(seq, after, q, message) ──────>   replica.publish ── durable
 *     basic.ack   <──  PublishToHomeOutcome(seq, ok) <──────────────   ┘
 *     consume          Subscribe(req, q, consumer, tag, prefetch) ──>   replica.consume(sink -> Deliver)
 *     deliver     <──  Deliver(consumer, offset, message)  <────────   ┘
 *     ack              Settle(q, offsets, ack) ─────────────────────>   replica.settle
 * </pre>
 *
 * Every broker plays both roles: this class hands each message from a peer to the role it is for, and a closed link
 * to both.
 */
final class RemoteQueues {
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

    /** How messages leave for other brokers: the peer link once attached. */
    private volatile BiPredicate<NodeId, PeerMessage> sender = (to, message) -> false;

    private final ForwardingClient client;
    private final HomeEndpoint home;

    /**
     * The protocol of broker {@code self}, whose own queues {@code localReplicas} finds by object id, and whose
     * {@code shards} run each queue on {@code shardOf(queue)}.
     */
    RemoteQueues(NodeId self, LongFunction<LocalQueue> localReplicas, LongFunction<Shard> shardOf, List<Shard> shards) {
        this.client = new ForwardingClient(
                self, localReplicas, shardOf, shards, TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS), this::send);
        this.home = new HomeEndpoint(localReplicas, this::send);
    }

    /** This broker forwarding to the homes of queues it does not serve. */
    ForwardingClient client() {
        return client;
    }

    /** Starts the protocol on {@code link} (none: nothing leaves), and the forwarding side's re-sends. */
    void attach(PeerLink link) {
        this.sender = link == null ? (to, message) -> false : link::send;
        client.startResending();
    }

    /** Every message of the remote-queue protocol from {@code from}. On a peer link thread. */
    void onMessage(NodeId from, PeerMessage message) {
        if (!home.onMessage(from, message)) {
            client.onMessage(from, message);
        }
    }

    /** The link to {@code peer} closed: fail what waited on it, cancel its consumers both ways, requeue. */
    void onDisconnected(NodeId peer) {
        client.onDisconnected(peer);
        home.onDisconnected(peer);
    }

    private boolean send(NodeId to, PeerMessage message) {
        return sender.test(to, message);
    }

    /** The bytes left in {@code buffer}, copied; the buffer's position is unchanged. */
    static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
