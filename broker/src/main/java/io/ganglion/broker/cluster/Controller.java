package io.ganglion.broker.cluster;

import io.ganglion.coordination.ControllerCore;
import io.ganglion.coordination.ControllerTick;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryBackoff;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.Setting;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import java.time.Clock;
import java.util.List;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller runtime: on the broker that leads the metadata log, it runs the coordination module's {@link
 * ControllerTick} every {@code controller.tick_ms} and proposes its commands.
 *
 * <p>Implementation notes. The state and the decisions are the coordination module's {@link ControllerCore}, the
 * same class the simulator drives: the observed live set, eager failover, expiry, the commands in flight and the held
 * recovery replies. This class gives it a thread, a clock, timers and the metadata log: every call into the core runs
 * on the single controller thread; heartbeats, connection events and leadership changes arrive from other threads and
 * are handed to it. Runtime settings are read from the image at every tick.
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

    /** The controller's state and decisions, shared with the simulator. Controller thread only. */
    private final ControllerCore core = new ControllerCore();
    /** The metadata log's term this controller leads in: its commands are fenced with it. Controller thread only. */
    private long leaderTerm;
    /** Rehearsal ticks: which other broker the next one supposes dead, and how many ran (read by tests). */
    private long rehearsalRounds;

    private volatile long rehearsalTicks;
    private ScheduledFuture<?> nextTick;
    private volatile Snapshot snapshot = new Snapshot(false, new TreeMap<>(), 0);
    private final AtomicBoolean kickQueued = new AtomicBoolean();

    /** What the status page shows: whether this broker runs the controller, the held objects, ticks run. */
    public record Snapshot(boolean active, SortedMap<ObjectId, List<NodeId>> held, long ticks) {}

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
     * nothing sent), so the only cost is one tick per tick period; it keeps the failover branches of the tick compiled
     * before a failover needs them (docs/coordination.md, "The controller"). On the controller thread.
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
            } catch (RejectedExecutionException e) {
                kickQueued.set(false); // closed
            }
        }
    }

    /** A heartbeat from {@code node}. Any thread. */
    public void heartbeat(NodeId node, Incarnation incarnation, boolean draining) {
        onThread(() -> {
            if (core.heartbeat(node, incarnation, draining, clock.millis())) {
                kick(); // back (or new): placement may use it now
            }
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
            core.connectionClosed(node, closedAt);
            scheduleEagerFailover(node, closedAt, setting(RuntimeSettings.EAGER_FAILOVER_MS));
        });
    }

    /**
     * Nothing listens on {@code node}'s peer port any more (a connection to it was refused) after its link closed: the
     * process is gone, not cut off, so there is nothing to wait {@code liveness.eager_failover_ms} for. Any thread.
     */
    public void connectionRefused(NodeId node) {
        onThread(() -> core.closedAt(node).ifPresent(closedAt -> failOver(node, closedAt, "refused")));
    }

    private void scheduleEagerFailover(NodeId node, long closedAt, long delayMs) {
        onThreadAfter(() -> failOver(node, closedAt, "closed"), Math.max(0, delayMs));
    }

    /** {@link #onThread} after {@code delayMs}. */
    private void onThreadAfter(Runnable task, long delayMs) {
        try {
            thread.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debug("event=controller_closed_dropped_task node={}", self);
        }
    }

    /**
     * Runs {@code task} on the controller thread; once the controller is closed (the broker stopping), drops it: the
     * callbacks that call this (a peer link closing, leadership lost, a proposal completing) keep coming while a broker
     * stops.
     */
    private void onThread(Runnable task) {
        try {
            thread.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.debug("event=controller_closed_dropped_task node={}", self);
        }
    }

    /** Takes {@code node} out of the live set if its link is still closed since {@code closedAt}. Controller thread. */
    private void failOver(NodeId node, long closedAt, String cause) {
        if (core.failOver(node, closedAt, clock.millis())) {
            LOG.info("event=eager_failover node={} cause={}", node, cause);
            kick();
        }
    }

    /** Whether this broker runs the controller now, and what its last tick held. Any thread (a volatile read). */
    public Snapshot snapshot() {
        return snapshot;
    }

    private void leadershipChanged(boolean leader) {
        if (leader == core.active()) {
            return;
        }
        OptionalLong term = log.leaderTerm();
        if (leader && term.isEmpty()) {
            LOG.debug("event=controller_leadership_gone_before_start node={}", self); // its end is on its way
            return;
        }
        if (leader) {
            leaderTerm = term.getAsLong();
            long leaderSinceMs = clock.millis();
            SortedMap<NodeId, Long> closed =
                    core.begin(log.image().coordination().liveSet(), leaderSinceMs);
            LOG.info(
                    "event=controller_started node={} index={} term={}",
                    self,
                    log.image().appliedIndex(),
                    leaderTerm);
            long eager = setting(RuntimeSettings.EAGER_FAILOVER_MS);
            closed.forEach((node, closedAt) -> scheduleEagerFailover(node, closedAt, closedAt + eager - leaderSinceMs));
            // the first tick at once: a controller that just took over may have a dead predecessor to report
            nextTick = thread.schedule(this::tick, 0, TimeUnit.MILLISECONDS);
        } else {
            if (nextTick != null) {
                nextTick.cancel(false);
            }
            core.end(); // the next controller asks again: a replica answers a seal or install it did already
            LOG.info("event=controller_stopped node={}", self);
        }
        snapshot = new Snapshot(core.active(), core.held(), core.ticks());
    }

    private void scheduleTick() {
        nextTick = thread.schedule(this::tick, setting(RuntimeSettings.TICK_MS), TimeUnit.MILLISECONDS);
    }

    private long setting(Setting setting) {
        return log.image().coordination().settings().value(setting);
    }

    private void tick() {
        if (!core.active()) {
            return;
        }
        try {
            ControllerCore.Tick tick = core.tick(log.image().coordination(), clock.millis());
            logTick(tick);
            if (!tick.entry().isEmpty()) {
                List<CoordinationCommand> entry = tick.entry();
                proposeAsOneEntry(entry).whenComplete((ignored, failure) -> kick());
            }
            tick.requests().forEach(request -> {
                LOG.debug("event=recovery_request request={}", request);
                requests.accept(request);
            });
            snapshot = new Snapshot(true, tick.held(), core.ticks());
        } catch (RuntimeException e) {
            LOG.error("event=controller_tick_failed node={}", self, e);
        } finally {
            if (core.active()) {
                scheduleTick();
            }
        }
    }

    private void logTick(ControllerCore.Tick tick) {
        if (tick.stoodStillMs() >= 0) {
            LOG.info("event=controller_stood_still node={} ms={}", self, tick.stoodStillMs());
        }
        tick.expired().forEach(state -> LOG.info("event=liveness_expired node={}", state.node()));
        tick.heldBegun().forEach((object, lost) -> LOG.info("event=hold_begun object={} lost={}", object, lost));
        if (tick.repliesProposed() > 0) {
            // when and why held replies went out, for the failover bench's timings
            LOG.info(
                    "event=recovery_replies_proposed replies={} with={} cause={}",
                    tick.repliesProposed(),
                    tick.fresh().stream()
                            .map(command -> command instanceof CoordinationCommand.AppendHistory append
                                    ? append.record().getClass().getSimpleName()
                                    : command.getClass().getSimpleName())
                            .toList(),
                    tick.fresh().isEmpty() ? "held_a_tick" : "steps");
        }
        tick.fresh().stream()
                .filter(command -> command instanceof CoordinationCommand.CommitLiveSet)
                .forEach(command -> LOG.info("event=live_set_proposed command={}", command));
        if (tick.waiting()) {
            LOG.debug("event=controller_waiting_for_proposals");
        }
    }

    /**
     * A broker's answer to a recovery request, as the history record it stands for (a seal received, a member
     * installed). Any thread. On the controller the next tick runs at once, counting it as in flight, and proposes it
     * with the steps it allows, or holds it for the reply that allows one; on another broker it is only proposed.
     */
    public void recoveryReply(CoordinationCommand command) {
        onThread(() -> {
            switch (core.reply(command, log.image().coordination(), clock.millis())) {
                case INACTIVE -> log.propose(new MetadataCommand.Coordination(command));
                case NEEDLESS -> LOG.debug("event=recovery_reply_known command={}", command);
                case HELD -> tickNow();
            }
        });
    }

    /** The next tick now instead of at its time. On the controller thread. */
    private void tickNow() {
        if (core.active()) {
            if (nextTick != null) {
                nextTick.cancel(false);
            }
            tick();
        }
    }

    /**
     * Proposes a tick's commands as one log entry (a {@link CoordinationCommand.Batch}, applied in order): one round of
     * the metadata log, where one by one they took a round each whenever the log had a round in flight. The recoveries
     * of restarted owners come before the live set change that reveals the restart (see ControllerTick); in one entry
     * the change never commits without them.
     */
    private CompletableFuture<Void> proposeAsOneEntry(List<CoordinationCommand> commands) {
        MetadataCommand.Fenced entry = MetadataCommand.Fenced.controllerEntry(leaderTerm, commands);
        return log.propose(entry)
                .whenComplete((applied, failure) -> onThread(() -> core.completed(commands)))
                .handle((applied, failure) -> {
                    if (failure != null) {
                        LOG.warn("event=controller_propose_failed command={} reason={}", entry, failure.toString());
                        return null;
                    }
                    for (CoordinationCommand command : commands) {
                        logOutcome(applied, command);
                    }
                    return null;
                });
    }

    private static void logOutcome(MetadataImage.Applied applied, CoordinationCommand command) {
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
