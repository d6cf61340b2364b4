package io.ganglion.broker;

import java.util.concurrent.Executors;
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
    static final long RECENT_BUDGET_BYTES = 32L * 1024 * 1024;

    private final int index;
    private final ScheduledExecutorService executor;
    private volatile Thread thread;
    /** Shard thread only: payload bytes held by this shard's queues in their recent-message caches. */
    long recentBytes;

    public Shard(int index) {
        this.index = index;
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
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
        executor.schedule(() -> execute(task), delayMs, TimeUnit.MILLISECONDS);
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
