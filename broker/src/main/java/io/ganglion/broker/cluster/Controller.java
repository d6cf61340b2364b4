package io.ganglion.broker.cluster;

import io.ganglion.coordination.ControllerTick;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.HistoryOutcome;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LiveSet;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryBackoff;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.Setting;
import io.ganglion.coordination.TickResult;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataLog;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller runtime: on the broker that leads the metadata log, it runs the coordination module's {@link
 * ControllerTick} every {@code controller.tick_ms} and proposes its commands.
 *
 * <p>Implementation notes. Every field is owned by the single controller thread; heartbeats, connection events and
 * leadership changes arrive from other threads and are handed to it. The observed {@link LiveSet} starts from the
 * committed one when leadership begins; heartbeats (from every broker, this one included) make a node live with its
 * incarnation and draining flag; a closed connection with no heartbeat within {@code liveness.eager_failover_ms} takes
 * it down (eager failover); expiry takes down a node silent for {@code liveness.expiry_ms}, but only once this
 * controller has watched for one expiry period: since its leadership began, or since it last stood still (a tick half
 * an expiry period or more later than due: the heartbeats of that time wait behind it). Runtime settings are read
 * from the image at every tick.
 *
 * <p>One tick's commands are proposed as one log entry (a batch, applied in order), and the next tick proposes none of
 * them again until that entry is committed, so a slow log is not flooded with the same command. Every entry is fenced
 * with the log's term this controller leads in ({@link MetadataCommand.Fenced}): a controller that lost its leadership
 * may tick once more on what it saw before (after a freeze, it saw every broker silent), and the log's client takes a
 * proposal the old leader refuses to the new one; there the entry is appended in another term and rejected. Within its
 * term, the state machine still rejects what no longer fits.
 */
