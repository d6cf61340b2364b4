package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.ControllerTick;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.HistoryRecord.MemberInstalled;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LiveSet;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.PendingRecovery;
import io.ganglion.coordination.RecoveryBackoff;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.SealReply;
import io.ganglion.coordination.Setting;
import io.ganglion.coordination.TickResult;
import io.ganglion.metadata.MetadataCommand;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The controller runtime on the broker that leads the metadata log: what {@code broker} will do with real IO, here on
 * the simulation's thread.
 *
 * <p>It keeps the observed {@link LiveSet}, starting from the committed one: heartbeats, eager failover when a
 * connection closed and no heartbeat came back within {@code liveness.eager_failover_ms}, and expiry, which waits one
 * {@code liveness.expiry_ms} after the leadership began. Every {@code controller.tick_ms} it runs {@link
 * ControllerTick#run} on its own image, proposes the commands through its metadata log without waiting for them, and
 * sends the requests; seal replies and install acknowledgements become {@code AppendHistory} proposals.
 */
final class SimController {
    private final SimCluster cluster;
    private final SimBroker host;
    private final long leaderSinceMs;
    private final TreeMap<NodeId, Long> closedAtMs = new TreeMap<>();
    private LiveSet observed;
    private RecoveryBackoff backoff = RecoveryBackoff.none();
    private SortedMap<ObjectId, List<NodeId>> held = new TreeMap<>();
    private boolean active = true;

    SimController(SimCluster cluster, SimBroker host) {
        this.cluster = cluster;
        this.host = host;
        this.leaderSinceMs = cluster.scheduler().now();
        this.observed = host.log().image().coordination().liveSet();
        cluster.scheduler().trace("controller " + host.id());
        cluster.scheduler().after(setting(RuntimeSettings.TICK_MS), "tick " + host.id(), this::tick);
    }

    void stop() {
        active = false;
    }

    NodeId node() {
        return host.id();
    }

    LiveSet observed() {
        return observed;
    }

    /** The objects the last tick kept under the follower loss hold, with their lost followers. */
    SortedMap<ObjectId, List<NodeId>> held() {
        return held;
    }

    private long setting(Setting setting) {
        return host.log().image().coordination().settings().value(setting);
    }

    void heartbeat(NodeId node, Incarnation incarnation, boolean draining) {
        if (!active) {
            return;
        }
        observed = observed.heartbeat(
                node, incarnation, draining, cluster.scheduler().now());
        closedAtMs.remove(node);
    }

    void connectionClosed(NodeId node) {
        if (!active) {
            return;
        }
        long closedAt = cluster.scheduler().now();
        closedAtMs.put(node, closedAt);
        cluster.scheduler().after(setting(RuntimeSettings.EAGER_FAILOVER_MS), "eager " + node, () -> {
            Long still = closedAtMs.get(node);
            if (active && still != null && still == closedAt) {
                observed = observed.eagerFailover(node, cluster.scheduler().now());
                closedAtMs.remove(node);
            }
        });
    }

    private void tick() {
        if (!active) {
            return;
        }
        long now = cluster.scheduler().now();
        cluster.scheduler().after(setting(RuntimeSettings.TICK_MS), "tick " + host.id(), this::tick);
        CoordinationImage image = host.log().image().coordination();
        observed = observed.expire(now, setting(RuntimeSettings.EXPIRY_MS), leaderSinceMs);
        TickResult result = ControllerTick.run(image, observed, backoff, now);
        backoff = result.backoff();
        held = result.held();
        cluster.stats().ticks++;
        if (!held.isEmpty()) {
            cluster.stats().heldTicks++;
        }
        for (CoordinationCommand command : result.commands()) {
            propose(command);
        }
        if (cluster.config().has(Bug.FORGE_SEALS)) {
            forgeSeals(image, history -> 1);
        }
        if (cluster.config().has(Bug.R_IS_W_MINUS_ONE)) {
            forgeSeals(image, history -> history.spec().writeRequirement() - 1);
        }
        for (RecoveryRequest request : result.requests()) {
            cluster.network()
                    .send(
                            host.id(),
                            request.node(),
                            "req " + request.getClass().getSimpleName() + " " + request.object() + " " + request.node(),
                            () -> cluster.broker(request.node()).receiveRequest(request, host.id()));
        }
    }

    /**
     * The injected bugs: once {@code enough} real seals are in, pretend other members of E sealed at the highest real
     * end, up to R.
     */
    private void forgeSeals(CoordinationImage image, java.util.function.ToIntFunction<AcceptedHistory> enough) {
        for (AcceptedHistory history : image.objects().values()) {
            if (history.pending().isEmpty()
                    || history.pending().get().point().isPresent()
                    || history.eligibleSet().size() == 0) {
                continue;
            }
            PendingRecovery pending = history.pending().get();
            int r = history.recoveryThreshold();
            if (pending.seals().size() < Math.max(0, enough.applyAsInt(history))
                    || pending.seals().size() >= r) {
                continue;
            }
            SealReply real = pending.seals().values().stream()
                    .max(java.util.Comparator.comparing(SealReply::logEnd))
                    .orElse(new SealReply(host.id(), io.ganglion.coordination.LogPosition.EMPTY, -1));
            int forged = pending.seals().size();
            for (NodeId member : history.eligibleSet().members()) {
                if (forged >= r) {
                    break;
                }
                if (!pending.seals().containsKey(member)) {
                    forged++;
                    propose(new AppendHistory(
                            history.id(),
                            new SealReceived(
                                    history.committedEpoch(),
                                    new SealReply(member, real.logEnd(), real.durableOffset()))));
                }
            }
        }
    }

    void sealReply(ObjectId object, Epoch epoch, SealReply reply) {
        if (active) {
            propose(new AppendHistory(object, new SealReceived(epoch, reply)));
        }
    }

    void installed(ObjectId object, Epoch epoch, NodeId node) {
        if (active) {
            propose(new AppendHistory(object, new MemberInstalled(epoch, node)));
        }
    }

    void dropped(ObjectId object, Epoch epoch, NodeId follower) {
        if (active) {
            propose(new AppendHistory(object, new HistoryRecord.FollowerDropped(epoch, follower)));
        }
    }

    private void propose(CoordinationCommand command) {
        host.log().propose(new MetadataCommand.Coordination(command)).whenComplete((applied, failure) -> {
            if (failure != null) {
                cluster.stats().lostProposals++;
            } else if (!applied.accepted()) {
                cluster.stats().rejectedProposals++;
            }
        });
    }
}
