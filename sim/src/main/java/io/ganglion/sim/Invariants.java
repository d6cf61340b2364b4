package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The checker. It holds the ground truth the images cannot see (which replicas really sealed, which positions owners
 * confirmed) and records every broken rule as a violation with its virtual time:
 *
 * <ul>
 *   <li>at each committed {@code Activated}: the history records R seals of the committed epoch, from replicas that
 *       really sealed it; every confirmed position of an earlier epoch is at or below the recovery point; one owner
 *       per object and epoch;
 *   <li>on each confirmation: it is at or below the recovery point of every later activated epoch;
 *   <li>on each delivery and expiry of a queue message (runs with a message TTL): nothing goes out after its time
 *       (but in the moment its commit reaches it, as a message of TTL 0 may), nothing expires before it;
 *   <li>periodically and at the end: every broker's image is the reference image after the same number of committed
 *       commands (a prefix of the one order), and projects the owners recorded at activation; replicas of one object
 *       are prefixes of each other within each epoch (no two different logs in one epoch).
 * </ul>
 */
public final class Invariants {
    private final SimCluster cluster;
    private final List<String> violations = new ArrayList<>();
    private final TreeSet<String> realSeals = new TreeSet<>();
    /** object -> epoch -> highest confirmed offset. */
    private final TreeMap<ObjectId, TreeMap<Long, Long>> confirmed = new TreeMap<>();
    /** object -> activated epoch -> recovery point. */
    private final TreeMap<ObjectId, TreeMap<Long, LogPosition>> points = new TreeMap<>();

    private final TreeMap<String, NodeId> owners = new TreeMap<>();
    /** object|epoch -> the activated assignment. */
    private final TreeMap<String, Assignment> assignments = new TreeMap<>();
    /** object|node -> the highest epoch the replica reported sealed. */
    private final TreeMap<String, Long> acknowledgedSeals = new TreeMap<>();

    private final HashMap<PublishId, ObjectId> published = new HashMap<>();
    /** object -> publishes confirmed to their publisher. */
    private final TreeMap<ObjectId, TreeSet<PublishId>> confirmedPublishes = new TreeMap<>();
    /** publish -> times delivered to a consumer. */
    private final HashMap<PublishId, Integer> deliveries = new HashMap<>();
    /** Publishes an owner let expire (their TTL passed while they were ready). */
    private final java.util.HashSet<PublishId> expired = new java.util.HashSet<>();

    Invariants(SimCluster cluster) {
        this.cluster = cluster;
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }

    private void violation(String text) {
        if (violations.size() < 50) {
            violations.add("t=" + cluster.scheduler().now() + "ms " + text);
        }
    }

    void sealed(ObjectId object, Epoch epoch, NodeId node, LogPosition end) {
        realSeals.add(object + "|" + epoch + "|" + node);
        acknowledgedSeals.merge(object + "|" + node, epoch.value(), Math::max);
    }

    /** A broker crashed: every seal its replicas reported must have survived on disk. */
    void crashed(ObjectId object, NodeId node, SimReplica disk) {
        Long acknowledged = acknowledgedSeals.get(object + "|" + node);
        if (acknowledged != null && disk.sealedEpoch() < acknowledged) {
            violation(object + ": " + node + " reported a seal of epoch " + acknowledged
                    + " but after a crash its disk holds sealed epoch " + disk.sealedEpoch()
                    + ": the seal was not persisted before the reply");
        }
    }

    /** The record at {@code offset} of {@code owner}'s log must be durable on W members of the owner's epoch. */
    private void checkCommitted(String what, ObjectId object, NodeId owner, long offset) {
        Optional<Epoch> epoch = cluster.broker(owner).machine(object).ownedEpoch();
        if (epoch.isEmpty()) {
            violation(object + ": " + owner + " " + what + " offset " + offset + " without owning an epoch");
            return;
        }
        Assignment assignment = assignments.get(object + "|" + epoch.get());
        if (assignment == null || !assignment.owner().equals(owner)) {
            violation(object + ": " + owner + " " + what + " offset " + offset + " in epoch " + epoch.get()
                    + " it was not activated as owner of");
            return;
        }
        SimReplica log = cluster.broker(owner).replica(object);
        if (offset > log.end()) {
            violation(object + ": " + owner + " " + what + " offset " + offset + " past its log end " + log.end());
            return;
        }
        long recordEpoch = log.epochAt(offset);
        int copies = 0;
        for (NodeId member : assignment.members()) {
            if (cluster.broker(member).replica(object).holdsDurably(recordEpoch, offset)) {
                copies++;
            }
        }
        int w = cluster.history(object).spec().writeRequirement();
        if (copies < w) {
            cluster.stats().earlyCommits++;
            violation(object + ": " + owner + " " + what + " (" + recordEpoch + "," + offset + ") in epoch "
                    + epoch.get() + " durable on " + copies + " members, W = " + w + ": not committed; "
                    + members(object, assignment));
        }
    }