public final class Controller implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Controller.class);

    private final NodeId self;
    private final MetadataLog log;
    private final Clock clock;
    private final Consumer<RecoveryRequest> requests;
    private final ScheduledExecutorService thread;
    private final Map<NodeId, Long> closedAtMs = new HashMap<>();

    // controller thread only
    private boolean active;
    /** The metadata log's term this controller leads in: its commands are fenced with it. */
    private long leaderTerm;
    /**
     * Since when this controller has been watching heartbeats without a break: since its leadership began, or since it
     * last stood still for half an expiry period or more beyond a tick period (see {@link #tick}). Expiry takes down only a node silent for
     * an expiry period of this watch.
     */
    private long watchingSinceMs;
    /** When the last tick ran, to see that the controller stood still in between. */
    private long lastTickMs;

    private LiveSet observed = LiveSet.empty();
    private RecoveryBackoff backoff = RecoveryBackoff.none();
    private SortedMap<ObjectId, List<NodeId>> held = new TreeMap<>();
    /** Rehearsal ticks: which other broker the next one supposes dead, and how many ran (read by tests). */
    private long rehearsalRounds;

    private volatile long rehearsalTicks;
    /**
     * Commands this controller proposed that have not completed yet, in order. Each tick works on the committed image
     * with these applied (the {@link #speculative} image), so it goes on to the next recovery step as soon as the
     * step before is proposed instead of after it commits, and never proposes the same command twice. Safety does
     * not rest on it: the state machine validates every command when it is applied (a seal count below R, a point that
     * is not the highest sealed end, an activation without installs are rejected there), and a rejected command
     * simply drops out of the image the next tick sees. Seal and install requests are not sent early: {@link
     * ControllerTick} seals only a recovery whose proposal is committed and installs only to a committed point. Both
     * cannot be undone on the replica: a proposal lost with this controller's leadership would leave the epoch sealed
     * with nothing in the log to move it on, and a proposed point that loses to a higher seal committed first would
     * have had an install cut the record at the committed point from the only replica holding it.
     */
    private final List<CoordinationCommand> unconfirmed = new java.util.ArrayList<>();

    /**
     * Recovery replies received and not proposed yet, with the time each came. A reply that moves nothing on by itself
     * (the first of the R seals a recovery needs) waits for the one that does, and they go to the log in one entry
     * with the steps they allow (the point, installs by seal, the activation): proposed alone, it held the log's one
     * round in flight, and the reply that completed R waited a whole round behind it before its own (the failover
     * bench: seals 14 ms apart committed 81 ms apart, the activation 29 ms later). A reply waits at most {@code
     * controller.tick_ms}. The tick counts held replies like commands in flight, so it sends no request they answer.
     */
    private final java.util.LinkedHashMap<CoordinationCommand, Long> replies = new java.util.LinkedHashMap<>();

    private ScheduledFuture<?> nextTick;
    private volatile Snapshot snapshot = new Snapshot(false, new TreeMap<>(), 0);

    /** What the status page shows: whether this broker runs the controller, the held objects, ticks run. */
    public record Snapshot(boolean active, SortedMap<ObjectId, List<NodeId>> held, long ticks) {}

    private long ticks;

    /**
     * @param requests where seal, install and catch-up requests go (the replication layer); called on the controller
     *     thread
     */
    public Controller(NodeId self, MetadataLog log, Clock clock, Consumer<RecoveryRequest> requests) {
        this.self = self;
        this.log = log;
        this.clock = clock;
        this.requests = requests;
        this.thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread t = new Thread(runnable, "ganglion-controller");
            t.setDaemon(true);
            return t;
        });
        log.onLeaderChange(leader -> onThread(() -> leadershipChanged(leader)));
        log.subscribe(image -> kick());
        thread.execute(this::rehearsalTick);
    }

    /**
     * On every broker, the controller included: the tick this one would run if another live broker died (one broker
     * after the other, one each {@code controller.tick_ms}), its result thrown away. It is pure (nothing proposed,
     * nothing sent), so the only cost is one tick per tick period. Why: the code of a failover otherwise runs for the
     * first time when it is needed. A broker that takes over as controller when the one that led dies ran its first
     * ticks cold (120 ms before the first command of a takeover in the failover bench); and the controller that runs
     * all along had never run the placement, hold and recovery-planning branches either, so the first owner kill of a
     * failover bench run spent 20-32 ms in its first failover tick, against 1 ms in every later one. On the controller
     * thread.
     */
    private void rehearsalTick() {
        try {
            CoordinationImage image = log.image().coordination();
            List<NodeId> others = image.liveSet().placeableNodes().stream()
                    .filter(node -> !node.equals(self))
                    .toList();
            if (!others.isEmpty()) {
                NodeId dies = others.get(Math.floorMod(rehearsalRounds++, others.size()));
                ControllerTick.run(
                        image,
                        image.liveSet().eagerFailover(dies, clock.millis()),
                        RecoveryBackoff.none(),
                        clock.millis());
                rehearsalTicks++;
            }
        } catch (RuntimeException e) {
            LOG.debug("event=controller_rehearsal_tick_failed node={} cause={}", self, e.toString());
        } finally {
            onThreadAfter(this::rehearsalTick, setting(RuntimeSettings.TICK_MS));
        }
    }

    /** Rehearsal ticks run so far (tests). Any thread. */
    long rehearsalTicks() {
        return rehearsalTicks;
    }

    /**
     * Runs a tick as soon as the controller thread is free, instead of at the next {@code controller.tick_ms}: the
     * image changed (a recovery reply or the controller's own command was committed), a node went down or came back.
     * Recovery goes from step to step at the speed of the metadata log, not of the tick. Any thread; kicks that arrive
     * while one is queued are one kick.
     */
    private void kick() {
        if (kickQueued.compareAndSet(false, true)) {
            try {
                thread.execute(() -> {
                    kickQueued.set(false);
                    tickNow();
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                kickQueued.set(false); // closed
            }
        }
    }

    private final java.util.concurrent.atomic.AtomicBoolean kickQueued =
            new java.util.concurrent.atomic.AtomicBoolean();

    /** A heartbeat from {@code node}. Any thread. */
    public void heartbeat(NodeId node, Incarnation incarnation, boolean draining) {
        onThread(() -> {
            if (active) {
                boolean wasLive = observed.isLive(node);
                observed = observed.heartbeat(node, incarnation, draining, clock.millis());
                if (!wasLive) {
                    kick(); // back (or new): placement may use it now
                }
            }
            closedAtMs.remove(node);
        });
    }

    /**
     * The peer connection to {@code node} closed. Any thread. Recorded on every broker, controller or not: when the
     * controller itself dies, its connections to the others close too, and the broker elected next must not wait for
     * expiry to learn that the old controller is gone.
     */
    public void connectionClosed(NodeId node) {
        onThread(() -> {
            long closedAt = clock.millis();
            closedAtMs.put(node, closedAt);
            scheduleEagerFailover(node, closedAt, setting(RuntimeSettings.EAGER_FAILOVER_MS));
        });
    }

    /**
     * Nothing listens on {@code node}'s peer port any more (a connection to it was refused) after its link closed: the
     * process is gone, not cut off, so there is nothing to wait {@code liveness.eager_failover_ms} for. Any thread.
     */
    public void connectionRefused(NodeId node) {
        onThread(() -> {
            Long closedAt = closedAtMs.get(node);
            if (closedAt != null) {
                failOver(node, closedAt, "refused");
            }
        });
    }

    private void scheduleEagerFailover(NodeId node, long closedAt, long delayMs) {
        onThreadAfter(() -> failOver(node, closedAt, "closed"), Math.max(0, delayMs));
    }

    /** {@link #onThread} after {@code delayMs}. */
    private void onThreadAfter(Runnable task, long delayMs) {
        try {
            thread.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("event=controller_closed_dropped_task node={}", self);
        }
    }

    /**
     * Runs {@code task} on the controller thread; once the controller is closed (the broker stopping), drops it. The
     * callbacks that call this (a peer link closing, leadership lost, a proposal completing) keep coming while a broker
     * stops, and each was logged as a failed handler.
     */
    private void onThread(Runnable task) {
        try {
            thread.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("event=controller_closed_dropped_task node={}", self);
        }
    }

    /** Takes {@code node} out of the live set if its link is still closed since {@code closedAt}. Controller thread. */
    private void failOver(NodeId node, long closedAt, String cause) {
        Long still = closedAtMs.get(node);
        if (active && still != null && still == closedAt) {
            closedAtMs.remove(node);
            LiveSet next = observed.eagerFailover(node, clock.millis());
            if (next != observed) {
                LOG.info("event=eager_failover node={} cause={}", node, cause);
                observed = next;
                kick();
            }
        }
    }

    /** Whether this broker runs the controller now, and what its last tick held. Any thread (a volatile read). */
    public Snapshot snapshot() {
        return snapshot;
    }

    private void leadershipChanged(boolean leader) {
        if (leader == active) {
            return;
        }
        java.util.OptionalLong term = log.leaderTerm();
        if (leader && term.isEmpty()) {
            LOG.debug("event=controller_leadership_gone_before_start node={}", self); // its end is on its way
            return;
        }
        active = leader;
        if (leader) {
            leaderTerm = term.getAsLong();
            long leaderSinceMs = clock.millis();
            watchingSinceMs = leaderSinceMs;
            lastTickMs = leaderSinceMs;
            observed = log.image().coordination().liveSet();
            backoff = RecoveryBackoff.none();
            LOG.info(
                    "event=controller_started node={} index={} term={}",
                    self,
                    log.image().appliedIndex(),
                    leaderTerm);
            long eager = setting(RuntimeSettings.EAGER_FAILOVER_MS);
            closedAtMs.forEach(
                    (node, closedAt) -> scheduleEagerFailover(node, closedAt, closedAt + eager - leaderSinceMs));
            // the first tick at once: a controller that just took over may have a dead predecessor to report
            nextTick = thread.schedule(this::tick, 0, TimeUnit.MILLISECONDS);
        } else {
            if (nextTick != null) {
                nextTick.cancel(false);
            }
            held = new TreeMap<>();
            unconfirmed.clear();
            replies.clear(); // the next controller asks again: a replica answers a seal or install it did already
            LOG.info("event=controller_stopped node={}", self);
        }
        snapshot = new Snapshot(active, held, ticks);
    }

    private void scheduleTick() {
        nextTick = thread.schedule(this::tick, setting(RuntimeSettings.TICK_MS), TimeUnit.MILLISECONDS);
    }

    private long setting(Setting setting) {
        return log.image().coordination().settings().value(setting);
    }

    private void tick() {
        if (!active) {
            return;
        }
        try {
            long now = clock.millis();
            long expiryMs = setting(RuntimeSettings.EXPIRY_MS);
            if (now - lastTickMs >= setting(RuntimeSettings.TICK_MS) + expiryMs / 2) {
                // The controller stood still (a long pause, SIGSTOP, a starved host): the heartbeats of that time wait
                // behind this tick, and the silence is its own. After a SIGSTOP past expiry, its first tick took every
                // broker down, itself included. Watch again from now, as a new controller does.
                LOG.info("event=controller_stood_still node={} ms={}", self, now - lastTickMs);
                watchingSinceMs = now;
            }
            lastTickMs = now;
            CoordinationImage committed = log.image().coordination();
            LiveSet expired = observed.expire(now, expiryMs, watchingSinceMs);
            if (expired != observed) {
                expired.changesSince(observed)
                        .forEach(state -> LOG.info("event=liveness_expired node={}", state.node()));
            }
            observed = expired;
            // the tick goes on from the commands in flight, but seals only recoveries whose proposal is committed and
            // installs only to a committed point
            TickResult result = ControllerTick.run(committed, inFlight(), observed, backoff, now);
            backoff = result.backoff();
            if (!result.held().keySet().equals(held.keySet())) {
                result.held().forEach((object, lost) -> {
                    if (!held.containsKey(object)) {
                        LOG.info("event=hold_begun object={} lost={}", object, lost);
                    }
                });
            }
            held = result.held();
            ticks++;
            List<CoordinationCommand> fresh = new java.util.ArrayList<>(result.commands());
            fresh.removeAll(unconfirmed); // proposed already, not committed yet
            long tickMs = setting(RuntimeSettings.TICK_MS);
            List<CoordinationCommand> entry = new java.util.ArrayList<>();
            boolean due = replies.values().stream().anyMatch(at -> now - at >= tickMs);
            if (!replies.isEmpty() && (!fresh.isEmpty() || due)) {
                // when and why held replies went out, for the failover bench's timings
                LOG.info(
                        "event=recovery_replies_proposed replies={} with={} cause={}",
                        replies.size(),
                        fresh.stream()
                                .map(command -> command instanceof CoordinationCommand.AppendHistory append
                                        ? append.record().getClass().getSimpleName()
                                        : command.getClass().getSimpleName())
                                .toList(),
                        fresh.isEmpty() ? "held_a_tick" : "steps");
                entry.addAll(replies.keySet()); // first: the tick's steps were worked out with them applied
                replies.clear();
            }
            entry.addAll(fresh);
            if (!entry.isEmpty()) {
                result.commands().stream()
                        .filter(command -> command instanceof CoordinationCommand.CommitLiveSet)
                        .forEach(command -> LOG.info("event=live_set_proposed command={}", command));
                proposeAsOneEntry(entry).whenComplete((ignored, failure) -> kick());
            } else if (!result.commands().isEmpty()) {
                LOG.debug(
                        "event=controller_waiting_for_proposals commands={}",
                        result.commands().size());
            }
            result.requests().forEach(request -> {
                LOG.debug("event=recovery_request request={}", request);
                requests.accept(request);
            });
            snapshot = new Snapshot(true, held, ticks);
        } catch (RuntimeException e) {
            LOG.error("event=controller_tick_failed node={}", self, e);
        } finally {
            if (active) {
                scheduleTick();
            }
        }
    }

    /** The commands proposed and not completed, then the replies held: what the tick counts as in flight. */
    private List<CoordinationCommand> inFlight() {
        List<CoordinationCommand> all = new java.util.ArrayList<>(unconfirmed);
        all.addAll(replies.keySet());
        return all;
    }

    /** {@code committed} with the commands still in flight and the replies held applied, as the tick sees it. */
    private CoordinationImage speculative(CoordinationImage committed) {
        return ControllerTick.withInFlight(committed, inFlight());
    }

    /**
     * A broker's answer to a recovery request, as the history record it stands for (a seal received, a member
     * installed). Any thread. On the controller the next tick runs at once, counting it as in flight, and proposes it
     * with the steps it allows, or holds it for the reply that allows one (see {@link #replies}); on another broker it
     * is only proposed.
     */
    public void recoveryReply(CoordinationCommand command) {
        onThread(() -> {
            if (!active) {
                log.propose(new MetadataCommand.Coordination(command));
                return;
            }
            if (needless(command)) {
                // a reply to a request sent again (every step of a recovery sends the ones still unanswered), or one
                // that came after the recovery moved on (activated): each copy proposed was one more metadata commit
                // ahead of the recovery's next step
                LOG.debug("event=recovery_reply_known command={}", command);
                return;
            }
            replies.putIfAbsent(command, clock.millis());
            tickNow();
        });
    }

    /**
     * Whether proposing {@code command} would change nothing: the committed image with the commands in flight already
     * holds what it adds, or would refuse it (a late reply: the recovery it answers was activated meanwhile).
     */
    private boolean needless(CoordinationCommand command) {
        return command instanceof CoordinationCommand.AppendHistory append
                && speculative(log.image().coordination())
                        .object(append.id())
                        .map(history -> history.reflects(append.record())
                                || history.append(append.record()) instanceof HistoryOutcome.Rejected)
                        .orElse(true);
    }

    /** The next tick now instead of at its time. On the controller thread. */
    private void tickNow() {
        if (active) {
            if (nextTick != null) {
                nextTick.cancel(false);
            }
            tick();
        }
    }

    /**
     * Proposes a tick's commands as one log entry (a {@link CoordinationCommand.Batch}, applied in order): one round of
     * the metadata log. Proposed one by one they took a round each whenever the log had a round in flight (Ratis' Netty
     * appender keeps one request in flight per follower): the live set change and the recovery it causes, or a
     * recovery point, its installs and the activation, committed one round apart. The recoveries of restarted owners
     * come before the live set change that reveals the restart (see ControllerTick); in one entry the change never
     * commits without them.
     */
    private CompletableFuture<Void> proposeAsOneEntry(List<CoordinationCommand> commands) {
        CoordinationCommand entry = commands.size() == 1 ? commands.get(0) : new CoordinationCommand.Batch(commands);
        unconfirmed.addAll(commands);
        return log.propose(new MetadataCommand.Fenced(leaderTerm, new MetadataCommand.Coordination(entry)))
                .whenComplete((applied, failure) -> onThread(() -> commands.forEach(unconfirmed::remove)))
                .handle((applied, failure) -> {
                    if (failure != null) {
                        LOG.warn("event=controller_propose_failed command={} reason={}", entry, failure.toString());
                        return null;
                    }
                    for (CoordinationCommand command : commands) {
                        if (!applied.accepted() || !committed(applied.image().coordination(), command)) {
                            LOG.debug(
                                    "event=controller_command_rejected command={} reason={}",
                                    command,
                                    applied.rejection().map(Object::toString).orElse("rejected in its batch"));
                        } else if (command instanceof CoordinationCommand.AppendHistory history) {
                            LOG.info("event=history_committed object={} record={}", history.id(), history.record());
                        } else if (command instanceof CoordinationCommand.CommitLiveSet live) {
                            live.changes()
                                    .forEach(state -> LOG.info(
                                            "event=live_set_committed node={} live={} incarnation={} draining={} reason={}",
                                            state.node(),
                                            state.live(),
                                            state.incarnation(),
                                            state.draining(),
                                            state.reason().map(Object::toString).orElse("-")));
                        }
                    }
                    return null;
                });
    }

    /**
     * Whether {@code command}, proposed in an entry the log applied, took effect (for the log lines): a history record
     * is in its object's history; anything else of an accepted entry did.
     */
    private static boolean committed(CoordinationImage image, CoordinationCommand command) {
        return !(command instanceof CoordinationCommand.AppendHistory append)
                || image.object(append.id())
                        .map(history -> history.records().contains(append.record()))
                        .orElse(false);
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
