package io.ganglion.coordination;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.RecoveryPointChosen;
import io.ganglion.coordination.PromotionDecision.AddFollowers;
import io.ganglion.coordination.PromotionDecision.DropFollowers;
import io.ganglion.coordination.PromotionDecision.Held;
import io.ganglion.coordination.PromotionDecision.Recover;
import io.ganglion.coordination.PromotionDecision.Unchanged;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The controller's control loop as a pure function: (metadata image, observed live set, retry state, now) to the
 * metadata commands to propose and the requests to send. The runtime settings are read from the image on every tick.
 *
 * <ol>
 *   <li>Liveness: live set changes (status, incarnation, draining) not yet committed. An owner seen with a new
 *       incarnation before it was declared down restarted and may have lost records its followers confirmed: its
 *       object gets a recovery with the same members.
 *   <li>Placement proposes owner and followers for every object from the observed live set.
 *   <li>Promotion: nothing, a held follower, followers leaving or joining the activated epoch, or a pending recovery (see {@link
 *       Promotion}).
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
        return run(image, List.of(), observed, backoff, nowMs);
    }

    /**
     * One tick on the {@code committed} image with the controller's {@code inFlight} commands (proposed, not committed
     * yet) applied: it goes on from what is in flight, but asks replicas for nothing irreversible on the strength of a
     * step that is not committed:
     *
     * <ul>
     *   <li>seal requests only for a recovery whose {@code RecoveryPending} is committed. A seal cannot be undone (the
     *       replica persists its fence and never admits, follows or serves the sealed epoch again), and only a
     *       committed pending recovery moves a sealed epoch on: a proposal can be lost with its leader (a leader that
     *       lost its majority goes on ticking), and then no controller would ever know the epoch's replicas were sealed.
     *       The object would stay activated in that epoch, its owner fenced, for good.
     *   <li>install requests only for a committed recovery point. An install cuts what lies past the point; a proposed
     *       point loses to a higher seal that commits first (it is then "not the highest sealed end"), and an install
     *       to it may already have cut the record at the point that does commit from the only replica holding it: no
     *       member can ever be installed. Before the first activation (E empty) the point can only be the empty log,
     *       and every log is empty: those installs go out at once.
     * </ul>
     */
    public static TickResult run(
            CoordinationImage committed,
            List<CoordinationCommand> inFlight,
            LiveSet observed,
            RecoveryBackoff backoff,
            long nowMs) {
        CoordinationImage image = withInFlight(committed, inFlight);
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
                case AddFollowers add -> {
                    Epoch epoch = history.committedEpoch();
                    for (NodeId follower : add.followers()) {
                        commands.add(
                                new AppendHistory(entry.getKey(), new HistoryRecord.FollowerAdded(epoch, follower)));
                    }
                }
                case DropFollowers drop -> {
                    Epoch epoch = history.committedEpoch();
                    for (NodeId follower : drop.followers()) {
                        commands.add(
                                new AppendHistory(entry.getKey(), new HistoryRecord.FollowerLeaving(epoch, follower)));
                    }
                }
                case Recover recover -> commands.add(new AppendHistory(entry.getKey(), recover.pending()));
            }
        }

        // The driver works on the image with this tick's own commands applied (a command the state machine would
        // reject changes nothing here either), but seals and installs only on committed steps: see run(committed, ...).
        CoordinationImage proposed = withInFlight(image, commands);
        TreeMap<ObjectId, RecoveryBackoff.Entry> nextBackoff = new TreeMap<>();
        long minMs = settings.value(RuntimeSettings.BACKOFF_MIN_MS);
        long maxMs = settings.value(RuntimeSettings.BACKOFF_MAX_MS);
        for (AcceptedHistory history : proposed.objects().values()) {
            Optional<PendingRecovery> settled = committedPending(committed, history);
            List<RecoveryRequest> due = drive(
                    history,
                    observed,
                    commands,
                    settled.isPresent(),
                    history.eligibleSet().size() == 0
                            || settled.flatMap(PendingRecovery::point).isPresent(),
                    committed
                            .object(history.id())
                            .map(AcceptedHistory::leavingInCommitted)
                            .orElse(Set.of()));
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

    /** {@code committed} with {@code inFlight} applied in order; a command that does not fit changes nothing. */
    public static CoordinationImage withInFlight(CoordinationImage committed, List<CoordinationCommand> inFlight) {
        CoordinationImage image = committed;
        for (CoordinationCommand command : inFlight) {
            image = image.apply(command).image();
        }
        return image;
    }

    /** Adds {@code record} to the commands and returns the history with it appended (unchanged if it does not fit). */
    private static AcceptedHistory proposeStep(
            AcceptedHistory history, HistoryRecord record, List<CoordinationCommand> commands) {
        commands.add(new AppendHistory(history.id(), record));
        return history.append(record) instanceof HistoryOutcome.Accepted accepted ? accepted.history() : history;
    }

    /** The recovery pending in {@code history}, as {@code committed} holds it (same proposed epoch), if it does. */
    private static Optional<PendingRecovery> committedPending(CoordinationImage committed, AcceptedHistory history) {
        Optional<PendingRecovery> pending = history.pending();
        if (pending.isEmpty()) {
            return Optional.empty();
        }
        return committed
                .object(history.id())
                .flatMap(AcceptedHistory::pending)
                .filter(c ->
                        c.proposed().epoch().equals(pending.get().proposed().epoch()));
    }

    /**
     * Live, with another incarnation than the committed live set knows: the process restarted. Also when the committed
     * live set has it down: the live set change that took it down commits ahead of the recovery proposed with it, and a
     * leader lost in between commits the one without the other (the owner's epoch then stays activated, no recovery
     * pending, and the restarted owner may not resume it).
     */
    private static boolean restarted(NodeId node, LiveSet committed, LiveSet observed) {
        Optional<NodeState> before = committed.node(node);
        Optional<NodeState> now = observed.node(node);
        return before.isPresent()
                && now.isPresent()
                && now.get().live()
                && !before.get().incarnation().equals(now.get().incarnation());
    }

    /**
     * Adds the recovery step commands for {@code history} and returns the requests it needs, if any; seal requests only
     * when {@code sealable} (its pending recovery is committed), install requests only when {@code installable} (its
     * recovery point is committed, or there is nothing to recover), drop requests only for followers whose leaving is
     * committed ({@code committedLeaving}): the owner stops counting a follower when it learns of that commit, and its
     * answer is only worth something from then on.
     */
    private static List<RecoveryRequest> drive(
            AcceptedHistory history,
            LiveSet observed,
            List<CoordinationCommand> commands,
            boolean sealable,
            boolean installable,
            Set<NodeId> committedLeaving) {
        ObjectId id = history.id();
        Optional<PendingRecovery> maybePending = history.pending();
        if (maybePending.isEmpty()) {
            List<RecoveryRequest> requests = new ArrayList<>();
            Optional<Assignment> active = history.validate();
            for (NodeId node : RecoveryPlanner.catchUpTargets(history)) {
                if (observed.isLive(node)) {
                    requests.add(new RecoveryRequest.CatchUp(
                            id, active.orElseThrow().epoch(), node, active.get().owner()));
                }
            }
            if (active.isPresent() && observed.isLive(active.get().owner())) {
                for (NodeId leaving : history.leavingInCommitted()) {
                    if (committedLeaving.contains(leaving)) {
                        requests.add(new RecoveryRequest.Drop(
                                id, active.get().epoch(), active.get().owner(), leaving));
                    }
                }
            }
            return requests;
        }
        PendingRecovery pending = maybePending.get();
        Epoch proposedEpoch = pending.proposed().epoch();
        if (RecoveryPlanner.activationAllowed(history)) {
            commands.add(new AppendHistory(id, new Activated(proposedEpoch)));
            return List.of();
        }
        Optional<LogPosition> point = RecoveryPlanner.recoveryPoint(history);
        if (point.isPresent()) {
            // the point, the installs the seals already show and, when they are enough, the activation: one round of
            // the metadata log instead of three, and install requests only to the members that need one
            history = proposeStep(history, new RecoveryPointChosen(proposedEpoch, point.get()), commands);
            for (NodeId member : RecoveryPlanner.installedBySeal(history)) {
                history = proposeStep(history, new HistoryRecord.MemberInstalled(proposedEpoch, member), commands);
            }
            if (RecoveryPlanner.activationAllowed(history)) {
                commands.add(new AppendHistory(id, new Activated(proposedEpoch)));
                return List.of();
            }
            pending = history.pending().orElseThrow();
        }
        List<RecoveryRequest> due = new ArrayList<>();
        for (NodeId node : sealable ? RecoveryPlanner.sealTargets(history) : List.<NodeId>of()) {
            if (observed.isLive(node)) {
                due.add(new RecoveryRequest.Seal(id, history.committedEpoch(), node));
            }
        }
        if (pending.point().isPresent() && installable) {
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
