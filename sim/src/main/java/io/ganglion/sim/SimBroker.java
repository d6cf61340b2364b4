package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.SealReply;
import io.ganglion.coordination.Setting;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.replication.PeerMessage;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.replication.Replica;
import io.ganglion.replication.ReplicaEffect;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.replication.ReplicationConfig;
import io.ganglion.serving.PublishIntake;
import io.ganglion.serving.QueueOwner;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One simulated broker process: node id, incarnation (drawn at each start), its view of the metadata log, one {@link
 * SimReplica} (storage, survives crashes) and one {@link Replica} state machine (memory, does not) per object, and the
 * owner side of each queue it owns ({@link QueueMachine}, consumers and their leases).
 *
 * <p>It heartbeats the controller every {@code liveness.heartbeat_ms}; runs the controller while its metadata log
 * leads; turns seal, install and catch-up requests, peer messages, publishes, acks and its view of the metadata image
 * into {@link ReplicaEvent}s; and executes the {@link ReplicaEffect}s: appends and truncations on the simulated disk
 * with a group-commit fsync after the node's fsync latency, peer messages over the simulated network, replies to the
 * controller, confirms to publishers, and deliveries of committed records through the queue's {@link QueueMachine}.
 *
 * <p>A crash loses every machine and queue and, on disk, what was not fsynced (a random part of it survives, the last
 * record possibly torn); the machines are rebuilt from disk at the next use.
 */
public final class SimBroker {
    static final long DATA_PERIOD_MS = 50;
    private static final long LEASE_MS = 600;
    private static final int PREFETCH = 20;
    private static final ByteBuffer BODIES = ByteBuffer.allocate(4096).asReadOnlyBuffer();

    /**
     * The owner side of one queue: the shipping {@link QueueOwner} over this broker's replica, and the leases of the
     * consumers subscribed in the epoch it serves (on other brokers: a lease lapses unless refreshed).
     */
    private final class OwnedQueue implements QueueOwner.Host, QueueEffects {
        final ObjectId object;
        final QueueOwner owner;
        final TreeMap<ConsumerKey, Lease> leases = new TreeMap<>((a, b) -> a.channel() != b.channel()
                ? Long.compare(a.channel(), b.channel())
                : a.tag().compareTo(b.tag()));
        /** Channels closed here: never reopened, so no delivery of theirs can arrive after a redelivery. */
        final java.util.HashSet<ConsumerKey> closed = new java.util.HashSet<>();

        OwnedQueue(ObjectId object) {
            this.object = object;
            java.util.EnumSet<QueueOwner.Fault> faults = java.util.EnumSet.noneOf(QueueOwner.Fault.class);
            if (cluster.config().has(Bug.DELIVER_ON_EXPIRED_LEASE)) {
                faults.add(QueueOwner.Fault.DELIVER_ON_EXPIRED_LEASE);
            }
            if (cluster.config().has(Bug.DISCARD_INSIDE_RESEND_WINDOW)) {
                faults.add(QueueOwner.Fault.DISCARD_INSIDE_RESEND_WINDOW);
            }
            if (cluster.config().has(Bug.REBUILD_WITHOUT_EXPIRY)) {
                faults.add(QueueOwner.Fault.REBUILD_WITHOUT_EXPIRY);
            }
            this.owner = new QueueOwner(this, this, faults);
        }

        /** The epoch served, if the replica still owns it. */
        Optional<Epoch> epoch() {
            Optional<Epoch> served = owner.epoch();
            return served.isPresent() && machine(object).owning().equals(served) ? served : Optional.empty();
        }

        @Override
        public Optional<Epoch> owning() {
            return machine(object).owning();
        }

        @Override
        public boolean mayDeliver(Epoch epoch, long nowMs) {
            return cluster.config().has(Bug.NO_OWNER_LEASE) || machine(object).mayDeliver(epoch, nowMs);
        }

