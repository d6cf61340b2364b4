package io.ganglion.sim;

import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * Virtual time: a priority queue of events keyed by (time, sequence). Events at the same time run in the order they
 * were scheduled, so a run is a function of its seed alone.
 *
 * <p>Every executed event folds its time and label into the trace hash: two runs of one seed give the same hash, and a
 * change of behaviour almost always changes it.
 */
public final class Scheduler {
    private record Event(long timeMs, long sequence, String label, Runnable action) {}

    private final PriorityQueue<Event> queue =
            new PriorityQueue<>(Comparator.comparingLong(Event::timeMs).thenComparingLong(Event::sequence));
    private long nowMs;
    private long sequence;
    private long executed;
    private long traceHash = 0xcbf29ce484222325L;

    public long now() {
        return nowMs;
    }

    /** Runs {@code action} at {@code timeMs}, or now if that is in the past. */
    public void at(long timeMs, String label, Runnable action) {
        queue.add(new Event(Math.max(timeMs, nowMs), sequence++, label, action));
    }

    public void after(long delayMs, String label, Runnable action) {
        at(nowMs + delayMs, label, action);
    }

    /** Runs every event due at or before {@code timeMs}, then sets the clock to it. */
    public void runUntil(long timeMs) {
        while (!queue.isEmpty() && queue.peek().timeMs() <= timeMs) {
            Event event = queue.poll();
            nowMs = event.timeMs();
            executed++;
            traceHash = mix(mix(traceHash, event.timeMs()), event.label().hashCode());
            event.action().run();
        }
        nowMs = Math.max(nowMs, timeMs);
    }

    /** Folds an outcome that is not an event (a message dropped, a proposal lost) into the trace. */
    public void trace(String label) {
        traceHash = mix(mix(traceHash, nowMs), label.hashCode());
    }

    public long traceHash() {
        return traceHash;
    }

    public long executed() {
        return executed;
    }

    private static long mix(long hash, long value) {
        long h = (hash ^ value) * 0x100000001b3L;
        return h ^ (h >>> 29);
    }
}
