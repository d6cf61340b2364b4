package io.ganglion.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Waiting in the benchmark programs and the integration tests, in one place: polling a condition on a scheduler until it holds or a deadline
 * passes, and pausing. Checks run on this class's scheduler threads.
 */
public final class Waits {
    private static final ScheduledExecutorService SCHEDULER = Executors.newScheduledThreadPool(2, runnable -> {
        Thread thread = new Thread(runnable, "ganglion-bench-wait");
        thread.setDaemon(true);
        return thread;
    });

    private Waits() {}

    /** A condition to poll; one that throws does not hold (the last failure is reported if the wait times out). */
    @FunctionalInterface
    public interface Check {
        boolean holds() throws Exception;
    }

    /**
     * Checks {@code check} at once, then every {@code every}, until it holds.
     *
     * @throws IOException {@code failure} (with the last exception the check threw) when {@code timeout} passes first
     */
    public static void until(Duration timeout, Duration every, String failure, Check check)
            throws IOException, InterruptedException {
        CompletableFuture<Void> held = new CompletableFuture<>();
        AtomicReference<Exception> last = new AtomicReference<>();
        ScheduledFuture<?> polling = SCHEDULER.scheduleWithFixedDelay(
                () -> {
                    try {
                        if (check.holds()) {
                            held.complete(null);
                        }
                    } catch (Exception e) {
                        last.set(e);
                    }
                },
                0,
                every.toMillis(),
                TimeUnit.MILLISECONDS);
        try {
            held.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            Exception cause = last.get();
            throw new IOException(failure + (cause == null ? "" : ": " + cause.getMessage()), cause);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } finally {
            polling.cancel(false);
        }
    }

    /** Like {@link #until}, but returns whether the condition held instead of failing. */
    public static boolean within(Duration timeout, Duration every, Check check) throws InterruptedException {
        try {
            until(timeout, every, "", check);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Waits {@code duration}. */
    public static void pause(Duration duration) throws InterruptedException {
        try {
            new CompletableFuture<Void>()
                    .completeOnTimeout(null, duration.toMillis(), TimeUnit.MILLISECONDS)
                    .get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }
}
