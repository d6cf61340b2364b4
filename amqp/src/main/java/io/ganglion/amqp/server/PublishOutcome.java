package io.ganglion.amqp.server;

import java.util.concurrent.CompletionStage;

/** What became of a {@code basic.publish}, decided at once; durability follows. */
public sealed interface PublishOutcome {
    /**
     * Routed to at least one queue. {@code durable} completes when the message is durable and enqueued (seen by a
     * get, a count, a purge) in every queue it reached (the confirm), or exceptionally if that cannot be promised (the
     * nack).
     */
    record Routed(CompletionStage<Void> durable) implements PublishOutcome {}

    /** Routed to no queue: {@code basic.return} 312 NO_ROUTE if mandatory, then the confirm. */
    record Unroutable() implements PublishOutcome {}
}
