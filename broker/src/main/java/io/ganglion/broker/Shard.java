package io.ganglion.broker;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
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

    private final int index;
    private final ExecutorService executor;
    private volatile Thread thread;
    /** Shard thread only: payload bytes held by this shard's queues in their recent-message caches. */
    private long recentBytes;

    public Shard(int index) {
        this.index = index;
        this.executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread t = new Thread(
                    () -> {
                        thread = Thread.currentThread();
                        runnable.run();
                    },
                    "ganglion-shard-" + index);
            t.setDaemon(true);
            return t;
        });
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
