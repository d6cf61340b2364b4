package io.ganglion.queues;

import java.util.function.LongConsumer;

/** Where a {@link StreamMachine} sends what it decided: the broker reads the log and hands messages to consumers. */
public interface StreamEffects {
    /**
     * Delivers to {@code consumer}, in offset order, at most {@code max} messages from the log offsets {@code
     * from..upTo} (inclusive), skipping records that are not messages, and calls {@code delivered} with the offset of
     * each message handed over.
     *
     * @return the offset after the last record read (so the next read starts there); {@code from} when nothing could
     *     be read
     */
    long deliver(ConsumerKey consumer, long from, long upTo, int max, LongConsumer delivered);
}
