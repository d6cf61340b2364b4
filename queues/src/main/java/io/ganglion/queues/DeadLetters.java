package io.ganglion.queues;

import java.util.List;

/**
 * RabbitMQ's dead-lettering rules that do not depend on how a message is encoded: why a message left its queue, and
 * when republishing it to a queue would close a cycle.
 *
 * <p>A message's deaths are its {@code x-death} entries, the most recent first, one per queue and reason. Dead-lettering
 * it to queue {@code q} closes a cycle when {@code q} is among them and no entry from the newest up to and including
 * {@code q}'s is a rejection: the message went round with no consumer deciding anything, so RabbitMQ drops it for that
 * queue rather than loop for ever. A rejection in the cycle means a consumer keeps sending it round (the retry pattern),
 * which is allowed.
 */
public final class DeadLetters {
    private DeadLetters() {}

    /** Why a message left its queue, by the name RabbitMQ writes in {@code x-death}. */
    public enum Reason {
        /** {@code basic.reject} or {@code basic.nack} without requeue. */
        REJECTED("rejected", 1),
        /** Its TTL passed. */
        EXPIRED("expired", 2),
        /** Dropped from the head over a length limit. */
        MAXLEN("maxlen", 3),
        /** Returned more times than the queue's delivery limit. */
        DELIVERY_LIMIT("delivery_limit", 4);

        private final String wireName;
        private final int code;

        Reason(String wireName, int code) {
            this.wireName = wireName;
            this.code = code;
        }

        /** Its code in a replicated log's dead-lettered record: fixed, whatever the order here. */
        public int code() {
            return code;
        }

        /** The reason of {@code code}, or empty for a code no reason has. */
        public static java.util.Optional<Reason> ofCode(long code) {
            for (Reason reason : values()) {
                if (reason.code == code) {
                    return java.util.Optional.of(reason);
                }
            }
            return java.util.Optional.empty();
        }

        /** The name in {@code x-death}'s {@code reason} and {@code x-first-death-reason}. */
        public String wireName() {
            return wireName;
        }
    }

    /**
     * One {@code x-death} entry as the cycle rule reads it: its queue and reason, either null when the entry is not a
     * table or lacks it.
     */
    public record Death(String queue, String reason) {}

    /**
     * Whether dead-lettering a message with {@code deaths} (its new entry first) to {@code target} closes a cycle with
     * no rejection in it, so the message must not go to {@code target}. A message dead-lettered as rejected now never
     * does.
     */
    public static boolean closesCycle(Reason now, List<Death> deaths, String target) {
        if (now == Reason.REJECTED) {
            return false;
        }
        for (Death death : deaths) {
            if (death.queue() == null || REJECTED_NAME.equals(death.reason())) {
                return false; // a rejection, or an entry that cannot be read, before the target: no automatic cycle
            }
            if (death.queue().equals(target)) {
                return true;
            }
        }
        return false;
    }

    private static final String REJECTED_NAME = Reason.REJECTED.wireName();
}
