package io.ganglion.queues;

/**
 * Where a {@link QueueMachine} sends what it decided. The broker executes these with real IO on the queue's shard; the
 * simulator records them.
 */
public interface QueueEffects {
    /** Deliver the message at {@code offset} to {@code consumer}. */
    void deliver(ConsumerKey consumer, long offset, boolean redelivered);

    /** The message at {@code offset} is settled (acknowledged, purged, or left another way below): log it. */
    void settle(long offset);

    /** The message at {@code offset} was rejected or nacked without requeue: it leaves the queue as settled. */
    default void rejected(long offset) {
        settle(offset);
    }

    /** The message at {@code offset} expired (its TTL passed while it was ready): it leaves the queue as settled. */
    default void expired(long offset) {
        settle(offset);
    }

    /** The message at {@code offset} was dropped from the head over a length limit: it leaves as settled. */
    default void dropped(long offset) {
        settle(offset);
    }

    /** The message at {@code offset} was returned more often than the delivery limit allows: it leaves as settled. */
    default void overDeliveryLimit(long offset) {
        settle(offset);
    }

    /** The message at {@code offset} went back to the queue after a delivery, counted toward its delivery limit. */
    default void returned(long offset) {}
}
