package io.ganglion.broker;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.queues.StreamStart;
import io.ganglion.queues.routing.ResourceName;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The arguments of a stream, checked as RabbitMQ checks them: at declare ({@code x-max-length-bytes}, {@code
 * x-stream-max-segment-size-bytes}, {@code x-max-age}) and at consume ({@code x-stream-offset}).
 *
 * <p>Ganglion keeps a stream's records in its storage's segments ({@code storage.segment_bytes}), so {@code
 * x-stream-max-segment-size-bytes} is checked and kept but does not change the segment size; retention by {@code
 * x-max-length-bytes} and {@code x-max-age} discards whole segments, the oldest first, as RabbitMQ does. Times are the
 * ones each copy's store wrote with a record (its wall clock when it appended it).
 */
final class StreamArguments {
    /** RabbitMQ's limit on {@code x-stream-max-segment-size-bytes}. */
    static final long MAX_SEGMENT_SIZE_BYTES = 3_000_000_000L;

    /** An age or interval as RabbitMQ writes it: a whole number and a unit, Y, M, D, h, m or s. */
    private static final java.util.regex.Pattern AGE = java.util.regex.Pattern.compile("(\\d{1,15})([YMDhms])");

    /** The queue arguments a stream refuses, as RabbitMQ's streams do: a stream keeps every message it holds. */
    private static final java.util.List<String> QUEUE_ONLY = java.util.List.of(
            "x-expires",
            "x-message-ttl",
            "x-max-length",
            "x-max-priority",
            "x-queue-mode",
            "x-single-active-consumer",
            "x-overflow",
            "x-dead-letter-exchange",
            "x-dead-letter-routing-key",
            "x-dead-letter-strategy",
            "x-delivery-limit");

    private StreamArguments() {}

    /** Checks a stream's declare arguments; throws 406 PRECONDITION_FAILED for one it cannot honour. */
    static void check(Map<String, Object> args, String name, String vhost) {
        for (String queueOnly : QUEUE_ONLY) {
            if (args.containsKey(queueOnly)) {
                throw new BrokerFailure(
                        ReplyCode.PRECONDITION_FAILED,
                        "invalid arg '" + queueOnly + "' for " + ResourceName.queue(vhost, name)
                                + " of queue type rabbit_stream_queue");
            }
        }
        positive(args, "x-max-length-bytes", Long.MAX_VALUE, name, vhost);
        positive(args, "x-stream-max-segment-size-bytes", MAX_SEGMENT_SIZE_BYTES, name, vhost);
        if (args.containsKey("x-max-age") && maxAgeMillis(args).isEmpty()) {
            throw new BrokerFailure(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid arg 'x-max-age' for " + ResourceName.queue(vhost, name) + ": '"
                            + args.get("x-max-age")
                            + "' is not an age such as 7D, 12h, 30m or 90s (units Y, M, D, h, m, s)");
        }
    }

    /**
     * A stream's retention limits, from its declare arguments.
     *
     * @param maxBytes {@code x-max-length-bytes}, {@link Long#MAX_VALUE} for none
     * @param maxAgeMs {@code x-max-age} in milliseconds, {@link Long#MAX_VALUE} for none
     */
    record Retention(long maxBytes, long maxAgeMs) {
        static Retention of(Map<String, Object> args) {
            Long maxBytes = FieldTables.integral(args.get("x-max-length-bytes"));
            return new Retention(
                    maxBytes == null ? Long.MAX_VALUE : maxBytes,
                    maxAgeMillis(args).orElse(Long.MAX_VALUE));
        }

        boolean limited() {
            return maxBytes != Long.MAX_VALUE || maxAgeMs != Long.MAX_VALUE;
        }

        /** Records appended before this go by age, at {@code nowMillis}; {@link Long#MIN_VALUE} for no age limit. */
        long appendedBefore(long nowMillis) {
            return maxAgeMs == Long.MAX_VALUE ? Long.MIN_VALUE : nowMillis - maxAgeMs;
        }
    }

    /** A stream's {@code x-max-age} in milliseconds, if it has a valid one. */
    static Optional<Long> maxAgeMillis(Map<String, Object> args) {
        Object given = args.get("x-max-age");
        return given instanceof String text ? ageMillis(text) : Optional.empty();
    }

    /** {@code 7D}, {@code 12h}, ... in milliseconds (a month is 30 days and a year 365, as in RabbitMQ). */
    static Optional<Long> ageMillis(String text) {
        java.util.regex.Matcher matcher = AGE.matcher(text);
        if (!matcher.matches()) {
            return Optional.empty();
        }
        long unit = switch (matcher.group(2)) {
            case "Y" -> 365L * 86_400_000L;
            case "M" -> 30L * 86_400_000L;
            case "D" -> 86_400_000L;
            case "h" -> 3_600_000L;
            case "m" -> 60_000L;
            default -> 1_000L;
        };
        try {
            return Optional.of(Math.multiplyExact(Long.parseLong(matcher.group(1)), unit));
        } catch (ArithmeticException e) {
            return Optional.empty();
        }
    }

    private static void positive(Map<String, Object> args, String key, long max, String name, String vhost) {
        if (!args.containsKey(key)) {
            return;
        }
        Long value = FieldTables.integral(args.get(key));
        if (value == null || value < 1 || value > max) {
            throw new BrokerFailure(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid arg '" + key + "' for " + ResourceName.queue(vhost, name) + ": " + args.get(key)
                            + " is not a whole number of bytes from 1 to " + max);
        }
    }

    /**
     * Where a consumer of a stream starts: its {@code x-stream-offset} ({@code first}, {@code last}, {@code next}, or
     * an offset as a whole number, a timestamp, or an interval back from now such as {@code "1h"}, which the stream's
     * log resolves by its own clock), {@link StreamStart#NEXT} without one. Throws 406 PRECONDITION_FAILED for another
     * value.
     */
    static StreamStart start(FieldTable arguments, String queue, String vhost) {
        Optional<FieldValue> given = arguments == null ? Optional.empty() : arguments.get("x-stream-offset");
        if (given.isEmpty()) {
            return StreamStart.NEXT;
        }
        FieldValue value = given.get();
        if (value instanceof FieldValue.Timestamp timestamp) {
            return StreamStart.since(Math.max(0, timestamp.epochSeconds()) * 1000);
        }
        if (value instanceof FieldValue.LongStr text) {
            String spec = new String(text.value().toByteArray(), StandardCharsets.UTF_8);
            return switch (spec) {
                case "first" -> StreamStart.FIRST;
                case "last" -> StreamStart.LAST;
                case "next" -> StreamStart.NEXT;
                default ->
                    StreamStart.ago(ageMillis(spec)
                            .orElseThrow(() -> invalidOffset(
                                    value,
                                    queue,
                                    vhost,
                                    "expected first, last, next, an offset, a timestamp or an interval such as 1h")));
            };
        }
        Long offset = FieldTables.integral(FieldTables.toPlain(value));
        if (offset == null || offset < 0) {
            throw invalidOffset(
                    value,
                    queue,
                    vhost,
                    "expected first, last, next, an offset, a timestamp or an interval such as 1h");
        }
        return StreamStart.at(offset);
    }

    private static BrokerFailure invalidOffset(FieldValue value, String queue, String vhost, String why) {
        return new BrokerFailure(
                ReplyCode.PRECONDITION_FAILED,
                "invalid arg 'x-stream-offset' for stream " + ResourceName.queue(vhost, queue) + ": "
                        + FieldTables.toPlain(value) + ": " + why);
    }
}
