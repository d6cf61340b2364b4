package io.ganglion.broker;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One single-threaded executor that owns a set of queue replicas: every state change of a replica happens on its
 * shard's thread, by tasks, in submission order. No locks in the data path.
 *
 * <p>Public so that the replication hosts ({@code io.ganglion.broker.replication}) run on the same shards as the
 * queues; {@link #execute}, {@link #schedule} and {@link #onShardThread} may be called from any thread.
 */
public final class Shard implements java.util.concurrent.Executor, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

    /** Bytes of recent message payloads the queues of one shard may keep in heap for their first delivery. */
    public static final long RECENT_BUDGET_BYTES = 32L * 1024 * 1024;

    /**
     * One timer thread for every shard of the process: it only hands due tasks to their shard. A shard's own queue is
     * a plain FIFO, so the tasks that make up the data path never pay for a delay queue's ordering.
     */
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread t = new Thread(runnable, "ganglion-shard-timer");
        t.setDaemon(true);
        return t;
    });

    /** Tasks a shard runs back to back at most before it runs its idle hooks anyway (see {@link #whenIdle}). */
    static final int TASKS_PER_IDLE = 64;

    private final int index;
    private final ThreadPoolExecutor executor;
    /** Shard thread only: hooks to run once the task queue is empty (or {@link #TASKS_PER_IDLE} tasks ran). */
    private final ArrayList<Runnable> idleHooks = new ArrayList<>();

    private int tasksSinceIdle;
    private volatile Thread thread;
    /** Shard thread only: payload bytes held by this shard's queues in their recent-message caches. */
    private long recentBytes;

    public Shard(int index) {
        this.index = index;
        ThreadFactory threads = runnable -> {
            Thread t = new Thread(
                    () -> {
                        thread = Thread.currentThread();
                        runnable.run();
                    },
                    "ganglion-shard-" + index);
            t.setDaemon(true);
            return t;
        };
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), threads) {
            @Override
            protected void afterExecute(Runnable task, Throwable error) {
                afterTask(getQueue().isEmpty());
            }
        };
    }

    /**
     * Runs {@code hook} on this shard's thread once the tasks queued now have run, or sooner when the queue never
     * empties ({@link #TASKS_PER_IDLE} tasks): for work that is cheaper done once for many tasks, such as sending the
     * records of many publishes in one message. Hooks run in the order they were registered; a hook registered while
     * hooks run waits for the next idle point. Shard thread only.
     */
    public void whenIdle(Runnable hook) {
        idleHooks.add(hook);
    }

    private void afterTask(boolean queueEmpty) {
        if (idleHooks.isEmpty() || (!queueEmpty && ++tasksSinceIdle < TASKS_PER_IDLE)) {
            return;
        }
        tasksSinceIdle = 0;
        List<Runnable> hooks = List.copyOf(idleHooks);
        idleHooks.clear();
        for (Runnable hook : hooks) {
            try {
                hook.run();
            } catch (RuntimeException | Error e) {
                LOG.error("event=shard_idle_hook_failed shard={}", index, e);
            }
        }
        if (!idleHooks.isEmpty() && !executor.isShutdown()) {
            executor.execute(() -> {}); // a hook registered by a hook: its idle point comes after this empty task
        }
    }

    public int index() {
        return index;
    }

    /** Runs {@code task} on this shard's thread after every task submitted before it. A failing task is logged once. */
    @Override
    public void execute(Runnable task) {
        executor.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                LOG.error("event=shard_task_failed shard={}", index, e);
            }
        });
    }

    /** Runs {@code task} on this shard's thread after {@code delayMs}. */
    public void schedule(Runnable task, long delayMs) {
        if (executor.isShutdown()) {
            throw new RejectedExecutionException("shard " + index + " is closed");
        }
        TIMER.schedule(
                () -> {
                    try {
                        execute(task);
                    } catch (RejectedExecutionException e) {
                        LOG.debug("event=shard_timer_dropped shard={} reason=closed", index);
                    }
                },
                delayMs,
                TimeUnit.MILLISECONDS);
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
        return Thread.currentThread() == thread;
    }

    @Override
    public void close() {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            executor.shutdownNow();
        }
    }
}
