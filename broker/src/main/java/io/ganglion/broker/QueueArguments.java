package io.ganglion.broker;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.queues.routing.ResourceName;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The value checks RabbitMQ makes on queue arguments at {@code queue.declare} and on {@code x-priority} at {@code
 * basic.consume}, with its reply texts: an argument of the wrong field type, out of range, or naming an unknown mode is
 * {@code 406 PRECONDITION_FAILED} and nothing is declared. Names are the wire's field types as RabbitMQ prints them.
 */
final class QueueArguments {
    /** The largest TTL and expiry RabbitMQ takes, in milliseconds (its timers' bound). */
    static final long MAX_EXPIRY_MS = 4_294_967_295L;

    private static final Set<String> OVERFLOW = Set.of("drop-head", "reject-publish", "reject-publish-dlx");
    private static final Set<String> QUEUE_MODES = Set.of("default", "lazy");
    private static final Set<String> DEAD_LETTER_STRATEGIES = Set.of("at-most-once", "at-least-once");

    private QueueArguments() {}

    /** Checks the arguments of a declare of {@code queue} in {@code vhost}. */
    static void check(FieldTable arguments, String queue, String vhost) {
        Checker checker = new Checker(arguments, ResourceName.queue(vhost, queue));
        checker.integer("x-message-ttl", 0, MAX_EXPIRY_MS);
        checker.integer("x-expires", 1, MAX_EXPIRY_MS);
        checker.integer("x-max-length", 0, Long.MAX_VALUE);
        checker.integer("x-max-length-bytes", 0, Long.MAX_VALUE);
        checker.priority("x-max-priority");
        checker.oneOf("x-overflow", OVERFLOW, "invalid_overflow");
        checker.bool("x-single-active-consumer");
        checker.oneOf("x-dead-letter-strategy", DEAD_LETTER_STRATEGIES, "invalid_dead_letter_strategy");
        checker.integer("x-delivery-limit", Integer.MIN_VALUE, Integer.MAX_VALUE);
        Optional<FieldValue> mode = arguments.get("x-queue-mode");
        if (mode.isPresent() && !(text(mode.get()) instanceof String name && QUEUE_MODES.contains(name))) {
            throw checker.invalid(
                    "x-queue-mode",
                    "\"unsupported queue mode '" + (text(mode.get()) == null ? typeName(mode.get()) : text(mode.get()))
                            + "'\"");
        }
        Optional<FieldValue> dlx = arguments.get("x-dead-letter-exchange");
        if (dlx.isPresent() && text(dlx.get()) == null) {
            throw failure(
                    "invalid type '" + typeName(dlx.get()) + "' for arg 'x-dead-letter-exchange' in " + checker.what);
        }
        Optional<FieldValue> dlk = arguments.get("x-dead-letter-routing-key");
        if (dlk.isPresent()) {
            if (text(dlk.get()) == null) {
                throw failure("invalid type '" + typeName(dlk.get()) + "' for arg 'x-dead-letter-routing-key' in "
                        + checker.what);
            }
            if (dlx.isEmpty()) {
                throw checker.invalid("x-dead-letter-routing-key", "routing_key_but_no_dlx_defined");
            }
        }
    }

    /**
     * Refuses, for a new queue, the arguments RabbitMQ takes that Ganglion does not enforce (docs/queues.md, "Queue
     * arguments"): a queue declared with one would behave otherwise than its application expects.
     */
    static void refuseUnenforced(Map<String, Object> args, String queue, String vhost) {
        String what = ResourceName.queue(vhost, queue);
        if (args.containsKey("x-delivery-limit") && !"quorum".equals(args.get("x-queue-type"))) {
            // RabbitMQ's classic queues ignore it: refused rather than ignored
            throw failure("invalid arg 'x-delivery-limit' for " + what + ": a delivery limit is supported by quorum"
                    + " queues only");
        }
        if ("at-least-once".equals(args.get("x-dead-letter-strategy"))
                && !("quorum".equals(args.get("x-queue-type"))
                        && "reject-publish".equals(args.get("x-overflow"))
                        && args.get("x-dead-letter-exchange") instanceof String)) {
            // RabbitMQ falls back to at-most-once without these: refused rather than weakened unseen
            throw failure("invalid arg 'x-dead-letter-strategy' for " + what + ": at-least-once needs a quorum queue"
                    + " with x-overflow reject-publish and an x-dead-letter-exchange");
        }
        if ("reject-publish-dlx".equals(args.get("x-overflow")) && "quorum".equals(args.get("x-queue-type"))) {
            // RabbitMQ's quorum queues log a warning and drop from the head instead: refused rather than ignored
            throw failure("invalid arg 'x-overflow' for " + what + ": reject-publish-dlx is not supported by quorum"
                    + " queues (drop-head or reject-publish)");
        }
        if (args.get("x-max-priority") instanceof Number priority && priority.longValue() > 0) {
            throw unenforced("x-max-priority", what);
        }
        if (Boolean.TRUE.equals(args.get("x-single-active-consumer"))) {
            throw unenforced("x-single-active-consumer", what);
        }
    }

