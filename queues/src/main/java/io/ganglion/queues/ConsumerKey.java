package io.ganglion.queues;

import java.util.Objects;

/** A consumer of a queue: the broker-wide id of its channel and its consumer tag. */
public record ConsumerKey(long channel, String tag) {
    public ConsumerKey {
        Objects.requireNonNull(tag, "tag");
    }
}
