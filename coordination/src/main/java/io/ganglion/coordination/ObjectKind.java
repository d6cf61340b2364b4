package io.ganglion.coordination;

/** What an object is. Only queues may hold a lost follower; streams always take the recovery path. */
public enum ObjectKind {
    QUEUE,
    STREAM
}
