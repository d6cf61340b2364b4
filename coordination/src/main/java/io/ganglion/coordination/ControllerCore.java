package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The controller's state between ticks, and what it does with each input: the observed {@link LiveSet} (heartbeats,
 * eager failover after a closed connection, expiry once it has watched for an expiry period), the commands it proposed
 * that have not completed, and the recovery replies it holds for the next entry. Pure: time and the committed image
 * are inputs, and what to propose and send is returned. The broker's controller runtime and the simulator both drive
 * this one class, each with its own threads, timers and metadata log (docs/coordination.md, "The controller").
 *
 * <p>Not thread-safe: one caller (the controller thread, or the simulation's one thread).
 */
public final class ControllerCore {
    /** Why {@link #reply} did not hold a recovery reply. */
    public enum ReplyOutcome {
        /** Held for the next entry: tick now. */
        HELD,
        /** This broker does not run the controller: propose the reply as it is. */
        INACTIVE,
        /** The committed image with the commands in flight already holds it, or refuses it: drop it. */
        NEEDLESS
    }

    /**
     * What one tick decided.
     *
     * @param entry the commands to propose now as one metadata log entry, in order (empty: nothing to propose); they
     *     count as in flight until {@link #completed} is called with them
     * @param requests seal, install, catch-up and drop requests to send now
     * @param held the objects under the follower loss hold after this tick, with their lost followers
     * @param heldBegun the objects the hold took in this tick
     * @param expired the nodes expiry took down in this tick
     * @param stoodStillMs how long the controller stood still before this tick (a tick half an expiry period or more
     *     late), or -1: it then watches heartbeats again from now, as a new controller does
     * @param repliesProposed how many held recovery replies lead {@code entry}
     * @param fresh the tick's own commands in {@code entry} (the rest are held replies)
     * @param waiting whether the tick's commands are all in flight already: nothing new to propose
     */
    public record Tick(
            List<CoordinationCommand> entry,
            List<RecoveryRequest> requests,
            SortedMap<ObjectId, List<NodeId>> held,
            SortedMap<ObjectId, List<NodeId>> heldBegun,
            List<NodeState> expired,
            long stoodStillMs,
            int repliesProposed,
            List<CoordinationCommand> fresh,
            boolean waiting) {}

    private final TreeMap<NodeId, Long> closedAtMs = new TreeMap<>();
    private boolean active;
    /**
     * Since when this controller has watched heartbeats without a break: since its leadership began, or since it last
     * stood still. Expiry takes down only a node silent for an expiry period of this watch.
     */
    private long watchingSinceMs;

    private long lastTickMs;
    private LiveSet observed = LiveSet.empty();
    private RecoveryBackoff backoff = RecoveryBackoff.none();
    private SortedMap<ObjectId, List<NodeId>> held = new TreeMap<>();
    private long ticks;
    /**
     * Commands proposed and not completed, in order. Each tick works on the committed image with these (and the held
     * replies) applied, so recovery goes on to its next step as soon as the step before is proposed, and no command is
     * proposed twice. Safety does not rest on it: the state machine validates every command it applies.
     */
    private final List<CoordinationCommand> unconfirmed = new ArrayList<>();
    /**
     * Recovery replies held, with the time each came. A reply that moves nothing on alone (the first of the R seals a
     * recovery needs) waits for the one that does, and they go in one entry with the steps they allow; a reply waits at
     * most {@code controller.tick_ms}.
     */
    private final LinkedHashMap<CoordinationCommand, Long> replies = new LinkedHashMap<>();

    /** Whether this broker runs the controller now. */
    public boolean active() {
        return active;
    }

    /**
     * The leadership of the metadata log began: the observed live set starts from the committed one and the watch for
     * expiry from now. Returns the connections still closed, with when each closed: their eager failovers are due at
     * that time plus {@code liveness.eager_failover_ms}.
     */
    public SortedMap<NodeId, Long> begin(LiveSet committed, long nowMs) {
        active = true;
        watchingSinceMs = nowMs;
        lastTickMs = nowMs;
        observed = committed;
        backoff = RecoveryBackoff.none();
        return new TreeMap<>(closedAtMs);
    }

    /** The leadership ended: nothing held, nothing in flight; the next controller asks its replicas again. */
    public void end() {
        active = false;
        held = new TreeMap<>();
        unconfirmed.clear();
        replies.clear();
    }

    /** A heartbeat from {@code node}. Returns true when the node was not live before: tick now, placement may use it. */
    public boolean heartbeat(NodeId node, Incarnation incarnation, boolean draining, long nowMs) {
        closedAtMs.remove(node);
        if (!active) {
            return false;
        }
        boolean wasLive = observed.isLive(node);
        observed = observed.heartbeat(node, incarnation, draining, nowMs);
        return !wasLive;
    }

    /**
     * The peer connection to {@code node} closed. Recorded whether this broker runs the controller or not: when the
     * controller itself dies, the broker elected next must not wait for expiry. The caller calls {@link #failOver} with
     * the same {@code nowMs} once {@code liveness.eager_failover_ms} has passed.
     */
    public void connectionClosed(NodeId node, long nowMs) {
        closedAtMs.put(node, nowMs);
    }

    /** When {@code node}'s connection closed, if it has not come back since (a heartbeat). */
    public Optional<Long> closedAt(NodeId node) {
        return Optional.ofNullable(closedAtMs.get(node));
    }

    /**
     * Takes {@code node} out of the observed live set if its connection is still closed since {@code closedAt}: no
     * heartbeat came back. Returns true when the live set changed: tick now.
     */
    public boolean failOver(NodeId node, long closedAt, long nowMs) {
        Long still = closedAtMs.get(node);
        if (!active || still == null || still != closedAt) {
            return false;
        }
        closedAtMs.remove(node);
        LiveSet next = observed.eagerFailover(node, nowMs);
        boolean changed = next != observed;
        observed = next;
        return changed;
    }

    /** One tick on the {@code committed} image at {@code nowMs}. Call only while {@link #active}. */
    public Tick tick(CoordinationImage committed, long nowMs) {
        long tickMs = committed.settings().value(RuntimeSettings.TICK_MS);
        long expiryMs = committed.settings().value(RuntimeSettings.EXPIRY_MS);
        long stoodStillMs = -1;
        if (nowMs - lastTickMs >= tickMs + expiryMs / 2) {
            // the heartbeats of that time wait behind this tick, and the silence is the controller's own
            stoodStillMs = nowMs - lastTickMs;
            watchingSinceMs = nowMs;
        }
        lastTickMs = nowMs;
        LiveSet expired = observed.expire(nowMs, expiryMs, watchingSinceMs);
        List<NodeState> expiredNodes = expired == observed ? List.of() : expired.changesSince(observed);
        observed = expired;
        TickResult result = ControllerTick.run(committed, inFlight(), observed, backoff, nowMs);
        backoff = result.backoff();
        TreeMap<ObjectId, List<NodeId>> begun = new TreeMap<>();
        result.held().forEach((object, lost) -> {
            if (!held.containsKey(object)) {
                begun.put(object, lost);
            }
        });
        held = result.held();
        ticks++;
        List<CoordinationCommand> fresh = new ArrayList<>(result.commands());
        fresh.removeAll(unconfirmed);
        List<CoordinationCommand> entry = new ArrayList<>();
        int repliesProposed = 0;
        boolean due = false;
        for (long at : replies.values()) {
            due |= nowMs - at >= tickMs;
        }
        if (!replies.isEmpty() && (!fresh.isEmpty() || due)) {
            // first: the tick's steps were worked out with them applied
            entry.addAll(replies.keySet());
            repliesProposed = replies.size();
            replies.clear();
        }
        entry.addAll(fresh);
        unconfirmed.addAll(entry);
        return new Tick(
                List.copyOf(entry),
                result.requests(),
                held,
                begun,
                expiredNodes,
                stoodStillMs,
                repliesProposed,
                List.copyOf(fresh),
                entry.isEmpty() && !result.commands().isEmpty());
    }

    /** The proposal of {@code entry} (a {@link Tick#entry}) completed, committed or not: it is no longer in flight. */
    public void completed(List<CoordinationCommand> entry) {
        entry.forEach(unconfirmed::remove);
    }

    /**
     * A broker's answer to a recovery request, as the history record it stands for (a seal received, a member
     * installed, a follower dropped).
     */
    public ReplyOutcome reply(CoordinationCommand command, CoordinationImage committed, long nowMs) {
        if (!active) {
            return ReplyOutcome.INACTIVE;
        }
        if (needless(command, committed)) {
            // a reply to a request sent again, or one that came after the recovery moved on
            return ReplyOutcome.NEEDLESS;
        }
        replies.putIfAbsent(command, nowMs);
        return ReplyOutcome.HELD;
    }

    private boolean needless(CoordinationCommand command, CoordinationImage committed) {
        return command instanceof CoordinationCommand.AppendHistory append
                && ControllerTick.withInFlight(committed, inFlight())
                        .object(append.id())
                        .map(history -> history.reflects(append.record())
                                || history.append(append.record()) instanceof HistoryOutcome.Rejected)
                        .orElse(true);
    }

    /** The commands proposed and not completed, then the replies held: what a tick counts as in flight. */
    public List<CoordinationCommand> inFlight() {
        List<CoordinationCommand> all = new ArrayList<>(unconfirmed);
        all.addAll(replies.keySet());
        return all;
    }

    public LiveSet observed() {
        return observed;
    }

    /** The objects the last tick kept under the follower loss hold, with their lost followers. */
    public SortedMap<ObjectId, List<NodeId>> held() {
        return held;
    }

    /** Ticks run so far. */
    public long ticks() {
        return ticks;
    }
}
