package io.ganglion.metadata;

import java.util.Objects;

/** Why the metadata state machine refused a command. The broker maps each kind to its AMQP reply code. */
public record Rejection(Kind kind, String message) {
    public enum Kind {
        /** 404 NOT_FOUND. */
        NOT_FOUND,
        /**
         * 406 PRECONDITION_FAILED: a redeclare that is not equivalent, a delete whose condition fails, and every
         * coordination command the coordination image refuses (an object that exists, a history record that does not
         * fit, an invalid setting); the message says why.
         */
        PRECONDITION_FAILED,
        /** 403 ACCESS_REFUSED: a reserved name. */
        ACCESS_REFUSED,
        /** 405 RESOURCE_LOCKED: an exclusive queue of another connection. */
        RESOURCE_LOCKED
    }

    public Rejection {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(message, "message");
    }
}
