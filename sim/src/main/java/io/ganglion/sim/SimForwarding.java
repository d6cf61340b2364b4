package io.ganglion.sim;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.replication.PublishId;
import io.ganglion.serving.ForwardLanes;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One incarnation of a simulated broker forwarding its clients' publishes, as the broker's {@code ForwardingClient}
 * does, through the shipping {@link ForwardLanes}: a client's publish gets this incarnation's id (publisher,
 * sequence), goes to the owner the broker's image shows (over the network, or to this broker's own intake), and is
 * sent again with the same id when that owner refuses it, its connection loses a message or the image shows another
 * owner. A publish not decided within {@link #TIMEOUT_MS} fails, its outcome unknown. Lost with the process.
 */
final class SimForwarding {
    /** How often waiting publishes are tried again, besides at once on every new image. */
    static final long ROUND_MS = 50;

    private static final long SOON_MS = 5;

    /** Within the simulated owners' resend window by a margin, as the broker's 30 s are within its 35 s. */
    static final long TIMEOUT_MS = SimWorkload.RESEND_WINDOW_MS - 1_000;

    /** A client's publish, as the lanes hold it. */
    record Forwarded(ObjectId object, PublishId client, int bytes) {}

    private final SimCluster cluster;
    private final SimBroker broker;
    private final long generation;
    private final long publisher;
    private final ForwardLanes<Forwarded> lanes;
    /** Each object's number in the lanes, in order of first use. */
    private final Map<ObjectId, Long> queueIds = new HashMap<>();

    private final Map<Long, ObjectId> objects = new HashMap<>();
    /** The publishes this broker's own intake took through {@link ForwardLanes#sendLocally}, by sequence. */
    private final Map<Long, Forwarded> local = new HashMap<>();

    private long nextSequence;
    private boolean soonScheduled;
    /** The image's projected assignments, computed once per image. */
    private MetadataImage projectedOf;

    private Map<ObjectId, Assignment> projected = Map.of();

    SimForwarding(SimCluster cluster, SimBroker broker, long generation, long publisher) {
        this.cluster = cluster;
        this.broker = broker;
        this.generation = generation;
        this.publisher = publisher;
        EnumSet<ForwardLanes.Fault> faults = EnumSet.noneOf(ForwardLanes.Fault.class);
        if (cluster.config().has(Bug.ADOPT_AS_NEW)) {
            faults.add(ForwardLanes.Fault.ADOPT_AS_NEW);
        }
        if (cluster.config().has(Bug.SEND_WITHOUT_AFTER)) {
            faults.add(ForwardLanes.Fault.SEND_WITHOUT_AFTER);
        }
        this.lanes = new ForwardLanes<>(new Effects(), TIMEOUT_MS, faults);
        cluster.scheduler().after(ROUND_MS, "resend " + broker.id(), this::regularRound);
    }

    private boolean current() {
        return broker.alive() && broker.generation() == generation;
    }

    /** A client on this broker publishes {@code client} to {@code object}. */
    void publish(ObjectId object, PublishId client, int bytes) {
        long sequence = ++nextSequence;
        Forwarded forwarded = new Forwarded(object, client, bytes);
        long queue = queueId(object);
        Optional<NodeId> owner = owner(queue);
        if (owner.isPresent() && owner.get().equals(broker.id())) {
            long after = lanes.sendLocally(queue, sequence, broker.id());
            if (after != ForwardLanes.HELD) {
                local.put(sequence, forwarded);
                broker.receivePublish(
                        object, logId(forwarded, sequence), after, bytes, broker.id(), generation, sequence);
                return;
            }
        }
        lanes.submit(queue, sequence, forwarded, owner, cluster.now());
    }

    /** The answer to publish {@code sequence}: confirmed, or not decided by the broker that answered. */
    void answered(long sequence, boolean refused) {
        if (!current()) {
            return;
        }
        Forwarded taken = local.remove(sequence);
        if (taken != null) {
            long queue = queueId(taken.object());
            if (refused) {
                lanes.adopt(queue, sequence, taken, cluster.now());
            } else {
                lanes.decidedLocally(queue);
                confirmed(taken, sequence);
            }
            return;
        }
        lanes.answered(sequence, refused).ifPresent(forwarded -> confirmed(forwarded, sequence));
    }

    /** The connection to {@code peer} lost a message and closed: what was in flight to it waits for a re-send. */
    void linkClosed(NodeId peer) {
        if (current()) {
            lanes.linkClosed(peer);
        }
    }

    /** The image changed: publishes waiting for an owner go at once if it names one. */
    void ownersMayHaveChanged() {
        if (current() && lanes.size() > 0) {
            round();
        }
    }

    /** What is undecided here, for a failure's message. */
    @Override
    public String toString() {
        return broker.id() + ": " + lanes.size() + " forwarded, " + local.size() + " at its own replica " + local;
    }

    private void confirmed(Forwarded forwarded, long sequence) {
        cluster.workload().confirmed(broker.id(), forwarded.object(), forwarded.client());
    }

    private PublishId logId(Forwarded forwarded, long sequence) {
        PublishId id = new PublishId(publisher, sequence);
        cluster.invariants().forwarded(id, forwarded.client());
        return id;
    }

    private long queueId(ObjectId object) {
        return queueIds.computeIfAbsent(object, unused -> {
            long id = queueIds.size() + 1L;
            objects.put(id, object);
            return id;
        });
    }

    private Optional<NodeId> owner(long queue) {
        MetadataImage image = broker.log().image();
        if (image != projectedOf) {
            projectedOf = image;
            projected = image.coordination().projectedAssignments();
        }
        Assignment view = projected.get(objects.get(queue));
        return view == null ? Optional.empty() : Optional.of(view.owner());
    }

    private void regularRound() {
        if (!current()) {
            return;
        }
        cluster.scheduler().after(ROUND_MS, "resend " + broker.id(), this::regularRound);
        round();
    }

    private void round() {
        ForwardLanes.Round<Forwarded> round = lanes.resend(this::owner, cluster.now());
        cluster.stats().resent += round.resent();
        for (Forwarded failed : round.timedOut()) {
            cluster.workload().failed(broker.id(), failed.object(), failed.client());
        }
    }

    private final class Effects implements ForwardLanes.Effects<Forwarded> {
        @Override
        public boolean send(NodeId owner, long sequence, long after, Forwarded forwarded) {
            PublishId id = logId(forwarded, sequence);
            NodeId self = broker.id();
            if (owner.equals(self)) {
                broker.receivePublish(forwarded.object(), id, after, forwarded.bytes(), self, generation, sequence);
                return true;
            }
            cluster.network()
                    .send(
                            self,
                            owner,
                            "pub",
                            () -> cluster.broker(owner)
                                    .receivePublish(
                                            forwarded.object(),
                                            id,
                                            after,
                                            forwarded.bytes(),
                                            self,
                                            generation,
                                            sequence),
                            () -> linkClosed(owner));
            return true;
        }

        @Override
        public void resendSoon() {
            if (!soonScheduled) {
                soonScheduled = true;
                cluster.scheduler().after(SOON_MS, "resend-soon " + broker.id(), () -> {
                    soonScheduled = false;
                    if (current()) {
                        round();
                    }
                });
            }
        }

        @Override
        public long nextSequence() {
            return ++nextSequence;
        }
    }
}
