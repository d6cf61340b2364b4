package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.SealReply;
import io.ganglion.coordination.Setting;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One simulated broker process: node id, incarnation (drawn at each start), its view of the metadata log, and one
 * {@link SimReplica} per object it ever held.
 *
 * <p>It heartbeats the controller every {@code liveness.heartbeat_ms}; runs the controller while its metadata log
 * leads; answers seal, install and catch-up requests; and, every 50 ms, runs a minimal data path: group-commit fsync of
 * every replica, followers report their durable end to the owner they stream from, and each owner of an activated
 * object appends one record and streams its log to its followers. The owner computes the commit offset (the W-th
 * highest durable end over E, itself counted) and reports confirmed positions to the checker.
 *
 * <p>A crash loses every replica's un-fsynced suffix and all in-memory state. After a restart the broker never owns an
 * epoch its replica already held records of before the crash (it may have lost records its followers confirmed): it
 * waits for a new epoch. See docs/simulator.md on what that means for an owner that restarts before it is declared
 * down.
 */
public final class SimBroker {
    private static final long DATA_PERIOD_MS = 50;

    private record Streaming(NodeId owner, long epoch) {}

    private static final class Owning {
        final long epoch;
        final TreeMap<NodeId, LogPosition> acks = new TreeMap<>();

        Owning(long epoch) {
            this.epoch = epoch;
        }
    }

    private final SimCluster cluster;
    private final NodeId id;
    private final SimMetadataLog log;
    private final TreeMap<ObjectId, SimReplica> replicas = new TreeMap<>();
    private final TreeMap<ObjectId, Long> installedEpoch = new TreeMap<>();
    private final TreeMap<ObjectId, Long> fencedThrough = new TreeMap<>();
    private final TreeMap<ObjectId, Streaming> streaming = new TreeMap<>();
    private final TreeMap<ObjectId, Owning> owning = new TreeMap<>();
    private Incarnation incarnation = new Incarnation(0);
    private boolean alive;
    private boolean draining;
    private long generation;
    private SimController controller;
    private long appended;

    SimBroker(SimCluster cluster, NodeId id, SimMetadataLog log) {
        this.cluster = cluster;
        this.id = id;
        this.log = log;
        log.onLeaderChange(this::leadership);
    }

    public NodeId id() {
        return id;
    }

    public boolean alive() {
        return alive;
    }

    public Incarnation incarnation() {
        return incarnation;
    }

    public SimMetadataLog log() {
        return log;
    }

    public boolean draining() {
        return draining;
    }

    public long appended() {
        return appended;
    }

    /** The replica of {@code object} on this broker (an empty one if it never held it). */
    public SimReplica replica(ObjectId object) {
        return replicas.computeIfAbsent(object, unused -> new SimReplica());
    }

    /** False when this broker restarted after holding records of {@code epoch}: it refuses to own that epoch. */
    public boolean mayOwn(ObjectId object, long epoch) {
        return fencedThrough.getOrDefault(object, 0L) < epoch;
    }

    SimController controller() {
        return controller;
    }

    void start() {
        if (alive) {
            return;
        }
        alive = true;
        incarnation = new Incarnation(cluster.random().nextLong());
        generation++;
        long gen = generation;
        cluster.scheduler().trace("start " + id + " " + incarnation);
        cluster.scheduler().after(cluster.random().nextLong(50), "hb " + id, () -> heartbeat(gen));
        cluster.scheduler().after(cluster.random().nextLong(DATA_PERIOD_MS), "data " + id, () -> data(gen));
        if (log.isLeader()) {
            leadership(true);
        }
    }

    void crash() {
        if (!alive) {
            return;
        }
        alive = false;
        generation++;
        cluster.scheduler().trace("crash " + id);
        for (Map.Entry<ObjectId, SimReplica> entry : replicas.entrySet()) {
            SimReplica replica = entry.getValue();
            replica.crash();
            fencedThrough.merge(entry.getKey(), replica.lastEpoch(), Math::max);
        }
        streaming.clear();
        owning.clear();
        if (controller != null) {
            controller.stop();
            controller = null;
        }
    }

