package io.ganglion.queues;

/** The result of adding a consumer. */
public enum ConsumeOutcome {
    ADDED,
    /** The tag is already in use on this channel: 530 NOT_ALLOWED. */
    DUPLICATE_TAG,
    /** The queue has an exclusive consumer, or an exclusive consumer was asked for a queue with consumers: 403. */
    EXCLUSIVE_CONFLICT
}
