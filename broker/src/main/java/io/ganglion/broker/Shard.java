package io.ganglion.broker;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.RejectedExecutionHandlers;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One single-threaded executor that owns a set of queue replicas: every state change of a replica happens on its
 * shard's thread, by tasks, in submission order. No locks in the data path.
 *
 * <p>A shard's thread is a Netty event loop ({@link Group}): the peer link and the AMQP server register their
 * connections on the shards' loops, so that a message from a peer or a client for a queue of the loop's own shard, and
 * a message a shard sends on a connection of its own loop, pass no thread boundary (no task hand-off, no wake-up of
 * another thread). Shard tasks must not block for long: they hold up the connections of their loop.
 *
 * <p>Public so that the replication hosts ({@code io.ganglion.broker.replication}) run on the same shards as the
 * queues; {@link #execute}, {@link #schedule} and {@link #onShardThread} may be called from any thread.
 */
public final class Shard implements Executor, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

    /** Bytes of recent message payloads the queues of one shard may keep in heap for their first delivery. */
    public static final long RECENT_BUDGET_BYTES = 32L * 1024 * 1024;

    /** Tasks a shard runs back to back at most before it runs its idle hooks anyway (see {@link #whenIdle}). */
    static final int TASKS_PER_IDLE = 64;

    /** How long a shard's loop runs tasks before it looks at its connections again (Netty's least, 1 ms). */
    private static final long TASK_QUANTUM_MS = 1;

    private static final long CLOSE_TIMEOUT_SECONDS = 5;

    private final int index;
    private final SingleThreadIoEventLoop loop;
    /** The group this shard alone owns (closed with it), or null when a {@link Group} owns it. */
    private final EventLoopGroup ownGroup;
    /** Shard thread only: hooks to run once the task queue is empty (or {@link #TASKS_PER_IDLE} tasks ran). */
    private final ArrayList<Runnable> idleHooks = new ArrayList<>();

    private final Runnable runIdleHooks = this::runIdleHooks;
    private boolean idlePointArmed;
    private boolean runningHooks;
    private int tasksSinceIdle;
    /** Shard thread only: payload bytes held by this shard's queues in their recent-message caches. */
    private long recentBytes;
    /** Shard thread only: the periodic tasks of this shard's queues and replicas, by period ({@link #every}). */
    private final Map<Long, Ticks> ticks = new HashMap<>();

    /** A shard on a loop of its own (tests, a broker's single shard is a {@link Group} of one). */
    public Shard(int index) {
        Group group = new Group(1, index);
        this.index = index;
        this.loop = group.loop(0);
        this.ownGroup = group.loops;
    }

    private Shard(int index, SingleThreadIoEventLoop loop) {
        this.index = index;
        this.loop = loop;
        this.ownGroup = null;
    }

    /**
     * The shards of a broker: {@code count} Netty event loops, one per shard, named {@code ganglion-shard-<index>},
     * that the peer link and the AMQP server also run their connections on ({@link #eventLoops()}).
     */
    public static final class Group implements AutoCloseable {
        private final MultiThreadIoEventLoopGroup loops;
        private final List<Shard> shards;

        public Group(int count) {
            this(count, 0);
        }

        private Group(int count, int firstIndex) {
            ThreadFactory threads = runnable -> {
                Thread t = new FastThreadLocalThread(runnable, "ganglion-shard");
                t.setDaemon(true);
                return t;
            };
            // each loop names its thread by its shard when the thread starts (loops start in any order); the counter
            // reaches newChild, which runs inside the super constructor, as a constructor argument
            this.loops =
                    new MultiThreadIoEventLoopGroup(
                            count, threads, NioIoHandler.newFactory(), new AtomicInteger(firstIndex)) {
                        @Override
                        protected IoEventLoop newChild(Executor executor, IoHandlerFactory factory, Object... args) {
                            String name = "ganglion-shard-" + ((AtomicInteger) args[0]).getAndIncrement();
                            Executor named = start -> executor.execute(() -> {
                                Thread.currentThread().setName(name);
                                start.run();
                            });
                            return new SingleThreadIoEventLoop(
                                    this,
                                    named,
                                    factory,
                                    Integer.MAX_VALUE,
                                    RejectedExecutionHandlers.reject(),
                                    TASK_QUANTUM_MS);
                        }
                    };
            List<Shard> made = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                made.add(new Shard(firstIndex + i, loop(i)));
            }
            this.shards = List.copyOf(made);
        }

        private SingleThreadIoEventLoop loop(int i) {
            int seen = 0;
            for (var executor : loops) {
                if (seen++ == i) {
                    return (SingleThreadIoEventLoop) executor;
                }
            }
            throw new IllegalArgumentException("no loop " + i);
        }

        public List<Shard> shards() {
            return shards;
        }

        /** The shards' event loops, for the peer link's and the AMQP server's connections. Not shut down by them. */
        public EventLoopGroup eventLoops() {
            return loops;
        }

        /** Stops every shard: tasks queued still run, then the loops end (at most a few seconds). */
        @Override
        public void close() {
            shutdown(loops);
        }
    }

    /**
     * Runs {@code hook} on this shard's thread once the tasks queued now have run, or sooner when the queue never
     * empties ({@link #TASKS_PER_IDLE} tasks): for work that is cheaper done once for many tasks, such as sending the
     * records of many publishes in one message. Hooks run in the order they were registered; a hook registered while
     * hooks run waits for the next idle point. Shard thread only.
     */
    public void whenIdle(Runnable hook) {
        idleHooks.add(hook);
        if (!runningHooks) {
            armIdlePoint();
        }
    }

    /** The loop runs its tail tasks once the tasks it took in this round have run: the idle point. */
    private void armIdlePoint() {
        if (!idlePointArmed) {
            idlePointArmed = true;
            loop.executeAfterEventLoopIteration(runIdleHooks);
        }
    }

    private void afterTask() {
        if (++tasksSinceIdle >= TASKS_PER_IDLE && !idleHooks.isEmpty()) {
            runIdleHooks();
        }
    }

    private void runIdleHooks() {
        idlePointArmed = false;
        tasksSinceIdle = 0;
        if (idleHooks.isEmpty()) {
            return;
        }
        List<Runnable> hooks = List.copyOf(idleHooks);
        idleHooks.clear();
        runningHooks = true;
        try {
            for (Runnable hook : hooks) {
                try {
                    hook.run();
                } catch (RuntimeException | Error e) {
                    LOG.error("event=shard_idle_hook_failed shard={}", index, e);
                }
            }
        } finally {
            runningHooks = false;
        }
        if (!idleHooks.isEmpty() && !loop.isShuttingDown()) {
            // a hook registered by a hook: its idle point is the end of the next round, not this one
            loop.execute(this::armIdlePoint);
        }
    }

    public int index() {
        return index;
    }

    /** Runs {@code task} on this shard's thread after every task submitted before it. A failing task is logged once. */
    @Override
    public void execute(Runnable task) {
        loop.execute(counted(task));
    }

    /** Runs {@code task} on this shard's thread after {@code delayMs}. */
    public void schedule(Runnable task, long delayMs) {
        if (loop.isShuttingDown()) {
            throw new RejectedExecutionException("shard " + index + " is closed");
        }
        loop.schedule(counted(task), delayMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Runs {@code task} on this shard's thread every {@code periodMs}, from the next beat of the shard's clock for that
     * period on, until {@link Ticker#cancel}. Every task of one period runs in the same beat, one after the other, so
     * a shard with many idle queues and replicas wakes once per period instead of once per task (a replica's tick, a
     * queue's lease check), and what they send to one peer in that beat leaves in one write. Shard thread only.
     */
    public Ticker every(long periodMs, Runnable task) {
        if (periodMs < 1) {
            throw new IllegalArgumentException("period must be at least 1 ms: " + periodMs);
        }
        if (loop.isShuttingDown()) {
            throw new RejectedExecutionException("shard " + index + " is closed");
        }
        Ticks beat = ticks.computeIfAbsent(periodMs, Ticks::new);
        Ticker ticker = new Ticker(task);
        beat.tickers.add(ticker);
        beat.arm();
        return ticker;
    }

    /** A task run by {@link #every}: it runs each beat until cancelled. */
    public static final class Ticker {
        private final Runnable task;
        private boolean cancelled;

        private Ticker(Runnable task) {
            this.task = task;
        }

        /** No more beats: takes effect at once, also from within the task itself. Shard thread only. */
        public void cancel() {
            cancelled = true;
        }
    }

    /** The tickers of one period and the one scheduled beat that runs them while there are any. */
    private final class Ticks {
        private final long periodMs;
        private final ArrayList<Ticker> tickers = new ArrayList<>();
        private boolean armed;

        Ticks(long periodMs) {
            this.periodMs = periodMs;
        }

        void arm() {
            if (!armed) {
                armed = true;
                loop.schedule(this::beat, periodMs, TimeUnit.MILLISECONDS);
            }
        }

        /** Runs the tickers registered before this beat; one registered by a ticker waits for the next. */
        private void beat() {
            armed = false;
            int count = tickers.size();
            for (int i = 0; i < count; i++) {
                Ticker ticker = tickers.get(i);
                if (ticker.cancelled) {
                    continue;
                }
                try {
                    ticker.task.run();
                } catch (RuntimeException | Error e) {
                    LOG.error("event=shard_task_failed shard={}", index, e);
                }
                afterTask();
            }
            tickers.removeIf(ticker -> ticker.cancelled);
            if (!tickers.isEmpty() && !loop.isShuttingDown()) {
                arm();
            }
        }
    }

    /** {@code task} as the shard runs it: a failure logged, and counted towards the next idle point. */
    private Runnable counted(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                LOG.error("event=shard_task_failed shard={}", index, e);
            }
            afterTask();
        };
    }

    /**
     * Takes {@code bytes} of the shard's budget for recent payloads held in heap ({@value #RECENT_BUDGET_BYTES}
     * bytes), shared by every queue and replica of the shard; false, taking nothing, when they do not fit. Shard
     * thread only.
     */
    public boolean reserveRecent(long bytes) {
        if (recentBytes + bytes > RECENT_BUDGET_BYTES) {
            return false;
        }
        recentBytes += bytes;
        return true;
    }

    /** Gives back {@code bytes} taken by {@link #reserveRecent}. Shard thread only. */
    public void releaseRecent(long bytes) {
        recentBytes -= bytes;
    }

    public boolean onShardThread() {
        return loop.inEventLoop();
    }

    /** Closes a shard made alone ({@link #Shard(int)}); a shard of a {@link Group} closes with its group. */
    @Override
    public void close() {
        if (ownGroup != null) {
            shutdown(ownGroup);
        }
    }

    private static void shutdown(EventLoopGroup group) {
        group.shutdownGracefully(0, CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .awaitUninterruptibly(2 * CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }
}
