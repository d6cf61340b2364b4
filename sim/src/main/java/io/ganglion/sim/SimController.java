package io.ganglion.sim;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.ControllerCore;
import io.ganglion.coordination.ControllerTick;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.HistoryRecord.MemberInstalled;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.PendingRecovery;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.SealReply;
import io.ganglion.coordination.Setting;
import io.ganglion.metadata.MetadataCommand;
import java.util.List;
import java.util.SortedMap;

/**
 * The controller runtime of one simulated broker process, as {@code broker/cluster/Controller} is the real one: the
 * same {@link ControllerCore} (the observed live set, eager failover, expiry, commands in flight, held recovery
 * replies) given the simulation's clock, timers and metadata log. It lives as long as the broker's incarnation;
 * while the broker leads the metadata log it ticks every {@code controller.tick_ms} and at once when the image changes
 * or a reply comes, proposes each tick's commands as one fenced entry and sends the requests. Closed connections are
 * recorded whether it leads or not.
 */
final class SimController {
    private final SimCluster cluster;
    private final SimBroker host;
    private final ControllerCore core = new ControllerCore();
    private long leaderTerm;
    /** The timer of the next periodic tick: a tick run early moves it on, and an older timer does nothing. */
    private long tickTimer;

    private boolean kickQueued;
    private boolean stopped;

    SimController(SimCluster cluster, SimBroker host) {
        this.cluster = cluster;
        this.host = host;
    }

    /** The broker crashed: this runtime is gone with its memory. */
    void stop() {
        stopped = true;
        core.end();
    }

    /** Whether this broker runs the controller now. */
    boolean active() {
        return !stopped && core.active();
    }

    /** The objects the last tick kept under the follower loss hold, with their lost followers. */
    SortedMap<ObjectId, List<NodeId>> held() {
        return core.held();
    }

    private long now() {
        return cluster.scheduler().now();
    }

    private long setting(Setting setting) {
        return host.log().image().coordination().settings().value(setting);
    }

    /** The broker's metadata log leadership began or ended. */
    void leadership(boolean leads) {
        if (stopped || leads == core.active()) {
            return;
        }
        if (leads) {
            leaderTerm = host.log().leaderTerm().orElse(0);
            long since = now();
            cluster.scheduler().trace("controller " + host.id());
            SortedMap<NodeId, Long> closed =
                    core.begin(host.log().image().coordination().liveSet(), since);
            long eager = setting(RuntimeSettings.EAGER_FAILOVER_MS);
            closed.forEach((node, closedAt) -> scheduleEagerFailover(node, closedAt, closedAt + eager - since));
            schedulePeriodicTick(0);
        } else {
            core.end();
            tickTimer++;
        }
    }

    /** The image changed: tick as soon as the simulation's thread is free. */
    void imageChanged() {
        kick();
    }

    private void kick() {
        if (stopped || kickQueued || !core.active()) {
            return;
        }
        kickQueued = true;
        cluster.scheduler().after(0, "kick " + host.id(), () -> {
            kickQueued = false;
            tickNow();
        });
    }

    void heartbeat(NodeId node, Incarnation incarnation, boolean draining) {
        if (!stopped && core.heartbeat(node, incarnation, draining, now())) {
            kick();
        }
    }

    void connectionClosed(NodeId node) {
        if (stopped) {
            return;
        }
        long closedAt = now();
        core.connectionClosed(node, closedAt);
        scheduleEagerFailover(node, closedAt, setting(RuntimeSettings.EAGER_FAILOVER_MS));
    }

    private void scheduleEagerFailover(NodeId node, long closedAt, long delayMs) {
        cluster.scheduler().after(Math.max(0, delayMs), "eager " + node, () -> {
            if (!stopped && core.failOver(node, closedAt, now())) {
                kick();
            }
        });
    }

    private void schedulePeriodicTick(long delayMs) {
        long timer = ++tickTimer;
        cluster.scheduler().after(delayMs, "tick " + host.id(), () -> {
            if (timer == tickTimer) {
                tick();
            }
        });
    }

    private void tickNow() {
        if (!stopped && core.active()) {
            tick();
        }
    }

    private void tick() {
        if (stopped || !core.active()) {
            return;
        }
        schedulePeriodicTick(setting(RuntimeSettings.TICK_MS));
        CoordinationImage image = host.log().image().coordination();
        CoordinationImage seen = cluster.config().has(Bug.TICK_ON_PROPOSED_STEPS)
                ? ControllerTick.withInFlight(image, core.inFlight())
                : image;
        ControllerCore.Tick tick = core.tick(seen, now());
        cluster.stats().ticks++;
        if (!tick.held().isEmpty()) {
            cluster.stats().heldTicks++;
        }
        if (!tick.entry().isEmpty()) {
            proposeAsOneEntry(tick.entry());
        }
        if (cluster.config().has(Bug.FORGE_SEALS)) {
            forgeSeals(image, history -> 1);
        }
        if (cluster.config().has(Bug.R_IS_W_MINUS_ONE)) {
            forgeSeals(image, history -> history.spec().writeRequirement() - 1);
        }
        for (RecoveryRequest request : tick.requests()) {
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
                    proposeForged(new AppendHistory(
                            history.id(),
                            new SealReceived(
                                    history.committedEpoch(),
                                    new SealReply(member, real.logEnd(), real.durableOffset()))));
                }
            }
        }
    }

    void sealReply(ObjectId object, Epoch epoch, SealReply reply) {
        recoveryReply(new AppendHistory(object, new SealReceived(epoch, reply)));
    }

    void installed(ObjectId object, Epoch epoch, NodeId node) {
        recoveryReply(new AppendHistory(object, new MemberInstalled(epoch, node)));
    }

    void dropped(ObjectId object, Epoch epoch, NodeId follower) {
        recoveryReply(new AppendHistory(object, new HistoryRecord.FollowerDropped(epoch, follower)));
    }

    private void recoveryReply(CoordinationCommand command) {
        if (stopped) {
            return;
        }
        switch (core.reply(command, host.log().image().coordination(), now())) {
            case INACTIVE -> propose(new MetadataCommand.Coordination(command));
            case NEEDLESS -> {}
            case HELD -> tickNow();
        }
    }

    private void proposeAsOneEntry(List<CoordinationCommand> commands) {
        propose(MetadataCommand.Fenced.controllerEntry(leaderTerm, commands)).whenComplete((applied, failure) -> {
            if (!stopped) {
                core.completed(commands);
                kick();
            }
        });
    }

    /** An injected bug's proposal, outside the core's bookkeeping. */
    private void proposeForged(CoordinationCommand command) {
        propose(new MetadataCommand.Coordination(command));
    }

    private java.util.concurrent.CompletableFuture<?> propose(MetadataCommand command) {
        return host.log().propose(command).whenComplete((applied, failure) -> {
            if (failure != null) {
                cluster.stats().lostProposals++;
            } else if (!applied.accepted()) {
                cluster.stats().rejectedProposals++;
            }
        });
    }
}
