package io.ganglion.testing;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Waiting in tests, in one place: a condition (or a probe for a value) checked at once, then every {@code every}
 * (10 ms unless given), until it holds or the timeout passes; it is checked a last time at the deadline.
 *
 * <ul>
 *   <li>{@link #until} fails on timeout with an {@link AssertionError} that says what was awaited ({@code describe},
 *       read only then, so it can report the last state seen).
 *   <li>{@link #untilPresent} does the same for a probe and returns the value it gave.
 *   <li>{@link #within} returns whether the condition held, for a test that asserts afterwards with a message of its
 *       own, or that goes on either way.
 * </ul>
 *
 * <p>The condition runs on the calling thread. An exception it throws ends the wait: an unchecked one as it is, a
 * checked one wrapped in an {@link AssertionError}; a condition that expects passing failures (a broker not answering
 * yet) catches them itself. An interrupt ends the wait with an {@link AssertionError}, the thread's interrupt status
 * set again.
 */
public final class Poll {
    /** How often a condition is checked unless a caller says otherwise. */
    public static final Duration EVERY = Duration.ofMillis(10);

    private Poll() {}

    /** A condition to wait for. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** A value to wait for: empty until it is there. */
    @FunctionalInterface
    public interface Probe<T> {
        Optional<T> read() throws Exception;
    }

    /**
     * Waits until {@code condition} holds.
     *
     * @throws AssertionError "{@code describe}: not within {@code timeout}" when the timeout passes first
     */
    public static void until(Duration timeout, Condition condition, Supplier<String> describe) {
        until(timeout, EVERY, condition, describe);
    }

    /** Like {@link #until(Duration, Condition, Supplier)}, checking every {@code every}. */
    public static void until(Duration timeout, Duration every, Condition condition, Supplier<String> describe) {
        untilPresent(timeout, every, asProbe(condition), describe);
    }

    /**
     * Waits until {@code probe} gives a value, and returns it.
     *
     * @throws AssertionError "{@code describe}: not within {@code timeout}" when the timeout passes first
     */
    public static <T> T untilPresent(Duration timeout, Probe<T> probe, Supplier<String> describe) {
        return untilPresent(timeout, EVERY, probe, describe);
    }

    /** Like {@link #untilPresent(Duration, Probe, Supplier)}, probing every {@code every}. */
    public static <T> T untilPresent(Duration timeout, Duration every, Probe<T> probe, Supplier<String> describe) {
        return poll(timeout, every, probe, describe)
                .orElseThrow(() -> new AssertionError(describe.get() + ": not within " + timeout));
    }

    /** Waits until {@code condition} holds or {@code timeout} passes; returns whether it held. */
    public static boolean within(Duration timeout, Condition condition) {
        return within(timeout, EVERY, condition);
    }

    /** Like {@link #within(Duration, Condition)}, checking every {@code every}. */
    public static boolean within(Duration timeout, Duration every, Condition condition) {
        return poll(timeout, every, asProbe(condition), () -> "a condition").isPresent();
    }

    private static Probe<Boolean> asProbe(Condition condition) {
        return () -> condition.holds() ? Optional.of(true) : Optional.empty();
    }

    private static <T> Optional<T> poll(Duration timeout, Duration every, Probe<T> probe, Supplier<String> describe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<T> value = read(probe, describe);
            if (value.isPresent()) {
                return value;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return Optional.empty();
            }
            pause(Math.min(left, every.toNanos()), describe);
        }
    }

    private static <T> Optional<T> read(Probe<T> probe, Supplier<String> describe) {
        try {
            return probe.read();
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            throw interrupted(describe, e);
        } catch (Exception e) {
            throw new AssertionError(describe.get() + ": the condition threw " + e, e);
        }
    }

    private static void pause(long nanos, Supplier<String> describe) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            throw interrupted(describe, e);
        }
    }

    private static AssertionError interrupted(Supplier<String> describe, InterruptedException e) {
        Thread.currentThread().interrupt();
        return new AssertionError(describe.get() + ": interrupted while waiting", e);
    }
}