    private String members(ObjectId object, Assignment assignment) {
        StringBuilder text = new StringBuilder();
        for (NodeId member : assignment.members()) {
            text.append(member)
                    .append('=')
                    .append(cluster.broker(member).replica(object))
                    .append(' ');
        }
        return text.toString();
    }

    void confirming(ObjectId object, NodeId owner, long offset) {
        checkCommitted("confirmed", object, owner, offset);
    }

    /** object -> the highest epoch whose owner delivered a message. */
    private final TreeMap<ObjectId, Long> deliveringEpoch = new TreeMap<>();

    /**
     * An owner hands a message to a consumer: it is committed, no owner of a later epoch delivered before (the owner
     * lease: a deposed owner's deliveries all precede the new owner's first), and its time has not passed. A message
     * whose time passed before its commit may go out once, in the moment the commit reaches it (a consumer takes it
     * at once, as a message of TTL 0); never later, nor as a redelivery.
     */
    void delivering(ObjectId object, NodeId owner, Epoch epoch, Record.Message message, boolean redelivered) {
        long offset = message.offset();
        checkCommitted("delivered", object, owner, offset);
        long latest = deliveringEpoch.merge(object, epoch.value(), Math::max);
        if (latest > epoch.value()) {
            violation(object + ": " + owner + " delivered offset " + offset + " in epoch " + epoch
                    + " after the owner of epoch " + latest + " began delivering: a deposed owner still delivers");
        }
        long expiresAt = cluster.config().expiresAtMs(message.timestampMs());
        long now = cluster.now();
        if (expiresAt >= now) {
            return;
        }
        cluster.stats().lateDeliveries++;
        violation(object + ": message " + client(message.id()) + " (offset " + offset + ") delivered by " + owner
                + " in epoch " + epoch + " at " + now + " ms, expired at " + expiresAt + " ms");
    }

    /**
     * An owner let a ready message expire: its time has come. It leaves the queue as settled, and counts as accounted
     * for in the total-queue check.
     */
    void expired(ObjectId object, NodeId owner, Record.Message message) {
        long expiresAt = cluster.config().expiresAtMs(message.timestampMs());
        cluster.stats().expired++;
        if (cluster.now() < expiresAt) {
            violation(object + ": message " + client(message.id()) + " (offset " + message.offset() + ") expired by "
                    + owner + " at " + cluster.now() + " ms, before its time " + expiresAt + " ms");
        }
        expired.add(client(message.id()));
    }

    void published(ObjectId object, PublishId id) {
        published.put(id, object);
    }

    /** Client publishes by the id a forwarding broker gave them in the logs; one client publish may get several. */
    private final HashMap<PublishId, PublishId> clientOf = new HashMap<>();

    /** A broker forwards client publish {@code client} as {@code logId}. */
    void forwarded(PublishId logId, PublishId client) {
        clientOf.put(logId, client);
    }

    /** The client publish a log's message carries, or the id itself when no broker forwarded it under another. */
    private PublishId client(PublishId logId) {
        return clientOf.getOrDefault(logId, logId);
    }

    /** When each object last confirmed a publish to its publisher. */
    private final TreeMap<ObjectId, Long> lastConfirmMs = new TreeMap<>();

    /** The virtual time {@code object} last confirmed a publish, or -1. */
    public long lastConfirmMs(ObjectId object) {
        return lastConfirmMs.getOrDefault(object, -1L);
    }

    void confirmedPublish(ObjectId object, PublishId id) {
        lastConfirmMs.put(object, cluster.now());
        confirmedPublishes.computeIfAbsent(object, unused -> new TreeSet<>()).add(id);
        cluster.stats().confirmedPublishes++;
    }