        @Override
        public long start() {
            return machine(object).start();
        }

        @Override
        public long end() {
            return machine(object).end();
        }

        @Override
        public List<Record> read(long from, long to) {
            return replica(object).read(from, to);
        }

        @Override
        public long resendWindowMs() {
            return SimWorkload.RESEND_WINDOW_MS;
        }

        /** From the owner's admission time and the run's message TTL, as the broker's {@code ReplicatedQueue}. */
        @Override
        public long expiresAtMs(Record.Message message) {
            return cluster.config().expiresAtMs(message.timestampMs());
        }

        @Override
        public void rebuilt(Epoch epoch, QueueMachine machine, int messages) {
            leases.clear(); // consumers subscribe again in the new epoch
            closed.clear();
        }

        @Override
        public void settledLowWater(long offset) {
            handle(object, new ReplicaEvent.SettledLowWater(offset));
        }

        @Override
        public void held() {
            cluster.stats().deliveryHolds++;
        }

        @Override
        public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
            Lease lease = leases.get(consumer);
            Record record = replica(object).record(offset);
            if (lease == null || !(record instanceof Record.Message message)) {
                return;
            }
            Epoch epoch = owner.epoch().orElseThrow();
            lease.held.add(offset);
            cluster.invariants().delivering(object, id, epoch, message, redelivered);
            cluster.workload().deliver(id, lease.node, object, epoch, consumer, offset, message.id(), redelivered);
        }

        @Override
        public void expired(long offset) {
            if (replica(object).record(offset) instanceof Record.Message message) {
                cluster.invariants().expired(object, id, message);
            }
            settle(offset);
        }

