package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

    /** Called for every committed command with the reference image before and the outcome. */
    void onCommit(int index, MetadataImage.Applied applied) {
        if (!(cluster.quorum().command(index) instanceof MetadataCommand.Coordination coordination)
                || !(coordination.command() instanceof AppendHistory append)
                || !(append.record() instanceof HistoryRecord.Activated activated)
                || !applied.accepted()) {
            return;
        }
        cluster.stats().activations++;
        AcceptedHistory before =
                cluster.quorum().imageAt(index).coordination().objects().get(append.id());
        AcceptedHistory after = applied.image().coordination().objects().get(append.id());
        checkActivation(append.id(), activated.epoch(), before, after);
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