    /** A consumer received {@code id}: it was published to the object, and a repeated delivery is marked redelivered. */
    void delivered(ObjectId object, PublishId logId, boolean redelivered) {
        PublishId id = client(logId);
        cluster.stats().delivered++;
        if (redelivered) {
            cluster.stats().redelivered++;
        }
        if (!object.equals(published.get(id))) {
            violation(object + ": delivered " + id + " which was never published to it");
        }
        int times = deliveries.merge(id, 1, Integer::sum);
        if (times > 1 && !redelivered) {
            violation(object + ": " + id + " delivered " + times + " times, the last not marked redelivered");
        }
    }

    /** Whether a queue's message left the queue: delivered to a consumer, or expired. */
    private boolean accounted(PublishId id) {
        return deliveries.containsKey(id) || expired.contains(id);
    }

    /** Confirmed publishes of queues neither delivered nor expired yet. */
    public long undelivered() {
        long count = 0;
        for (Map.Entry<ObjectId, TreeSet<PublishId>> entry : confirmedPublishes.entrySet()) {
            if (isQueue(entry.getKey())) {
                for (PublishId id : entry.getValue()) {
                    if (!accounted(id)) {
                        count++;
                    }
                }
            }
        }
        return count;
    }

    private boolean isQueue(ObjectId object) {
        return cluster.history(object).spec().kind() == ObjectKind.QUEUE;
    }

    /**
     * The total-queue check, once the workload drained: every confirmed publish of a queue was delivered or expired
     * (and of a stream is in its owner's log); deliveries of publishes never sent and repeated deliveries not marked
     * redelivered were recorded as they happened.
     */
    public void checkTotalQueue() {
        for (Map.Entry<ObjectId, TreeSet<PublishId>> entry : confirmedPublishes.entrySet()) {
            ObjectId object = entry.getKey();
            List<PublishId> lost = new ArrayList<>();
            if (isQueue(object)) {
                for (PublishId id : entry.getValue()) {
                    if (!accounted(id)) {
                        lost.add(id);
                    }
                }
            } else {
                Optional<Assignment> active = cluster.history(object).validate();
                if (active.isEmpty()) {
                    continue;
                }
                SimReplica log = cluster.broker(active.get().owner()).replica(object);
                java.util.HashSet<PublishId> held = new java.util.HashSet<>();
                for (Record record : log.read(log.start(), log.end())) {
                    if (record instanceof Record.Message message) {
                        held.add(client(message.id()));
                    }
                }
                for (PublishId id : entry.getValue()) {
                    if (!held.contains(id)) {
                        lost.add(id);
                    }
                }
            }
            if (!lost.isEmpty()) {
                cluster.stats().lost += lost.size();
                violation(object + ": " + lost.size() + " confirmed publishes lost, first " + lost.get(0));
            }
        }
    }

    /**
     * The order check, once the workload drained: in the log of each object's owner, the confirmed publishes of one
     * publisher stand in the order it published them (one channel's publishes to one queue keep their order, also
     * across a change of owner and the re-sends it brings).
     */
    public void checkPublishOrder() {
        for (Map.Entry<ObjectId, TreeSet<PublishId>> entry : confirmedPublishes.entrySet()) {
            ObjectId object = entry.getKey();
            Optional<Assignment> active = cluster.history(object).validate();
            if (active.isEmpty()) {
                continue;
            }
            SimReplica log = cluster.broker(active.get().owner()).replica(object);
            HashMap<Long, Long> lastOf = new HashMap<>();
            for (Record record : log.read(log.start(), log.end())) {
                if (record instanceof Record.Message message) {
                    PublishId id = client(message.id());
                    if (!entry.getValue().contains(id)) {
                        continue;
                    }
                    Long last = lastOf.put(id.publisher(), id.sequence());
                    if (last != null && last >= id.sequence()) {
                        cluster.stats().reordered++;
                        violation(object + ": confirmed publish " + id + " stands after sequence " + last
                                + " of its publisher in " + active.get().owner()
                                + "'s log: out of the order published");
                        break;
                    }
                }
            }
        }
    }

    void confirmed(ObjectId object, LogPosition position) {
        TreeMap<Long, Long> byEpoch = confirmed.computeIfAbsent(object, unused -> new TreeMap<>());
        Long before = byEpoch.get(position.epoch().value());
        if (before != null && before >= position.offset()) {
            return;
        }
        byEpoch.put(position.epoch().value(), position.offset());
        cluster.stats().confirmed++;
        for (Map.Entry<Long, LogPosition> entry :
                points.getOrDefault(object, new TreeMap<>()).entrySet()) {
            if (entry.getKey() > position.epoch().value() && position.compareTo(entry.getValue()) > 0) {
                violation(object + ": confirmed " + position + " is past the recovery point " + entry.getValue()
                        + " of epoch " + entry.getKey() + ": a confirmed record is lost");
            }
        }
    }