    private static BrokerFailure unenforced(String name, String what) {
        return failure("invalid arg '" + name + "' for " + what + ": not supported by Ganglion");
    }

    /** Checks a consumer's arguments ({@code x-priority}) on {@code queue} in {@code vhost}. */
    static void checkConsumer(FieldTable arguments, String queue, String vhost) {
        new Checker(arguments, ResourceName.queue(vhost, queue))
                .integer("x-priority", Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    private record Checker(FieldTable arguments, String what) {
        void integer(String name, long min, long max) {
            Optional<FieldValue> value = arguments.get(name);
            if (value.isEmpty()) {
                return;
            }
            Long number = integral(value.get());
            if (number == null) {
                throw invalid(name, "\"expected integer, got " + typeName(value.get()) + "\"");
            }
            if (number < min) {
                throw invalid(name, "{" + (number == 0 ? "value_zero" : "value_negative") + "," + number + "}");
            }
            if (number > max) {
                throw invalid(name, "{value_too_large," + number + "}");
            }
        }

        void priority(String name) {
            Optional<FieldValue> value = arguments.get(name);
            if (value.isEmpty()) {
                return;
            }
            integer(name, 0, Long.MAX_VALUE);
            long number = integral(value.get());
            if (number > 255) {
                throw invalid(name, "{max_value_exceeded," + number + "}");
            }
        }

        void oneOf(String name, Set<String> allowed, String otherwise) {
            Optional<FieldValue> value = arguments.get(name);
            if (value.isEmpty()) {
                return;
            }
            String given = text(value.get());
            if (given == null) {
                throw invalid(name, "{unacceptable_type," + typeName(value.get()) + "}");
            }
            if (!allowed.contains(given)) {
                throw invalid(name, otherwise);
            }
        }

        void bool(String name) {
            Optional<FieldValue> value = arguments.get(name);
            if (value.isPresent() && !(value.get() instanceof FieldValue.Bool)) {
                throw invalid(name, "{unacceptable_type," + typeName(value.get()) + "}");
            }
        }

        BrokerFailure invalid(String name, String reason) {
            return failure("invalid arg '" + name + "' for " + what + ": " + reason);
        }
    }

    private static BrokerFailure failure(String explanation) {
        return new BrokerFailure(ReplyCode.PRECONDITION_FAILED, explanation);
    }

    /** The value of an integer field type, or null for any other type (RabbitMQ's integer argument types). */
    private static Long integral(FieldValue value) {
        return switch (value) {
            case FieldValue.Int8 v -> (long) v.value();
            case FieldValue.UInt8 v -> (long) v.value();
            case FieldValue.Int16 v -> (long) v.value();
            case FieldValue.UInt16 v -> (long) v.value();
            case FieldValue.Int32 v -> (long) v.value();
            case FieldValue.UInt32 v -> v.value();
            case FieldValue.Int64 v -> v.value();
            default -> null;
        };
    }

    /** The text of a string field, or null for any other type. */
    private static String text(FieldValue value) {
        return value instanceof FieldValue.LongStr s
                ? new String(s.value().toByteArray(), StandardCharsets.UTF_8)
                : null;
    }

    /** A field type's name as RabbitMQ prints it in reply texts. */
    static String typeName(FieldValue value) {
        return switch (value) {
            case FieldValue.Bool v -> "bool";
            case FieldValue.Int8 v -> "byte";
            case FieldValue.UInt8 v -> "unsignedbyte";
            case FieldValue.Int16 v -> "short";
            case FieldValue.UInt16 v -> "unsignedshort";
            case FieldValue.Int32 v -> "signedint";
            case FieldValue.UInt32 v -> "unsignedint";
            case FieldValue.Int64 v -> "long";
            case FieldValue.Float32 v -> "float";
            case FieldValue.Float64 v -> "double";
            case FieldValue.Decimal v -> "decimal";
            case FieldValue.LongStr v -> "longstr";
            case FieldValue.Bytes v -> "binary";
            case FieldValue.Array v -> "array";
            case FieldValue.Timestamp v -> "timestamp";
            case FieldValue.Table v -> "table";
            case FieldValue.VoidValue v -> "void";
        };
    }
}