        @Override
        public void settle(long offset) {
            long gen = generation;
            cluster.scheduler().after(0, "settle", () -> {
                if (gen == generation) {
                    handle(object, new ReplicaEvent.SettleAdmitted(offset));
                }
            });
        }
    }

    private static final class Lease {
        final NodeId node;
        long refreshedMs;
        final TreeSet<Long> held = new TreeSet<>();

        Lease(NodeId node) {
            this.node = node;
        }
    }

    private final SimCluster cluster;
    private final NodeId id;
    private final SimMetadataLog log;
    private final ReplicationConfig replicationConfig = ReplicationConfig.defaults();
    private final TreeMap<ObjectId, SimReplica> disks = new TreeMap<>();
    private final TreeMap<ObjectId, Replica> machines = new TreeMap<>();
    private final TreeMap<ObjectId, String> views = new TreeMap<>();
    private final TreeMap<ObjectId, OwnedQueue> queues = new TreeMap<>();
    private final TreeMap<ObjectId, PublishIntake<Answer>> intakes = new TreeMap<>();
    private SimForwarding forwarding;
    private Incarnation incarnation = new Incarnation(0);
    private boolean alive;
    private boolean draining;
    private long generation;
    private SimController controller;
    private long appended;
    private long fsyncLatencyMs = 2;
    private boolean fsyncScheduled;

    SimBroker(SimCluster cluster, NodeId id, SimMetadataLog log) {
        this.cluster = cluster;
        this.id = id;
        this.log = log;
        log.onLeaderChange(this::leadership);
        log.subscribe(image -> {
            if (alive) {
                refreshViews();
                controller.imageChanged();
                forwarding.ownersMayHaveChanged();
            }
        });
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

    /** Counts this broker's starts and crashes: what was scheduled in an earlier one is void. */
    long generation() {
        return generation;
    }

    /** This incarnation's forwarding of its clients' publishes; null while down. */
    SimForwarding forwarding() {
        return forwarding;
    }

    public SimMetadataLog log() {
        return log;
    }

    public boolean draining() {
        return draining;
    }

    /** Messages this broker appended as an owner. */
    public long appended() {
        return appended;
    }

    /** The storage of {@code object}'s replica on this broker (an empty one if it never held it). */
    public SimReplica replica(ObjectId object) {
        return disks.computeIfAbsent(object, unused -> new SimReplica());
    }

    /** The state machine of {@code object} on this broker, rebuilt from storage after a restart. */
    public Replica machine(ObjectId object) {
        Replica machine = machines.get(object);
        if (machine == null) {
            machine = Replica.start(
                    object, id, incarnation, replicationConfig, replica(object).recovered());
            machines.put(object, machine);
        }
        return machine;
    }

    /** False when this broker's replica can never own {@code epoch} (it held records of it before a restart). */
    public boolean mayOwn(ObjectId object, long epoch) {
        return machine(object).mayOwn(Epoch.of(epoch));
    }

    /** The controller runtime if this broker runs the controller now, else null. */
    SimController controller() {
        return alive && controller != null && controller.active() ? controller : null;
    }

    void fsyncLatency(long ms) {
        fsyncLatencyMs = ms;
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
        controller = new SimController(cluster, this);
        // its publisher id in the logs: one per incarnation, as the broker's
        forwarding = new SimForwarding(cluster, this, gen, incarnation.value() & Long.MAX_VALUE);
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
        for (Map.Entry<ObjectId, SimReplica> entry : disks.entrySet()) {
            entry.getValue().crash(cluster.random());
            cluster.invariants().crashed(entry.getKey(), id, entry.getValue());
        }
        machines.clear();
        views.clear();
        queues.clear();
        intakes.clear();
        forwarding = null;
        fsyncScheduled = false;
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
        if (alive && controller != null) {
            controller.leadership(leads);
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

    /** This broker's connection to {@code node} closed (a crash, or a partition noticed by keepalive). */
    void connectionClosed(NodeId node) {
        if (alive && controller != null) {
            controller.connectionClosed(node);
        }
    }

    // ---- the view: activated assignments become Assigned / Unassigned ----------------------------------------------

    private void refreshViews() {
        CoordinationImage image = log.image().coordination();
        long protect = image.settings().value(RuntimeSettings.RETENTION_PROTECT_MS);
        for (AcceptedHistory history : image.objects().values()) {
            ObjectId object = history.id();
            Optional<Assignment> active = history.validate();
            ReplicaEvent event;
            String key;
            if (active.isPresent() && active.get().hasMember(id)) {
                Assignment assignment = active.get();
                int w = history.spec().writeRequirement();
                if (cluster.config().has(Bug.CONFIRM_AT_W_MINUS_ONE)) {
                    w = Math.max(1, w - 1);
                }
                event = new ReplicaEvent.Assigned(
                        assignment, w, history.installedInCommitted(), history.leavingInCommitted(), protect);
                key = assignment + "|" + history.installedInCommitted() + "|" + history.leavingInCommitted() + "|"
                        + protect;
            } else {
                if (!machines.containsKey(object) && !disks.containsKey(object)) {
                    continue;
                }
                event = new ReplicaEvent.Unassigned();
                key = "none";
            }
            if (!key.equals(views.get(object))) {
                views.put(object, key);
                handle(object, event);
                PublishIntake<Answer> intake = intakes.get(object);
                if (intake != null && (active.isEmpty() || !active.get().owner().equals(id))) {
                    intake.dropInFlight("its owner moved", true); // as the broker does when another broker owns
                }
            }
        }
    }

    private void data(long gen) {
        if (gen != generation) {
            return;
        }
        cluster.scheduler().after(DATA_PERIOD_MS, "data " + id, () -> data(gen));
        refreshViews();
        ReplicaEvent tick = new ReplicaEvent.Tick();
        for (ObjectId object : new ArrayList<>(machines.keySet())) {
            handle(object, tick);
        }
        long now = cluster.now();
        for (Map.Entry<ObjectId, OwnedQueue> entry : new ArrayList<>(queues.entrySet())) {
            OwnedQueue owned = entry.getValue();
            if (owned.epoch().isEmpty()) {
                queues.remove(entry.getKey());
                continue;
            }
            owned.owner.tick(now);
            for (Map.Entry<ConsumerKey, Lease> lease : new ArrayList<>(owned.leases.entrySet())) {
                if (now - lease.getValue().refreshedMs > LEASE_MS) {
                    closeChannel(owned, lease.getKey());
                }
            }
        }
    }

    // ---- events in, effects out ----------------------------------------------------------------------------------

    private void handle(ObjectId object, ReplicaEvent event) {
        if (!alive) {
            return;
        }
        Replica machine = machine(object);
        List<ReplicaEffect> effects = machine.onEvent(event, cluster.now());
        for (ReplicaEffect effect : effects) {
            execute(object, machine, effect);
        }
        if (event instanceof ReplicaEvent.Assigned
                || event instanceof ReplicaEvent.Unassigned
                || event instanceof ReplicaEvent.SealRequested
                || event instanceof ReplicaEvent.InstallRequested
                || event instanceof ReplicaEvent.Received) {
            PublishIntake<Answer> intake = intakes.get(object);
            if (intake != null && alive) {
                intake.rolesMayHaveChanged(cluster.now());
            }
        }
    }

    private void execute(ObjectId object, Replica machine, ReplicaEffect effect) {
        SimReplica disk = replica(object);
        long gen = generation;
        switch (effect) {
            case ReplicaEffect.Append append -> {
                disk.append(append.records());
                if (machine.owning().isPresent()) {
                    appended += append.records().size();
                }
                scheduleFsync();
            }
            case ReplicaEffect.Truncate truncate -> disk.truncate(truncate.from());
            case ReplicaEffect.Flush flush -> {
                disk.requestFlush();
                scheduleFsync();
            }
            case ReplicaEffect.PersistSeal seal -> {
                disk.requestSeal(seal.epoch().value());
                scheduleFsync();
            }
            case ReplicaEffect.Discard discard -> disk.discard(discard.below());
            case ReplicaEffect.Reseed reseed -> {
                cluster.stats().reseeds++;
                disk.reseed(reseed.start(), reseed.history());
            }
            case ReplicaEffect.ReadLog read ->
                cluster.scheduler().after(0, "read", () -> {
                    if (gen == generation) {
                        handle(
                                object,
                                new ReplicaEvent.LogRead(
                                        read.purpose(),
                                        read.peer(),
                                        replica(object).read(read.from(), read.to())));
                    }
                });
            case ReplicaEffect.Send send -> {
                PeerMessage message = send.message();
                cluster.network()
                        .send(
                                id,
                                send.to(),
                                "peer",
                                () -> cluster.broker(send.to()).receivePeer(object, id, message));
            }
            case ReplicaEffect.ReplySealed sealed -> {
                cluster.invariants()
                        .sealed(object, sealed.epoch(), id, sealed.reply().logEnd());
                SealReply reply = sealed.reply();
                reply(
                        sealed.controller(),
                        "seal-reply " + object + " " + id,
                        c -> c.sealReply(object, sealed.epoch(), reply));
            }
            case ReplicaEffect.ReplyInstalled installed -> {
                if (!cluster.config().has(Bug.ACTIVATE_BEFORE_INSTALL)) {
                    installed(object, installed.epoch(), installed.controller());
                }
            }
            case ReplicaEffect.ReplyDropped dropped -> {
                if (!cluster.config().has(Bug.DROP_WITHOUT_PROOF)) {
                    reply(
                            dropped.controller(),
                            "dropped " + object + " " + id,
                            c -> c.dropped(object, dropped.epoch(), dropped.follower()));
                }
            }
            case ReplicaEffect.Confirm confirm -> {
                cluster.invariants().confirming(object, id, confirm.offset());
                intake(object).confirmed(confirm.id());
            }
            case ReplicaEffect.Refuse refuse -> intake(object).refused(refuse.id(), refuse.reason());
            case ReplicaEffect.Deliverable deliverable -> {
                cluster.invariants().confirmed(object, new LogPosition(deliverable.epoch(), deliverable.upTo()));
                deliverable(object, deliverable.epoch(), deliverable.upTo());
            }
        }
    }

    private void scheduleFsync() {
        if (fsyncScheduled) {
            return;
        }
        fsyncScheduled = true;
        long gen = generation;
        cluster.scheduler().after(fsyncLatencyMs, "fsync " + id, () -> {
            if (gen == generation) {
                fsync();
            }
        });
    }

    /** Group commit: one fsync makes every replica's writes durable, then each machine hears of it. */
    private void fsync() {
        fsyncScheduled = false;
        boolean persistSeals = !cluster.config().has(Bug.SKIP_SEAL_PERSIST);
        List<ObjectId> synced = new ArrayList<>();
        List<Long> seals = new ArrayList<>();
        for (Map.Entry<ObjectId, SimReplica> entry : disks.entrySet()) {
            SimReplica disk = entry.getValue();
            if (disk.dirty()) {
                seals.add(disk.pendingSeal());
                disk.fsync(persistSeals);
                synced.add(entry.getKey());
            }
        }
        for (int i = 0; i < synced.size(); i++) {
            ObjectId object = synced.get(i);
            handle(object, new ReplicaEvent.AppendDurable(replica(object).end()));
            if (seals.get(i) > 0) {
                handle(object, new ReplicaEvent.SealPersisted(Epoch.of(seals.get(i))));
            }
        }
    }

    void receivePeer(ObjectId object, NodeId from, PeerMessage message) {
        handle(object, new ReplicaEvent.Received(from, message));
    }

    /** Where the intake's answer to one publish goes: the forwarding of broker {@code to} in its {@code generation}. */
    private record Answer(NodeId to, long generation, long sequence) {}

    /**
     * A publish forwarded by broker {@code from} (this one included) as its {@code sequence}: the broker's intake admits
     * it under the epoch its replica takes publishes in, holds it for the next one, or sends it back.
     */
    void receivePublish(
            ObjectId object,
            PublishId publish,
            long after,
            int bytes,
            NodeId from,
            long fromGeneration,
            long sequence) {
        if (alive) {
            intake(object)
                    .publish(
                            publish,
                            after,
                            BODIES.slice(0, bytes),
                            new Answer(from, fromGeneration, sequence),
                            cluster.now());
        }
    }

    /**
     * The intake's answer travels to the forwarding broker: through the network, or, for this broker's own, after a
     * turn of the scheduler (the broker hops between the queue's shard and the lanes' thread).
     */
    private void answer(Answer answer, boolean refused) {
        SimBroker to = cluster.broker(answer.to());
        Runnable deliver = () -> {
            if (to.alive() && to.generation() == answer.generation()) {
                to.forwarding().answered(answer.sequence(), refused);
            }
        };
        if (answer.to().equals(id)) {
            cluster.scheduler().after(0, "answer", deliver);
            return;
        }
        cluster.network().send(id, answer.to(), refused ? "refuse" : "confirm", deliver, () -> {
            if (to.alive() && to.generation() == answer.generation()) {
                to.forwarding().linkClosed(id);
            }
        });
    }

    /** The intake of publishes for {@code object} in this incarnation: the broker's own ({@link PublishIntake}). */
    private PublishIntake<Answer> intake(ObjectId object) {
        PublishIntake<Answer> intake = intakes.get(object);
        if (intake == null) {
            intake = new PublishIntake<>(new IntakeRoles(object), new IntakeEffects(object, generation));
            intakes.put(object, intake);
        }
        return intake;
    }

    /** The replica's roles, read at each call. */
    private final class IntakeRoles implements PublishIntake.Roles {
        private final ObjectId object;

        IntakeRoles(ObjectId object) {
            this.object = object;
        }

        @Override
        public Optional<Epoch> takingPublishes() {
            return machine(object).takingPublishes();
        }

        @Override
        public boolean awaitingEpoch() {
            return machine(object).awaitingEpoch();
        }
    }

    /** The intake's answers travel back to the publisher; its timer is the scheduler, dead with this incarnation. */
    private final class IntakeEffects implements PublishIntake.Effects<Answer> {
        private final ObjectId object;
        private final long gen;

        IntakeEffects(ObjectId object, long gen) {
            this.object = object;
            this.gen = gen;
        }

        @Override
        public void admit(ReplicaEvent.PublishAdmitted admitted) {
            handle(object, admitted);
        }

        @Override
        public void confirmed(Answer done) {
            answer(done, false);
        }

        @Override
        public void moved(Answer done, String why) {
            answer(done, true);
        }

        @Override
        public void failed(Answer done, String why) {
            answer(done, true);
        }

        @Override
        public void wakeIn(long delayMs) {
            cluster.scheduler().after(delayMs, "park " + id, () -> {
                if (gen == generation) {
                    intake(object).expire(cluster.now());
                }
            });
        }

        @Override
        public void released(int count, boolean admitted, long heldMs) {
            if (admitted) {
                cluster.stats().parkedAdmitted += count;
            }
        }
    }

    void receiveRequest(RecoveryRequest request, NodeId from) {
        if (!alive) {
            return;
        }
        ObjectId object = request.object();
        switch (request) {
            case RecoveryRequest.Seal seal -> {
                if (cluster.config().has(Bug.SEAL_WITHOUT_FENCE)) {
                    // answers from its disk without telling the state machine: appends go on after the seal
                    SimReplica disk = replica(object);
                    disk.fsync(true);
                    SealReply reply = new SealReply(id, disk.position(), disk.durable());
                    cluster.invariants().sealed(object, seal.epoch(), id, reply.logEnd());
                    reply(from, "seal-reply " + object + " " + id, c -> c.sealReply(object, seal.epoch(), reply));
                } else {
                    handle(object, new ReplicaEvent.SealRequested(from, seal.epoch()));
                }
            }
            case RecoveryRequest.Install install -> {
                if (cluster.config().has(Bug.ACTIVATE_BEFORE_INSTALL)) {
                    installed(object, install.epoch(), from); // acknowledged before anything was copied
                }
                handle(
                        object,
                        new ReplicaEvent.InstallRequested(from, install.epoch(), install.point(), install.sources()));
            }
            case RecoveryRequest.Drop drop -> {
                if (cluster.config().has(Bug.DROP_WITHOUT_PROOF)) {
                    // answered at once, before the members left hold what was confirmed with the leaving follower
                    reply(from, "dropped " + object + " " + id, c -> c.dropped(object, drop.epoch(), drop.follower()));
                } else {
                    handle(object, new ReplicaEvent.DropRequested(from, drop.epoch(), drop.follower()));
                }
            }
            case RecoveryRequest.CatchUp catchUp -> {
                if (cluster.config().has(Bug.ACTIVATE_BEFORE_INSTALL)) {
                    installed(object, catchUp.epoch(), from);
                }
                handle(object, new ReplicaEvent.CatchUpRequested(from, catchUp.epoch(), catchUp.owner()));
            }
        }
    }

    private void installed(ObjectId object, Epoch epoch, NodeId controllerNode) {
        reply(controllerNode, "installed " + object + " " + id, c -> c.installed(object, epoch, id));
    }

    private void reply(NodeId controllerNode, String label, java.util.function.Consumer<SimController> action) {
        cluster.network().send(id, controllerNode, label, () -> {
            SimBroker target = cluster.broker(controllerNode);
            if (target.alive && target.controller != null) {
                action.accept(target.controller);
            }
        });
    }

    // ---- the owner side of queues --------------------------------------------------------------------------------

    private boolean isQueue(ObjectId object) {
        return log.image()
                .coordination()
                .object(object)
                .map(history -> history.spec().kind() == ObjectKind.QUEUE)
                .orElse(false);
    }

    /** The commit offset advanced: the queue takes the committed messages (after a failover, rebuilt from the log). */
    private void deliverable(ObjectId object, Epoch epoch, long upTo) {
        if (!isQueue(object)) {
            return;
        }
        if (!machine(object).owning().equals(Optional.of(epoch))) {
            queues.remove(object);
            return;
        }
        try {
            queues.computeIfAbsent(object, OwnedQueue::new).owner.deliverable(epoch, upTo, cluster.now());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e); // the simulated disk reads from memory
        }
    }

    /** The queue this broker owns in {@code epoch}, if its replica still owns that epoch. */
    private OwnedQueue ownedQueue(ObjectId object, Epoch epoch) {
        OwnedQueue owned = queues.get(object);
        if (!alive || owned == null) {
            return null;
        }
        Optional<Epoch> served = owned.epoch();
        if (served.isEmpty()) {
            queues.remove(object); // no longer the owner: what it held is recovered by the next one
            return null;
        }
        return served.get().equals(epoch) ? owned : null;
    }

    /** A consumer's channel closed: its unacknowledged messages go back, marked redelivered. */
    void channelClosed(ObjectId object, Epoch epoch, ConsumerKey consumer) {
        OwnedQueue owned = ownedQueue(object, epoch);
        if (owned == null) {
            return;
        }
        closeChannel(owned, consumer);
    }

    /** The consumer's channel is gone: what it held goes back, marked redelivered, and the consumer hears of it. */
    private void closeChannel(OwnedQueue owned, ConsumerKey consumer) {
        owned.closed.add(consumer);
        Lease lease = owned.leases.remove(consumer);
        if (lease != null) {
            QueueMachine queue = owned.owner.gated(cluster.now());
            queue.cancel(consumer);
            queue.requeue(lease.held.stream().mapToLong(Long::longValue).toArray(), owned);
            cluster.workload().closed(id, lease.node, owned.object, consumer);
        }
    }

    /** A consumer on {@code node} (re)subscribes, or refreshes its lease. */
    void receiveSubscribe(ObjectId object, Epoch epoch, ConsumerKey consumer, NodeId node) {
        OwnedQueue owned = ownedQueue(object, epoch);
        if (owned == null) {
            return;
        }
        if (owned.closed.contains(consumer)) {
            cluster.workload().closed(id, node, object, consumer);
            return;
        }
        Lease lease = owned.leases.get(consumer);
        if (lease == null) {
            lease = new Lease(node);
            owned.leases.put(consumer, lease);
            lease.refreshedMs = cluster.now();
            owned.owner.gated(cluster.now()).consume(consumer, PREFETCH, false, false, owned);
        }
        lease.refreshedMs = cluster.now();
    }

    void receiveAck(ObjectId object, Epoch epoch, ConsumerKey consumer, long offset, boolean requeue) {
        OwnedQueue owned = ownedQueue(object, epoch);
        if (owned == null) {
            return;
        }
        Lease lease = owned.leases.get(consumer);
        if (lease == null || !lease.held.remove(offset)) {
            return;
        }
        QueueMachine queue = owned.owner.gated(cluster.now());
        if (requeue) {
            queue.reject(offset, true, owned);
        } else {
            queue.ack(offset, owned);
        }
    }

    /** Ready and unacknowledged messages of the queue this broker owns, or -1 when it owns none. */
    public int queueDepth(ObjectId object) {
        OwnedQueue owned = queues.get(object);
        if (owned == null || !owned.owner.serving()) {
            return -1;
        }
        QueueMachine queue = owned.owner.machine();
        return queue.readyCount() + queue.unackedCount();
    }
}
