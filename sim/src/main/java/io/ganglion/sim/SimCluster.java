package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.coordination.Setting;
import io.ganglion.metadata.MetadataCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * A simulated cluster: brokers {@code n1..nN}, the network between them, the metadata quorum, and the checker, all on
 * one {@link Scheduler} and one {@link SplittableRandom} seeded from the config. The methods are the faults and
 * operations a test applies; time moves only in {@link #runFor}.
 */
public final class SimCluster {
    private static final long CHECK_PERIOD_MS = 500;

    private final SimConfig config;
    private final Scheduler scheduler = new Scheduler();
    private final SplittableRandom random;
    private final SimNetwork network;
    private final SimMetadataQuorum quorum;
    private final TreeMap<NodeId, SimBroker> brokers = new TreeMap<>();
    private final Invariants invariants;
    private final SimStats stats = new SimStats();
    private final SimWorkload workload;

    public SimCluster(SimConfig config) {
        this.config = config;
        this.random = new SplittableRandom(config.seed());
        List<NodeId> ids = new ArrayList<>();
        for (int i = 1; i <= config.nodes(); i++) {
            ids.add(NodeId.of("n" + i));
        }
        network = new SimNetwork(scheduler, random, ids, config.dropRate());
        quorum = new SimMetadataQuorum(
                scheduler, random, network, id -> brokers.get(id).alive());
        invariants = new Invariants(this);
        workload = new SimWorkload(this);
        quorum.onCommit(invariants::onCommit);
        for (NodeId id : ids) {
            SimBroker broker = new SimBroker(this, id, quorum.log(id));
            broker.fsyncLatency(1 + random.nextLong(3));
            brokers.put(id, broker);
        }
        for (SimBroker broker : brokers.values()) {
            broker.start();
        }
        quorum.start();
        scheduler.after(CHECK_PERIOD_MS, "check", this::periodicCheck);
    }

    private void periodicCheck() {
        invariants.checkState();
        scheduler.after(CHECK_PERIOD_MS, "check", this::periodicCheck);
    }

    public SimConfig config() {
        return config;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    SplittableRandom random() {
        return random;
    }

    public SimNetwork network() {
        return network;
    }

    public SimMetadataQuorum quorum() {
        return quorum;
    }

    public Invariants invariants() {
        return invariants;
    }

    public SimStats stats() {
        return stats;
    }

    public SimWorkload workload() {
        return workload;
    }

    public SimBroker broker(NodeId id) {
        return brokers.get(id);
    }

    public SimBroker broker(String id) {
        return brokers.get(NodeId.of(id));
    }

    public List<SimBroker> brokers() {
        return List.copyOf(brokers.values());
    }

    public List<NodeId> nodes() {
        return List.copyOf(brokers.keySet());
    }

    public long now() {
        return scheduler.now();
    }

    public void runFor(long ms) {
        scheduler.runUntil(scheduler.now() + ms);
    }

    /** The broker running the controller now, if any. */
    public Optional<NodeId> controller() {
        for (SimBroker broker : brokers.values()) {
            if (broker.alive() && broker.controller() != null) {
                return Optional.of(broker.id());
            }
        }
        return Optional.empty();
    }

    /** The objects the current controller's last tick held under the follower loss hold. */
    public Map<ObjectId, List<NodeId>> held() {
        return controller()
                .map(node -> (Map<ObjectId, List<NodeId>>)
                        brokers.get(node).controller().held())
                .orElse(Map.of());
    }

    /** The coordination part of the reference image: everything committed so far. */
    public CoordinationImage image() {
        return quorum.image().coordination();
    }

    public AcceptedHistory history(ObjectId object) {
        return image().object(object).orElseThrow();
    }

    /**
     * Proposes {@code command} as an operator would (declarations, {@code ctl settings set}): through the leader, again
     * every 50 ms until it is committed.
     */
    public void admin(CoordinationCommand command) {
        Optional<NodeId> leader = quorum.readyLeader();
        if (leader.isEmpty() || !brokers.get(leader.get()).alive()) {
            scheduler.after(50, "admin-retry", () -> admin(command));
            return;
        }
        brokers.get(leader.get())
                .log()
                .propose(new MetadataCommand.Coordination(command))
                .whenComplete((applied, failure) -> {
                    if (failure != null) {
                        scheduler.after(50, "admin-retry", () -> admin(command));
                    }
                });
    }

    public ObjectId create(String name, ObjectKind kind, int copies, DurabilityMode mode) {
        ObjectId id = ObjectId.of("/", name);
        admin(new CoordinationCommand.CreateObject(new ObjectSpec(id, kind, copies, mode)));
        return id;
    }

    public ObjectId createQueue(String name, int copies, DurabilityMode mode) {
        return create(name, ObjectKind.QUEUE, copies, mode);
    }

    /** Creates an object with a publisher (one publish every {@code everyMs}) and, for a queue, a consumer. */
    public ObjectId createWithClients(String name, ObjectKind kind, int copies, DurabilityMode mode, long everyMs) {
        ObjectId id = create(name, kind, copies, mode);
        workload.attach(id, kind, everyMs);
        return id;
    }

    /** Gives {@code node} a slow disk: every fsync takes {@code ms}. */
    public void slowDisk(NodeId node, long ms) {
        scheduler.trace("slow-disk " + node + " " + ms);
        brokers.get(node).fsyncLatency(ms);
    }

    /** Delays every message between {@code a} and {@code b} by {@code ms} more (heartbeats included); 0 restores. */
    public void slowLink(NodeId a, NodeId b, long ms) {
        scheduler.trace("slow " + a + " " + b + " " + ms);
        network.slow(a, b, ms);
    }

    /** Cuts every link between {@code side} and the other nodes. */
    public void partition(List<NodeId> side) {
        for (NodeId a : side) {
            for (NodeId b : brokers.keySet()) {
                if (!side.contains(b)) {
                    partition(a, b);
                }
            }
        }
    }

    /**
     * Stops new publishes, runs until every publish was confirmed and every confirmed queue message delivered (at most
     * {@code boundMs}), then runs the total-queue check. True if the workload drained.
     */
    public boolean drainAndCheck(long boundMs) {
        workload.stopPublishing();
        long deadline = scheduler.now() + boundMs;
        while ((workload.unconfirmed() > 0 || invariants.undelivered() > 0) && scheduler.now() < deadline) {
            runFor(50);
        }
        boolean drained = workload.unconfirmed() == 0 && invariants.undelivered() == 0;
        invariants.checkTotalQueue();
        invariants.checkPublishOrder();
        return drained;
    }

    public void setting(Setting setting, long value) {
        scheduler.trace("setting " + setting.name() + "=" + value);
        admin(new CoordinationCommand.SetSettings(Map.of(setting.name(), Long.toString(value))));
    }

    /** Kills a broker process: its replicas lose what they had not fsynced; the controller sees the connection close. */
    public void crash(NodeId node) {
        SimBroker broker = brokers.get(node);
        if (!broker.alive()) {
            return;
        }
        stats.faults++;
        broker.crash();
        quorum.crashed(node);
        for (SimBroker other : brokers.values()) {
            if (other.alive() && network.connected(other.id(), node)) {
                scheduler.after(1 + random.nextLong(20), "closed " + node, () -> other.connectionClosed(node));
            }
        }
    }

    /** Starts a stopped broker with a new incarnation. */
    public void restart(NodeId node) {
        brokers.get(node).start();
    }

    public void killController() {
        controller().ifPresent(this::crash);
    }

    /** Cuts the link between {@code a} and {@code b}; a controller on either side notices by keepalive. */
    public void partition(NodeId a, NodeId b) {
        if (a.equals(b) || !network.connected(a, b)) {
            return;
        }
        stats.faults++;
        scheduler.trace("cut " + a + " " + b);
        network.cut(a, b);
        scheduler.after(
                50 + random.nextLong(150), "closed " + b, () -> brokers.get(a).connectionClosed(b));
        scheduler.after(
                50 + random.nextLong(150), "closed " + a, () -> brokers.get(b).connectionClosed(a));
    }

    /** Cuts every link of {@code node}. */
    public void isolate(NodeId node) {
        for (NodeId other : brokers.keySet()) {
            partition(node, other);
        }
    }

    public void heal(NodeId a, NodeId b) {
        scheduler.trace("heal " + a + " " + b);
        network.heal(a, b);
    }

    public void healAll() {
        scheduler.trace("heal-all");
        network.healAll();
    }

    public void drain(NodeId node, boolean draining) {
        scheduler.trace("drain " + node + " " + draining);
        brokers.get(node).draining(draining);
    }

    void dropRate(double rate) {
        network.dropRate(rate);
    }

    /** True when every object's history validates: activated, no recovery pending. */
    public boolean allActivated() {
        for (AcceptedHistory history : image().objects().values()) {
            if (history.validate().isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** Runs until every object is activated, for at most {@code boundMs}; true if they all were. */
    public boolean awaitAllActivated(long boundMs) {
        long deadline = scheduler.now() + boundMs;
        while (!allActivated() && scheduler.now() < deadline) {
            runFor(50);
        }
        return allActivated();
    }

    /** The final checks, and the run's result. */
    public SimResult finish(List<String> extraViolations) {
        invariants.checkState();
        List<String> violations = new ArrayList<>(invariants.violations());
        violations.addAll(extraViolations);
        String summary = config.nodes() + " nodes, " + image().objects().size() + " objects, "
                + (config.hasMessageTtl() ? "message TTL " + config.messageTtlMs() + " ms, " : "") + scheduler.now()
                + " ms virtual, " + scheduler.executed() + " events, " + quorum.committed() + " commands, "
                + quorum.leaderChanges() + " leaders, " + stats;
        return new SimResult(
                config.seed(),
                scheduler.traceHash(),
                scheduler.executed(),
                scheduler.now(),
                violations,
                stats,
                summary);
    }
}