    void draining(boolean next) {
        draining = next;
    }

    private long setting(Setting setting) {
        return log.image().coordination().settings().value(setting);
    }

    private void leadership(boolean leads) {
        if (leads && alive && controller == null) {
            controller = new SimController(cluster, this);
        } else if (!leads && controller != null) {
            controller.stop();
            controller = null;
        }
    }

    private void heartbeat(long gen) {
        if (gen != generation) {
            return;
        }
        Incarnation label = incarnation;
        boolean leaving = draining;
        cluster.quorum()
                .readyLeader()
                .ifPresent(leader -> cluster.network()
                        .send(
                                id,
                                leader,
                                "hb " + id + ">" + leader,
                                () -> cluster.broker(leader).receiveHeartbeat(id, label, leaving)));
        cluster.scheduler().after(setting(RuntimeSettings.HEARTBEAT_MS), "hb " + id, () -> heartbeat(gen));
    }

    private void receiveHeartbeat(NodeId from, Incarnation label, boolean leaving) {
        if (alive && controller != null) {
            controller.heartbeat(from, label, leaving);
        }
    }

    /** The controller's connection to {@code node} closed (a crash, or a partition noticed by keepalive). */
    void connectionClosed(NodeId node) {
        if (alive && controller != null) {
            controller.connectionClosed(node);
        }
    }

    private void data(long gen) {
        if (gen != generation) {
            return;
        }
        cluster.scheduler().after(DATA_PERIOD_MS, "data " + id, () -> data(gen));
        List<ObjectId> synced = new ArrayList<>();
        for (Map.Entry<ObjectId, SimReplica> entry : replicas.entrySet()) {
            if (entry.getValue().durable() < entry.getValue().end()) {
                entry.getValue().fsync();
                synced.add(entry.getKey());
            }
        }
        for (ObjectId object : synced) {
            Streaming source = streaming.get(object);
            if (source != null) {
                LogPosition durable = replica(object).durablePosition();
                cluster.network()
                        .send(
                                id,
                                source.owner(),
                                "ack " + object + " " + id,
                                () -> cluster.broker(source.owner()).receiveAck(object, source.epoch(), id, durable));
            }
        }
        var image = log.image().coordination();
        for (Map.Entry<ObjectId, Assignment> entry :
                image.projectedAssignments().entrySet()) {
            ObjectId object = entry.getKey();
            Assignment assignment = entry.getValue();
            AcceptedHistory history = image.objects().get(object);
            long epoch = assignment.epoch().value();
            if (!assignment.owner().equals(id)
                    || !history.installedInCommitted().contains(id)
                    || fencedThrough.getOrDefault(object, 0L) >= epoch) {
                continue;
            }
            Owning state = owning.get(object);
            if (state == null || state.epoch != epoch) {
                state = new Owning(epoch);
                owning.put(object, state);
            }
            confirm(object, state, history.spec().writeRequirement(), assignment);
            SimReplica replica = replica(object);
            if (!replica.append(epoch)) {
                continue;
            }
            appended++;
            SimReplica snapshot = replica.copy();
            for (NodeId follower : assignment.followers()) {
                cluster.network()
                        .send(
                                id,
                                follower,
                                "repl " + object + " " + follower,
                                () -> cluster.broker(follower).receiveReplicate(object, epoch, id, snapshot));
            }
        }
    }

    private void confirm(ObjectId object, Owning state, int w, Assignment assignment) {
        List<Long> durable = new ArrayList<>();
        LogPosition own = replica(object).durablePosition();
        if (own.epoch().value() == state.epoch) {
            durable.add(own.offset());
        }
        for (NodeId follower : assignment.followers()) {
            LogPosition reported = state.acks.get(follower);
            if (reported != null && reported.epoch().value() == state.epoch) {
                durable.add(reported.offset());
            }
        }
        if (durable.size() >= w) {
            durable.sort((a, b) -> Long.compare(b, a));
            cluster.invariants().confirmed(object, LogPosition.of(state.epoch, durable.get(w - 1)));
        }
    }