    /**
     * Called for every committed command with the outcome. A controller's entry is fenced and may be a batch: each
     * history record in it is checked against the image just before it and its own outcome, as the batch applies them
     * in order.
     */
    void onCommit(int index, MetadataImage.Applied applied) {
        MetadataCommand command = cluster.quorum().command(index);
        if (command instanceof MetadataCommand.Fenced fenced) {
            command = fenced.command();
        }
        if (!(command instanceof MetadataCommand.Coordination coordination) || !applied.accepted()) {
            return;
        }
        if (coordination.command() instanceof CoordinationCommand.Batch batch) {
            MetadataImage image = cluster.quorum().imageAt(index);
            for (CoordinationCommand each : batch.commands()) {
                MetadataImage.Applied one = image.apply(new MetadataCommand.Coordination(each));
                if (each instanceof AppendHistory append && one.accepted()) {
                    onHistoryRecord(append, image, one);
                }
                image = one.image();
            }
        } else if (coordination.command() instanceof AppendHistory append) {
            onHistoryRecord(append, cluster.quorum().imageAt(index), applied);
        }
    }

    private void onHistoryRecord(AppendHistory append, MetadataImage imageBefore, MetadataImage.Applied applied) {
        if (append.record() instanceof HistoryRecord.FollowerAdded added) {
            // the epoch's members grew: a confirm may now count the new follower (once installed)
            cluster.stats().followersAdded++;
            Assignment grown = applied.image()
                    .coordination()
                    .objects()
                    .get(append.id())
                    .committed()
                    .orElseThrow();
            assignments.put(append.id() + "|" + added.epoch(), grown);
            return;
        }
        if (append.record() instanceof HistoryRecord.FollowerDropped dropped) {
            // E shrank: every confirmed record must already be durable on W members of the smaller E, or a recovery
            // sealing R' of them could miss it
            cluster.stats().followersDropped++;
            AcceptedHistory after = applied.image().coordination().objects().get(append.id());
            Assignment shrunk = after.committed().orElseThrow();
            assignments.put(append.id() + "|" + dropped.epoch(), shrunk);
            checkConfirmedOn(append.id(), shrunk, "dropping " + dropped.node() + " from epoch " + dropped.epoch());
            return;
        }
        if (!(append.record() instanceof HistoryRecord.Activated activated)) {
            return;
        }
        cluster.stats().activations++;
        AcceptedHistory before = imageBefore.coordination().objects().get(append.id());
        AcceptedHistory after = applied.image().coordination().objects().get(append.id());
        checkActivation(append.id(), activated.epoch(), before, after);
    }

    /** Every confirmed position of {@code object} is durable on W members of {@code assignment}. */
    private void checkConfirmedOn(ObjectId object, Assignment assignment, String when) {
        int w = cluster.history(object).spec().writeRequirement();
        for (Map.Entry<Long, Long> entry :
                confirmed.getOrDefault(object, new TreeMap<>()).entrySet()) {
            int copies = 0;
            for (NodeId member : assignment.members()) {
                if (cluster.broker(member).replica(object).holdsDurably(entry.getKey(), entry.getValue())) {
                    copies++;
                }
            }
            if (copies < w) {
                violation(object + ": " + when + " leaves confirmed (" + entry.getKey() + "," + entry.getValue()
                        + ") durable on " + copies + " members of " + assignment.members() + ", W = " + w
                        + ": a recovery may lose it; " + members(object, assignment));
            }
        }
    }

