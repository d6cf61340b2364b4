package io.ganglion.coordination;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.RecoveryPointChosen;
import io.ganglion.coordination.PromotionDecision.Held;
import io.ganglion.coordination.PromotionDecision.Recover;
import io.ganglion.coordination.PromotionDecision.Unchanged;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The controller's control loop as a pure function: (metadata image, observed live set, retry state, now) to the
 * metadata commands to propose and the requests to send. The runtime settings are read from the image on every tick.
 *
 * <ol>
 *   <li>Liveness: live set changes (status, incarnation, draining) not yet committed. An owner seen with a new
 *       incarnation before it was declared down restarted and may have lost records its followers confirmed: its
 *       object gets a recovery with the same members (found by the simulator).
 *   <li>Placement proposes owner and followers for every object from the observed live set.
 *   <li>Promotion: nothing, a held follower, or a pending recovery (see {@link Promotion}).
 *   <li>Recovery driver: for each pending recovery in the image, the next step: seal requests, choosing the recovery
 *       point, install requests, activation. Every step that changes state is a metadata command, so a new controller
 *       resumes where the old one stopped.
 * </ol>
 *
 * Commands take effect when committed; the next tick sees them in the image. A command overtaken in between is
 * rejected by {@link AcceptedHistory#append}, never applied unsafely.
 */
public final class ControllerTick {
    private ControllerTick() {}

    public static TickResult run(CoordinationImage image, LiveSet observed, RecoveryBackoff backoff, long nowMs) {
        Settings settings = image.settings();
        List<CoordinationCommand> commands = new ArrayList<>();
        List<RecoveryRequest> requests = new ArrayList<>();
        TreeMap<ObjectId, List<NodeId>> held = new TreeMap<>();

        // An owner that restarted before anyone declared it down may have lost records its followers confirmed: it
        // must not go on owning its epoch. Propose a recovery with the same members, before the live set change that
        // reveals the restart, so that the change never commits without it.
        for (AcceptedHistory history : image.objects().values()) {
            Optional<Assignment> active = history.validate();
            if (active.isPresent() && restarted(active.get().owner(), image.liveSet(), observed)) {
                Assignment current = active.get();
                commands.add(new AppendHistory(
                        history.id(),
                        new HistoryRecord.RecoveryPending(
                                current.epoch().next(), current.owner(), current.followers())));
            }
        }
        List<NodeState> changes = observed.changesSince(image.liveSet());
        if (!changes.isEmpty()) {
            commands.add(new CommitLiveSet(changes));
        }

        List<Placement.Current> current = new ArrayList<>();
        for (AcceptedHistory history : image.objects().values()) {
            Optional<Assignment> members =
                    history.pending().map(PendingRecovery::proposed).or(history::committed);
            current.add(new Placement.Current(history.spec(), members));
        }
        SortedMap<ObjectId, Proposal> proposals = Placement.propose(current, observed);
        FollowerLossHold hold =
                new FollowerLossHold(observed, settings.value(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS), nowMs);
        for (Map.Entry<ObjectId, Proposal> entry : proposals.entrySet()) {
            AcceptedHistory history = image.objects().get(entry.getKey());
            switch (Promotion.decide(history, entry.getValue(), hold)) {
                case Unchanged unchanged -> {}
                case Held h -> held.put(entry.getKey(), h.lostFollowers());
                case Recover recover -> commands.add(new AppendHistory(entry.getKey(), recover.pending()));
            }
        }

        TreeMap<ObjectId, RecoveryBackoff.Entry> nextBackoff = new TreeMap<>();
        long minMs = settings.value(RuntimeSettings.BACKOFF_MIN_MS);
        long maxMs = settings.value(RuntimeSettings.BACKOFF_MAX_MS);
        for (AcceptedHistory history : image.objects().values()) {
            List<RecoveryRequest> due = drive(history, observed, commands);
            RecoveryBackoff.Entry entry = backoff.entries().get(history.id());
            if (!due.isEmpty() && backoff.due(history, nowMs)) {
                requests.addAll(due);
                entry = backoff.sent(history, nowMs, minMs, maxMs);
            }
            if (entry != null && !due.isEmpty()) {
                nextBackoff.put(history.id(), entry);
            }
        }
        return new TickResult(commands, requests, held, new RecoveryBackoff(nextBackoff));
    }

    /** Live in both, but with another incarnation than the committed live set knows: the process restarted. */
    private static boolean restarted(NodeId node, LiveSet committed, LiveSet observed) {
        Optional<NodeState> before = committed.node(node);
        Optional<NodeState> now = observed.node(node);
        return before.isPresent()
                && now.isPresent()
                && before.get().live()
                && now.get().live()
                && !before.get().incarnation().equals(now.get().incarnation());
    }

    /** Adds the recovery step commands for {@code history} and returns the requests it needs, if any. */
    private static List<RecoveryRequest> drive(
            AcceptedHistory history, LiveSet observed, List<CoordinationCommand> commands) {
        ObjectId id = history.id();
        Optional<PendingRecovery> maybePending = history.pending();
        if (maybePending.isEmpty()) {
            List<RecoveryRequest> catchUp = new ArrayList<>();
            Optional<Assignment> active = history.validate();
            for (NodeId node : RecoveryPlanner.catchUpTargets(history)) {
                if (observed.isLive(node)) {
                    catchUp.add(new RecoveryRequest.CatchUp(
                            id, active.orElseThrow().epoch(), node, active.get().owner()));
                }
            }
            return catchUp;
        }
        PendingRecovery pending = maybePending.get();
        Epoch proposedEpoch = pending.proposed().epoch();
        if (RecoveryPlanner.activationAllowed(history)) {
            commands.add(new AppendHistory(id, new Activated(proposedEpoch)));
            return List.of();
        }
        Optional<LogPosition> point = RecoveryPlanner.recoveryPoint(history);
        if (point.isPresent()) {
            commands.add(new AppendHistory(id, new RecoveryPointChosen(proposedEpoch, point.get())));
            return List.of();
        }
        List<RecoveryRequest> due = new ArrayList<>();
        for (NodeId node : RecoveryPlanner.sealTargets(history)) {
            if (observed.isLive(node)) {
                due.add(new RecoveryRequest.Seal(id, history.committedEpoch(), node));
            }
        }
        if (pending.point().isPresent()) {
            LogPosition chosen = pending.recoveryPoint();
            List<NodeId> sources = pending.sourcesOf(chosen);
            for (NodeId node : RecoveryPlanner.installTargets(history)) {
                if (observed.isLive(node)) {
                    due.add(new RecoveryRequest.Install(id, proposedEpoch, node, chosen, sources));
                }
            }
        }
        return due;
    }
}
