package io.ganglion.sim;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.replication.PublishId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The clients: per object one publisher with confirms and, for a queue, one consumer with acks and requeues, each
 * connected to one broker.
 *
 * <p>A publisher hands each publish to its broker, which forwards it to the owner and sends it again when the owner
 * changes ({@link SimForwarding}, the shipping {@code serving.ForwardLanes}), and keeps it until the broker confirms it
 * or gives it up ({@link SimForwarding#TIMEOUT_MS}: its outcome unknown). When its broker dies, its unconfirmed
 * publishes have an unknown outcome and it reconnects elsewhere.
 *
 * <p>A consumer subscribes to the owner its broker's view shows and refreshes its lease every 100 ms; it acks nine
 * deliveries in ten after 1 to 30 ms and rejects the tenth with requeue. The owner requeues what a consumer held when
 * its lease runs out.
 */
public final class SimWorkload {
    private static final long LOOP_MS = 100;
    private static final int MAX_PENDING = 100;

    /**
     * The resend window the simulated owners keep settled records for ({@code replication.resend_window_ms} in the
     * broker): longer than a forwarded publish may wait for its answer ({@link SimForwarding#TIMEOUT_MS}).
     */
    static final long RESEND_WINDOW_MS = 3_000;

    private final SimCluster cluster;
    private final TreeMap<ObjectId, Publisher> publishers = new TreeMap<>();
    private final TreeMap<ObjectId, Consumer> consumers = new TreeMap<>();
    private long nextPublisherId = 1;
    private long nextChannel = 1;
    private boolean publishing = true;

    private static final class Pending {
        final PublishId id;
        final int bytes;

        Pending(PublishId id, int bytes) {
            this.id = id;
            this.bytes = bytes;
        }
    }

    private final class Publisher {
        final ObjectId object;
        final long everyMs;
        NodeId node;
        long id;
        long sequence;
        /** The incarnation of its broker it is connected to: a restart closed the connection. */
        io.ganglion.coordination.Incarnation incarnation;

        final TreeMap<Long, Pending> pending = new TreeMap<>();

        Publisher(ObjectId object, NodeId node, long everyMs) {
            this.object = object;
            this.node = node;
            this.everyMs = everyMs;
            this.id = nextPublisherId++;
        }
    }

    private final class Consumer {
        final ObjectId object;
        NodeId node;
        ConsumerKey key;
        io.ganglion.coordination.Incarnation incarnation;
        NodeId owner;
        Epoch epoch;

        Consumer(ObjectId object, NodeId node) {
            this.object = object;
            this.node = node;
            this.key = new ConsumerKey(nextChannel++, "c");
        }
    }

    SimWorkload(SimCluster cluster) {
        this.cluster = cluster;
    }

    /** Starts a publisher (one publish every {@code everyMs}) and, for a queue, a consumer, on random brokers. */
    public void attach(ObjectId object, ObjectKind kind, long everyMs) {
        List<NodeId> nodes = cluster.nodes();
        Publisher publisher = new Publisher(object, nodes.get(cluster.random().nextInt(nodes.size())), everyMs);
        publishers.put(object, publisher);
        cluster.scheduler().after(cluster.random().nextLong(everyMs), "publish", () -> publishLoop(publisher));
        if (kind == ObjectKind.QUEUE) {
            Consumer consumer = new Consumer(object, nodes.get(cluster.random().nextInt(nodes.size())));
            consumers.put(object, consumer);
            cluster.scheduler().after(cluster.random().nextLong(LOOP_MS), "consume", () -> consumeLoop(consumer));
        }
    }

    /** No new publishes from now on; unconfirmed ones are still re-sent until confirmed. */
    public void stopPublishing() {
        publishing = false;
    }

    /** Publishes sent and neither confirmed nor given up (their broker died). */
    public int unconfirmed() {
        int count = 0;
        for (Publisher publisher : publishers.values()) {
            count += publisher.pending.size();
        }
        return count;
    }

    private Assignment view(NodeId node, ObjectId object) {
        return cluster.broker(node)
                .log()
                .image()
                .coordination()
                .projectedAssignments()
                .get(object);
    }

    private NodeId reconnect() {
        List<NodeId> live = new ArrayList<>();
        for (SimBroker broker : cluster.brokers()) {
            if (broker.alive()) {
                live.add(broker.id());
            }
        }
        return live.isEmpty() ? null : live.get(cluster.random().nextInt(live.size()));
    }

    private void publishLoop(Publisher publisher) {
        cluster.scheduler().after(publisher.everyMs, "publish", () -> publishLoop(publisher));
        SimBroker broker = cluster.broker(publisher.node);
        if (publisher.incarnation == null && broker.alive()) {
            publisher.incarnation = broker.incarnation();
        }
        if (!broker.alive() || !broker.incarnation().equals(publisher.incarnation)) {
            // the connection died (with its broker, or at a restart of it): every unconfirmed publish has an unknown
            // outcome
            cluster.stats().unknownOutcome += publisher.pending.size();
            publisher.pending.clear();
            NodeId next = reconnect();
            if (next != null) {
                publisher.node = next;
                publisher.id = nextPublisherId++;
                publisher.incarnation = cluster.broker(next).incarnation();
            }
            return;
        }
        if (publishing && publisher.pending.size() < MAX_PENDING) {
            PublishId id = new PublishId(publisher.id, publisher.sequence++);
            Pending pending = new Pending(id, cluster.random().nextInt(2048));
            publisher.pending.put(id.sequence(), pending);
            cluster.invariants().published(publisher.object, id);
            cluster.stats().published++;
            cluster.broker(publisher.node).forwarding().publish(publisher.object, id, pending.bytes);
        }
    }

    /** Broker {@code node} confirms {@code id} to its client. */
    void confirmed(NodeId node, ObjectId object, PublishId id) {
        Publisher publisher = publishers.get(object);
        if (publisher != null
                && publisher.id == id.publisher()
                && publisher.node.equals(node)
                && publisher.pending.remove(id.sequence()) != null) {
            cluster.invariants().confirmedPublish(object, id);
        }
    }

    /** Broker {@code node} gave {@code id} up: its outcome is unknown, and it is never sent again. */
    void failed(NodeId node, ObjectId object, PublishId id) {
        Publisher publisher = publishers.get(object);
        if (publisher != null
                && publisher.id == id.publisher()
                && publisher.node.equals(node)
                && publisher.pending.remove(id.sequence()) != null) {
            cluster.stats().unknownOutcome++;
        }
    }

    private void consumeLoop(Consumer consumer) {
        cluster.scheduler().after(LOOP_MS, "consume", () -> consumeLoop(consumer));
        if (!cluster.broker(consumer.node).alive()) {
            NodeId next = reconnect();
            if (next != null) {
                consumer.node = next;
                consumer.key = new ConsumerKey(nextChannel++, "c");
                consumer.owner = null;
            }
            return;
        }
        if (!cluster.broker(consumer.node).incarnation().equals(consumer.incarnation)) {
            // its broker restarted since the last loop: the old channel died with it
            consumer.incarnation = cluster.broker(consumer.node).incarnation();
            consumer.key = new ConsumerKey(nextChannel++, "c");
        }
        Assignment view = view(consumer.node, consumer.object);
        if (view == null) {
            return;
        }
        if (!view.owner().equals(consumer.owner) || !view.epoch().equals(consumer.epoch)) {
            // another owner: subscribe on a fresh channel, so nothing the old owner sent can arrive after its
            // deliveries
            consumer.key = new ConsumerKey(nextChannel++, "c");
        }
        consumer.owner = view.owner();
        consumer.epoch = view.epoch();
        ConsumerKey key = consumer.key;
        NodeId node = consumer.node;
        Epoch epoch = view.epoch();
        cluster.network()
                .send(
                        node,
                        view.owner(),
                        "subscribe",
                        () -> cluster.broker(view.owner()).receiveSubscribe(consumer.object, epoch, key, node));
    }

    /** The owner delivers a committed message to the consumer's broker. */
    void deliver(
            NodeId owner,
            NodeId node,
            ObjectId object,
            Epoch epoch,
            ConsumerKey key,
            long offset,
            PublishId id,
            boolean redelivered) {
        Consumer consumer = consumers.get(object);
        Runnable lost = () -> channelLost(owner, object, consumer, key, epoch);
        cluster.network()
                .send(
                        owner,
                        node,
                        "deliver",
                        () -> {
                            if (consumer == null
                                    || !consumer.key.equals(key)
                                    || !consumer.node.equals(node)
                                    || !cluster.broker(node).alive()) {
                                return;
                            }
                            cluster.invariants().delivered(object, id, redelivered);
                            boolean requeue = cluster.random().nextInt(10) == 0;
                            cluster.scheduler().after(1 + cluster.random().nextLong(30), "ack", () -> {
                                if (consumer.key.equals(key)
                                        && cluster.broker(node).alive()) {
                                    cluster.network()
                                            .send(
                                                    node,
                                                    owner,
                                                    "ack",
                                                    () -> cluster.broker(owner)
                                                            .receiveAck(object, epoch, key, offset, requeue),
                                                    lost);
                                }
                            });
                        },
                        lost);
    }

    /** The owner closed the consumer's channel (its lease ran out): the consumer opens another. */
    void closed(NodeId owner, NodeId node, ObjectId object, ConsumerKey key) {
        Consumer consumer = consumers.get(object);
        cluster.network().send(owner, node, "closed", () -> {
            if (consumer != null && consumer.key.equals(key)) {
                consumer.key = new ConsumerKey(nextChannel++, "c");
            }
        });
    }

    /** The consumer's channel lost a message: it closes, the owner requeues what it held, the consumer opens another. */
    private void channelLost(NodeId owner, ObjectId object, Consumer consumer, ConsumerKey key, Epoch epoch) {
        cluster.broker(owner).channelClosed(object, epoch, key);
        if (consumer != null && consumer.key.equals(key)) {
            consumer.key = new ConsumerKey(nextChannel++, "c");
        }
    }

    /** Objects with a publisher, and whether each is a queue (has a consumer). */
    Map<ObjectId, Boolean> objects() {
        TreeMap<ObjectId, Boolean> objects = new TreeMap<>();
        for (ObjectId object : publishers.keySet()) {
            objects.put(object, consumers.containsKey(object));
        }
        return objects;
    }
}