    private void checkActivation(ObjectId object, Epoch epoch, AcceptedHistory before, AcceptedHistory after) {
        Epoch sealedEpoch = before.committedEpoch();
        int r = before.recoveryThreshold();
        TreeSet<NodeId> recorded = new TreeSet<>();
        List<HistoryRecord> records = before.records();
        for (int i = records.size() - 1; i >= 0 && !(records.get(i) instanceof HistoryRecord.Activated); i--) {
            if (records.get(i) instanceof HistoryRecord.SealReceived seal
                    && seal.sealedEpoch().equals(sealedEpoch)) {
                recorded.add(seal.reply().node());
            }
        }
        if (recorded.size() < r) {
            violation(object + ": epoch " + epoch + " activated with " + recorded.size() + " seal records, R = " + r);
        }
        long real = recorded.stream()
                .filter(node -> realSeals.contains(object + "|" + sealedEpoch + "|" + node))
                .count();
        if (real < r) {
            violation(object + ": epoch " + epoch + " activated with " + real + " real seals of epoch " + sealedEpoch
                    + " (records from " + recorded + "), R = " + r);
        }
        LogPosition point = before.pending().orElseThrow().recoveryPoint();
        for (Map.Entry<Long, Long> entry :
                confirmed.getOrDefault(object, new TreeMap<>()).entrySet()) {
            LogPosition position = LogPosition.of(entry.getKey(), entry.getValue());
            if (entry.getKey() < epoch.value() && position.compareTo(point) > 0) {
                violation(object + ": epoch " + epoch + " activated from recovery point " + point + " but " + position
                        + " was confirmed: a confirmed record is lost");
            }
        }
        points.computeIfAbsent(object, unused -> new TreeMap<>()).put(epoch.value(), point);
        Assignment assignment = after.committed().orElseThrow();
        SimReplica ownerLog = cluster.broker(assignment.owner()).replica(object);
        for (Map.Entry<Long, Long> entry :
                confirmed.getOrDefault(object, new TreeMap<>()).entrySet()) {
            if (entry.getKey() < epoch.value()
                    && (ownerLog.end() < entry.getValue() || ownerLog.epochAt(entry.getValue()) != entry.getKey())) {
                violation(object + ": new owner " + assignment.owner() + " of epoch " + epoch + " lacks confirmed ("
                        + entry.getKey() + "," + entry.getValue() + "): " + ownerLog);
            }
        }
        assignments.put(object + "|" + epoch, assignment);
        NodeId previous = owners.putIfAbsent(object + "|" + epoch, assignment.owner());
        if (previous != null && !previous.equals(assignment.owner())) {
            violation(object + ": epoch " + epoch + " activated with owner " + assignment.owner() + " and " + previous);
        }
    }

    /** Every broker's image against the reference, and the replicas against each other. */
    void checkState() {
        for (SimBroker broker : cluster.brokers()) {
            SimMetadataLog log = broker.log();
            if (log.applied() > cluster.quorum().committed()) {
                violation(broker.id() + " applied " + log.applied() + " commands, only "
                        + cluster.quorum().committed() + " committed");
                continue;
            }
            MetadataImage reference = cluster.quorum().imageAt(log.applied());
            if (fingerprint(log.image()) != fingerprint(reference)) {
                violation(broker.id() + "'s image after " + log.applied() + " commands differs from the log's");
            }
            for (Map.Entry<ObjectId, Assignment> entry :
                    log.image().coordination().projectedAssignments().entrySet()) {
                NodeId owner =
                        owners.get(entry.getKey() + "|" + entry.getValue().epoch());
                if (owner == null || !owner.equals(entry.getValue().owner())) {
                    violation(broker.id() + " projects " + entry.getKey() + " epoch "
                            + entry.getValue().epoch() + " owned by "
                            + entry.getValue().owner() + ", activation recorded " + owner);
                }
            }
        }
        for (ObjectId object : cluster.quorum().image().coordination().objects().keySet()) {
            List<SimBroker> brokers = cluster.brokers();
            for (int i = 0; i < brokers.size(); i++) {
                for (int j = i + 1; j < brokers.size(); j++) {
                    SimReplica a = brokers.get(i).replica(object);
                    SimReplica b = brokers.get(j).replica(object);
                    long common = a.commonPrefix(b);
                    TreeSet<Long> shared = a.epochsFrom(common);
                    shared.retainAll(b.epochsFrom(common));
                    if (!shared.isEmpty()) {
                        violation(object + ": replicas on " + brokers.get(i).id() + " " + a + " and "
                                + brokers.get(j).id() + " " + b + " hold different records of epoch " + shared);
                    }
                }
            }
        }
    }

    /** A value-based hash of an image, for comparing images within one run (enum hashes vary between JVMs). */
    static int fingerprint(MetadataImage image) {
        CoordinationImage coordination = image.coordination();
        int hash = Objects.hash(image.appliedIndex(), coordination.liveSet(), coordination.settings());
        for (AcceptedHistory history : coordination.objects().values()) {
            hash = 31 * hash + history.id().hashCode();
            hash = 31 * hash + history.records().hashCode();
        }
        return hash;
    }
}
