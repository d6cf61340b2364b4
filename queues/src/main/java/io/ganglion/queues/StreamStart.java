package io.ganglion.queues;

import java.util.Objects;

/**
 * Where a stream consumer starts reading: its {@code x-stream-offset} consume argument, as RabbitMQ names the choices.
 *
 * @param kind which of the choices
 * @param value the log offset for {@link Kind#OFFSET}, the time in milliseconds since the epoch for {@link
 *     Kind#TIMESTAMP}, milliseconds back for {@link Kind#INTERVAL}; 0 otherwise
 */
public record StreamStart(Kind kind, long value) {
    /** The choices of {@code x-stream-offset}. */
    public enum Kind {
        /** The first message the stream still holds. */
        FIRST,
        /** The last message committed when the consumer subscribes. */
        LAST,
        /** The next message published: only what is committed after the subscription (the default). */
        NEXT,
        /** A log offset, as a delivery's {@code x-stream-offset} header gave it. */
        OFFSET,
        /** A time: the first message appended then or later (an AMQP timestamp). */
        TIMESTAMP,
        /**
         * An interval back from now, such as {@code "1h"}: the first message appended that long ago or later, by the
         * clock that stamped the log's records (the log resolves it, not the broker the consumer came through).
         */
        INTERVAL
    }

    /** The default when a consumer gives no {@code x-stream-offset}: only new messages. */
    public static final StreamStart NEXT = new StreamStart(Kind.NEXT, 0);

    public static final StreamStart FIRST = new StreamStart(Kind.FIRST, 0);

    public static final StreamStart LAST = new StreamStart(Kind.LAST, 0);

    public StreamStart {
        Objects.requireNonNull(kind, "kind");
        if (value < 0) {
            throw new IllegalArgumentException("a stream start is not negative: " + value);
        }
        if (kind != Kind.OFFSET && kind != Kind.TIMESTAMP && kind != Kind.INTERVAL && value != 0) {
            throw new IllegalArgumentException(kind + " takes no value: " + value);
        }
    }

    public static StreamStart at(long offset) {
        return new StreamStart(Kind.OFFSET, offset);
    }

    /** From the first message appended at or after {@code epochMillis}. */
    public static StreamStart since(long epochMillis) {
        return new StreamStart(Kind.TIMESTAMP, epochMillis);
    }

    /** From the first message appended {@code millis} ago or later. */
    public static StreamStart ago(long millis) {
        return new StreamStart(Kind.INTERVAL, millis);
    }
}
