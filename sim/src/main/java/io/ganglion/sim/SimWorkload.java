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
 * <p>A publisher sends each publish to the owner its broker's view shows, tagged with the epoch (the broker forwards it
 * when it is not the owner), and keeps it until confirmed. When its broker's view shows another epoch or owner, or the
 * owner refused it, or it waited a second, it re-sends it with the same id: the new owner finds it in the recovered log
 * or appends it. When its broker dies, its unconfirmed publishes have an unknown outcome and it reconnects elsewhere
 * with a new publisher id.
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
     * broker). A publisher gives a publish up (its outcome unknown) {@value #RESEND_MARGIN_MS} ms before the window
     * since its first send ends, as the broker's forwarding client fails a forwarded publish well within it.
     */
    static final long RESEND_WINDOW_MS = 3_000;

    private static final long RESEND_MARGIN_MS = 1_000;

    private final SimCluster cluster;
    private final TreeMap<ObjectId, Publisher> publishers = new TreeMap<>();
    private final TreeMap<ObjectId, Consumer> consumers = new TreeMap<>();
    private long nextPublisherId = 1;
    private long nextChannel = 1;
    private boolean publishing = true;

    private static final class Pending {
        final PublishId id;
        final int bytes;
        Epoch epoch;
        NodeId owner;
        long sentMs = Long.MIN_VALUE;
        long firstSentMs = Long.MIN_VALUE;
        boolean refused;

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
        if (!cluster.broker(publisher.node).alive()) {
            // the connection died: every unconfirmed publish has an unknown outcome
            cluster.stats().unknownOutcome += publisher.pending.size();
            publisher.pending.clear();
            NodeId next = reconnect();
            if (next != null) {
                publisher.node = next;
                publisher.id = nextPublisherId++;
            }
            return;
        }
        if (publishing && publisher.pending.size() < MAX_PENDING) {
            PublishId id = new PublishId(publisher.id, publisher.sequence++);
            publisher.pending.put(
                    id.sequence(), new Pending(id, cluster.random().nextInt(2048)));
            cluster.invariants().published(publisher.object, id);
            cluster.stats().published++;
        }
        Assignment view = view(publisher.node, publisher.object);
        if (view == null) {
            return; // no active assignment in this broker's view: the publish waits
        }
        long now = cluster.now();
        int sent = 0;
        for (var it = publisher.pending.values().iterator(); it.hasNext(); ) {
            Pending pending = it.next();
            if (pending.firstSentMs != Long.MIN_VALUE
                    && now - pending.firstSentMs >= RESEND_WINDOW_MS - RESEND_MARGIN_MS) {
                it.remove(); // no re-send after the window: its outcome stays unknown
                cluster.stats().unknownOutcome++;
                continue;
            }
            boolean moved =
                    pending.owner == null || !pending.epoch.equals(view.epoch()) || !pending.owner.equals(view.owner());
            if (!moved && !pending.refused && now - pending.sentMs < 1_000) {
                continue;
            }
            if (pending.owner != null) {
                cluster.stats().resent++;
            }
            pending.epoch = view.epoch();
            pending.owner = view.owner();
            pending.sentMs = now;
            if (pending.firstSentMs == Long.MIN_VALUE) {
                pending.firstSentMs = now;
            }
            pending.refused = false;
            Epoch epoch = view.epoch();
            NodeId owner = view.owner();
            cluster.network()
                    .send(
                            publisher.node,
                            owner,
                            "pub",
                            () -> cluster.broker(owner)
                                    .receivePublish(publisher.object, pending.id, epoch, pending.bytes));
            if (++sent >= 20) {
                break;
            }
        }
    }

    /** The owner confirms: the confirm travels back to the publisher's broker. */
    void confirm(NodeId owner, ObjectId object, PublishId id) {
        Publisher publisher = publishers.get(object);
        if (publisher == null || publisher.id != id.publisher()) {
            return;
        }
        NodeId node = publisher.node;
        cluster.network().send(owner, node, "confirm", () -> {
            if (publisher.id == id.publisher()
                    && publisher.node.equals(node)
                    && cluster.broker(node).alive()
                    && publisher.pending.remove(id.sequence()) != null) {
                cluster.invariants().confirmedPublish(object, id);
            }
        });
    }

    void refuse(NodeId owner, ObjectId object, PublishId id) {
        Publisher publisher = publishers.get(object);
        if (publisher == null || publisher.id != id.publisher()) {
            return;
        }
        cluster.network().send(owner, publisher.node, "refuse", () -> {
            Pending pending = publisher.pending.get(id.sequence());
            if (pending != null && publisher.id == id.publisher()) {
                pending.refused = true;
            }
        });
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
