package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.BasicProperties;
import java.math.BigInteger;

/** The checks RabbitMQ makes of a publish's properties before routing it; each failure is a channel error (406). */
final class PublishChecks {
    private static final long MAX_EXPIRATION = 0xFFFF_FFFFL;

    private PublishChecks() {}

    /** As RabbitMQ: a {@code user_id} property, when set, must name the authenticated user. */
    static void checkUserId(BasicProperties properties, String user) {
        String claimed = properties.userId();
        if (claimed != null && !claimed.equals(user)) {
            throw ServerFault.preconditionFailed(
                    "user_id property set to '" + claimed + "' but authenticated user was '" + user + "'");
        }
    }

    /** As RabbitMQ's {@code rabbit_basic:parse_expiration/1}: a decimal integer of milliseconds, 0 to 2^32 - 1. */
    static void checkExpiration(BasicProperties properties) {
        String expiration = properties.expiration();
        if (expiration == null) {
            return;
        }
        int digitsFrom = !expiration.isEmpty() && (expiration.charAt(0) == '-' || expiration.charAt(0) == '+') ? 1 : 0;
        int end = digitsFrom;
        while (end < expiration.length() && expiration.charAt(end) >= '0' && expiration.charAt(end) <= '9') {
            end++;
        }
        String reason;
        if (end == digitsFrom) {
            reason = "no_integer";
        } else if (end < expiration.length()) {
            reason = "{leftover_string,\"" + expiration.substring(end) + "\"}";
        } else {
            BigInteger value = new BigInteger(expiration);
            if (value.signum() < 0) {
                reason = "{value_negative," + value + "}";
            } else if (value.compareTo(BigInteger.valueOf(MAX_EXPIRATION)) > 0) {
                reason = "{value_too_large," + value + "}";
            } else {
                return;
            }
        }
        throw ServerFault.preconditionFailed("invalid expiration '" + expiration + "': " + reason);
    }
}
