package io.ganglion.coordination;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Per-object retry state of the recovery driver: when requests for an object may be sent again. Requests go out at
 * once when the object's history moved since the last send, and otherwise after a delay that doubles from {@code
 * recovery.backoff_min_ms} up to {@code recovery.backoff_max_ms}. Objects never wait on each other: there is no global
 * one-at-a-time limit.
 *
 * <p>It lives with the controller, not in the metadata log: a new controller starts with none and sends at once.
 */
public record RecoveryBackoff(SortedMap<ObjectId, Entry> entries) {

    /**
     * @param progress the length of the object's history when requests were last sent
     * @param attempts sends since the history last moved
     * @param nextAtMs when requests may be sent again
     */
    public record Entry(int progress, int attempts, long nextAtMs) {}

    public RecoveryBackoff {
        entries = Collections.unmodifiableSortedMap(new TreeMap<>(entries));
    }

    public static RecoveryBackoff none() {
        return new RecoveryBackoff(new TreeMap<>());
    }

    /** True when requests for {@code history}'s object may be sent at {@code nowMs}. */
    public boolean due(AcceptedHistory history, long nowMs) {
        Entry entry = entries.get(history.id());
        return entry == null || entry.progress() != history.records().size() || nowMs >= entry.nextAtMs();
    }

    /** The delay after the {@code attempts}-th send: min doubled per attempt, capped at max. */
    public static long delayMs(int attempts, long minMs, long maxMs) {
        int shift = Math.min(Math.max(attempts - 1, 0), 30);
        long delay = minMs << shift;
        return delay < 0 ? maxMs : Math.min(delay, maxMs);
    }

    /** Records a send for {@code history}'s object at {@code nowMs}. */
    Entry sent(AcceptedHistory history, long nowMs, long minMs, long maxMs) {
        Entry entry = entries.get(history.id());
        int attempts = entry == null || entry.progress() != history.records().size() ? 1 : entry.attempts() + 1;
        return new Entry(history.records().size(), attempts, nowMs + delayMs(attempts, minMs, maxMs));
    }
}
