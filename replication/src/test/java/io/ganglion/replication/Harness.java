package io.ganglion.replication;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.replication.ReplicaEffect.Append;
import io.ganglion.replication.ReplicaEffect.Confirm;
import io.ganglion.replication.ReplicaEffect.Deliverable;
import io.ganglion.replication.ReplicaEffect.Discard;
import io.ganglion.replication.ReplicaEffect.Flush;
import io.ganglion.replication.ReplicaEffect.PersistSeal;
import io.ganglion.replication.ReplicaEffect.ReadLog;
import io.ganglion.replication.ReplicaEffect.Refuse;
import io.ganglion.replication.ReplicaEffect.ReplyInstalled;
import io.ganglion.replication.ReplicaEffect.ReplySealed;
import io.ganglion.replication.ReplicaEffect.Reseed;
import io.ganglion.replication.ReplicaEffect.Send;
import io.ganglion.replication.ReplicaEffect.Truncate;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Replicas of one object on a few nodes with in-memory logs and a FIFO network, stepped by hand: storage effects apply
 * at once, fsyncs happen when the test says so, messages travel when the test delivers them.
 */
final class Harness {
    static final ObjectId OBJECT = ObjectId.of("/", "q");
    static final NodeId CONTROLLER = NodeId.of("c");

    final class Node {
        final NodeId id;
        Replica replica;
        final List<Record> log = new ArrayList<>();
        long start;
        long durable = -1;
        long sealed;
        final List<PersistSeal> pendingSeals = new ArrayList<>();
        final List<ReplicaEffect> effects = new ArrayList<>();

        Node(NodeId id) {
            this.id = id;
            this.replica = Replica.start(OBJECT, id, new Incarnation(1), config, RecoveredLog.EMPTY);
        }

        long end() {
            return start + log.size() - 1;
        }

        void on(ReplicaEvent event) {
            List<ReplicaEffect> produced = replica.onEvent(event, now);
            effects.addAll(produced);
            for (ReplicaEffect effect : produced) {
                execute(this, effect);
            }
        }

        /** fsync: everything appended is durable, pending seals persist. */
        void sync() {
            durable = end();
            on(new ReplicaEvent.AppendDurable(durable));
            List<PersistSeal> seals = new ArrayList<>(pendingSeals);
            pendingSeals.clear();
            for (PersistSeal seal : seals) {
                sealed = Math.max(sealed, seal.epoch().value());
                on(new ReplicaEvent.SealPersisted(seal.epoch()));
            }
        }

        /** A crash and restart with a new incarnation: the un-fsynced suffix is lost. */
        void restart(long incarnation) {
            effects.clear();
            while (end() > durable) {
                log.remove(log.size() - 1);
            }
            EpochHistory history = EpochHistory.EMPTY;
            TreeMap<PublishId, Long> published = new TreeMap<>();
            for (Record record : log) {
                history = history.append(record.epoch(), record.offset());
                if (record instanceof Record.Message message) {
                    published.put(message.id(), message.offset());
                }
            }
            replica = Replica.start(
                    OBJECT,
                    id,
                    new Incarnation(incarnation),
                    config,
                    new RecoveredLog(start, end(), history, Epoch.of(sealed), published));
        }

        List<Confirm> confirms() {
            return effects.stream()
                    .filter(Confirm.class::isInstance)
                    .map(Confirm.class::cast)
                    .toList();
        }

        List<Refuse> refusals() {
            return effects.stream()
                    .filter(Refuse.class::isInstance)
                    .map(Refuse.class::cast)
                    .toList();
        }

        long delivered() {
            long upTo = -1;
            for (ReplicaEffect effect : effects) {
                if (effect instanceof Deliverable deliverable) {
                    upTo = Math.max(upTo, deliverable.upTo());
                }
            }
            return upTo;
        }

        <T> List<T> effectsOf(Class<T> type) {
            return effects.stream().filter(type::isInstance).map(type::cast).toList();
        }
    }

    private record Message(NodeId from, NodeId to, PeerMessage message) {}

    final ReplicationConfig config;
    final TreeMap<NodeId, Node> nodes = new TreeMap<>();
    private final ArrayDeque<Message> network = new ArrayDeque<>();
    final Set<NodeId> down = new HashSet<>();
    /** Nodes cut off from every other: they run and tick, but what they send or are sent is lost. */
    final Set<NodeId> cut = new HashSet<>();

    long now;
    long sends;

    Harness(ReplicationConfig config, String... ids) {
        this.config = config;
        for (String id : ids) {
            nodes.put(NodeId.of(id), new Node(NodeId.of(id)));
        }
    }

    Harness(String... ids) {
        this(ReplicationConfig.defaults(), ids);
    }

    Node node(String id) {
        return nodes.get(NodeId.of(id));
    }