    private void receiveAck(ObjectId object, long epoch, NodeId from, LogPosition durable) {
        Owning state = owning.get(object);
        if (!alive || state == null || state.epoch != epoch) {
            return;
        }
        state.acks.merge(from, durable, (a, b) -> a.compareTo(b) >= 0 ? a : b);
        Assignment assignment =
                log.image().coordination().projectedAssignments().get(object);
        if (assignment != null && assignment.epoch().value() == epoch) {
            confirm(
                    object,
                    state,
                    log.image().coordination().objects().get(object).spec().writeRequirement(),
                    assignment);
        }
    }

    private void receiveReplicate(ObjectId object, long epoch, NodeId owner, SimReplica snapshot) {
        if (!alive) {
            return;
        }
        SimReplica replica = replica(object);
        if (replica.sealedEpoch() >= epoch
                || replica.lastEpoch() > epoch
                || installedEpoch.getOrDefault(object, 0L) > epoch
                || replica.commonPrefix(snapshot) < replica.end() + 1) {
            return;
        }
        replica.copyFrom(snapshot, snapshot.end(), false);
        streaming.put(object, new Streaming(owner, epoch));
    }

    void receiveRequest(RecoveryRequest request, NodeId from) {
        if (!alive) {
            return;
        }
        ObjectId object = request.object();
        SimReplica replica = replica(object);
        switch (request) {
            case RecoveryRequest.Seal seal -> {
                replica.seal(seal.epoch(), !cluster.config().has(Bug.SEAL_WITHOUT_FENCE));
                SealReply reply = new SealReply(id, replica.position(), replica.durable());
                cluster.invariants().sealed(object, seal.epoch(), id, reply.logEnd());
                reply(
                        from,
                        "seal-reply " + object + " " + id,
                        controller -> controller.sealReply(object, seal.epoch(), reply));
            }
            case RecoveryRequest.Install install -> {
                LogPosition point = install.point();
                SimReplica source = null;
                if (point.offset() < 0) {
                    source = new SimReplica();
                } else {
                    for (NodeId node : install.sources()) {
                        SimBroker candidate = cluster.broker(node);
                        SimReplica held = candidate.replica(object);
                        if (candidate.alive()
                                && cluster.network().connected(id, node)
                                && held.end() >= point.offset()
                                && held.epochAt(point.offset()) == point.epoch().value()) {
                            source = held;
                            break;
                        }
                    }
                }
                if (source == null) {
                    return;
                }
                replica.copyFrom(source, point.offset(), true);
                installed(object, install.epoch(), from);
            }
            case RecoveryRequest.CatchUp catchUp -> {
                SimBroker owner = cluster.broker(catchUp.owner());
                if (!owner.alive() || !cluster.network().connected(id, owner.id())) {
                    return;
                }
                SimReplica source = owner.replica(object);
                long common = replica.commonPrefix(source);
                if (common >= replica.end() + 1) {
                    replica.copyFrom(source, source.end(), true);
                } else if (common < source.end() + 1) {
                    replica.copyFrom(source, source.end(), true); // divergent suffix: truncate, then copy
                } else {
                    replica.fsync(); // the owner's log is a prefix of ours: keep what we have
                }
                installed(object, catchUp.epoch(), from);
            }
        }
    }

    private void installed(ObjectId object, Epoch epoch, NodeId controllerNode) {
        installedEpoch.merge(object, epoch.value(), Math::max);
        reply(controllerNode, "installed " + object + " " + id, controller -> controller.installed(object, epoch, id));
    }

    private void reply(NodeId controllerNode, String label, java.util.function.Consumer<SimController> action) {
        cluster.network().send(id, controllerNode, label, () -> {
            SimBroker target = cluster.broker(controllerNode);
            if (target.alive && target.controller != null) {
                action.accept(target.controller);
            }
        });
    }
}