    private void execute(Node node, ReplicaEffect effect) {
        switch (effect) {
            case Append append -> {
                for (Record record : append.records()) {
                    if (record.offset() != node.end() + 1) {
                        throw new AssertionError(node.id + " append at " + record.offset() + " after " + node.end());
                    }
                    node.log.add(record);
                }
            }
            case Truncate truncate -> {
                while (node.end() >= truncate.from()) {
                    node.log.remove(node.log.size() - 1);
                }
                node.durable = Math.min(node.durable, node.end());
            }
            case Flush flush -> {}
            case PersistSeal seal -> node.pendingSeals.add(seal);
            case Discard discard -> {
                while (node.start < discard.below() && !node.log.isEmpty()) {
                    node.log.remove(0);
                    node.start++;
                }
            }
            case Reseed reseed -> {
                node.log.clear();
                node.start = reseed.start();
                node.durable = node.end();
            }
            case ReadLog read -> {
                List<Record> records = new ArrayList<>();
                for (long offset = Math.max(read.from(), node.start);
                        offset <= Math.min(read.to(), node.end());
                        offset++) {
                    records.add(node.log.get((int) (offset - node.start)));
                }
                node.on(new ReplicaEvent.LogRead(read.purpose(), read.peer(), records));
            }
            case Send send -> {
                sends++;
                network.add(new Message(node.id, send.to(), send.message()));
            }
            case ReplySealed sealed -> {}
            case ReplyInstalled installed -> {}
            case ReplicaEffect.ReplyDropped dropped -> {}
            case Confirm confirm -> {}
            case Refuse refuse -> {}
            case Deliverable deliverable -> {}
        }
    }

    /** Delivers messages in order until none are left (messages to or from a down node are lost). */
    void deliverAll() {
        while (!network.isEmpty()) {
            deliverOne();
        }
    }

    void deliverOne() {
        Message message = network.poll();
        if (message == null
                || down.contains(message.to())
                || down.contains(message.from())
                || cut.contains(message.to())
                || cut.contains(message.from())) {
            return;
        }
        nodes.get(message.to()).on(new ReplicaEvent.Received(message.from(), message.message()));
    }

    /**
     * Delivers messages in order until none are left, except those {@code held} picks: they stay in the network, in
     * order, and travel at the next {@link #deliverAll} (a slow link).
     */
    void deliverAllHolding(java.util.function.Predicate<PeerMessage> held) {
        ArrayDeque<Message> kept = new ArrayDeque<>();
        while (!network.isEmpty()) {
            Message message = network.poll();
            if (held.test(message.message())) {
                kept.add(message);
            } else {
                network.addFirst(message);
                deliverOne();
            }
        }
        network.addAll(kept);
    }

    /** Delivers messages in order until none are left; those {@code lost} picks are dropped on the way. */
    void deliverAllDropping(java.util.function.Predicate<PeerMessage> lost) {
        while (!network.isEmpty()) {
            if (lost.test(network.peek().message())) {
                network.poll();
            } else {
                deliverOne();
            }
        }
    }

    int inFlight() {
        return network.size();
    }

    /** The records travelling in Replicate messages now, in order. */
    List<Record> inFlightRecords() {
        return network.stream()
                .flatMap(m -> m.message() instanceof PeerMessage.Replicate r
                        ? r.records().stream()
                        : java.util.stream.Stream.<Record>empty())
                .toList();
    }

    /** Records travelling in Replicate messages now. */
    int recordsInFlight() {
        return network.stream()
                .mapToInt(m -> m.message() instanceof PeerMessage.Replicate r
                        ? r.records().size()
                        : 0)
                .sum();
    }

    void dropAll() {
        network.clear();
    }

    /** Every up node fsyncs, messages flow, until nothing changes. */
    void settle() {
        for (int round = 0; round < 50; round++) {
            deliverAll();
            for (Node node : nodes.values()) {
                if (!down.contains(node.id)) {
                    node.sync();
                }
            }
            if (network.isEmpty()) {
                return;
            }
        }
    }

    void tick(long ms) {
        now += ms;
        for (Node node : nodes.values()) {
            if (!down.contains(node.id)) {
                node.on(new ReplicaEvent.Tick());
            }
        }
    }

    /** Activates {@code epoch} with the first node as owner, every member installed. */
    Assignment activate(long epoch, int w, String owner, String... followers) {
        List<NodeId> followerIds =
                java.util.Arrays.stream(followers).map(NodeId::of).toList();
        Assignment assignment = new Assignment(Epoch.of(epoch), NodeId.of(owner), followerIds, true);
        Set<NodeId> installed = Set.copyOf(assignment.members());
        for (NodeId member : assignment.members()) {
            nodes.get(member).on(new ReplicaEvent.Assigned(assignment, w, installed, 60_000));
        }
        return assignment;
    }

    void assign(Assignment assignment, int w, Set<NodeId> installed) {
        for (NodeId member : assignment.members()) {
            nodes.get(member).on(new ReplicaEvent.Assigned(assignment, w, installed, 60_000));
        }
    }

    void publish(String owner, long epoch, long publisher, long sequence) {
        node(owner)
                .on(new ReplicaEvent.PublishAdmitted(
                        new PublishId(publisher, sequence), Epoch.of(epoch), ByteBuffer.allocate(10)));
    }

    /** Publishes {@code count} messages of {@code publisher} to {@code owner}, with sequences 0 to count - 1. */
    void publishMany(String owner, long epoch, long publisher, int count) {
        for (int sequence = 0; sequence < count; sequence++) {
            publish(owner, epoch, publisher, sequence);
        }
    }

    void seal(String node, long epoch) {
        node(node).on(new ReplicaEvent.SealRequested(CONTROLLER, Epoch.of(epoch)));
    }

    void install(String node, long epoch, LogPosition point, String... sources) {
        node(node)
                .on(new ReplicaEvent.InstallRequested(
                        CONTROLLER,
                        Epoch.of(epoch),
                        point,
                        java.util.Arrays.stream(sources).map(NodeId::of).toList()));
    }

    static Map<Long, Long> epochs(List<Record> log) {
        TreeMap<Long, Long> epochs = new TreeMap<>();
        for (Record record : log) {
            epochs.put(record.offset(), record.epoch().value());
        }
        return epochs;
    }
}
