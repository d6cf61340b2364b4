package io.ganglion.broker;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/** The failures the broker's AMQP backend answers with: a reply code and its text, thrown or in a future. */
final class Failures {
    private Failures() {}

    static BrokerFailure failure(ReplyCode code, String text) {
        return new BrokerFailure(code, text);
    }

    static <T> CompletionStage<T> failed(ReplyCode code, String text) {
        return CompletableFuture.failedFuture(failure(code, text));
    }

    static CompletionStage<Void> done() {
        return CompletableFuture.completedFuture(null);
    }

    /** The failure a future completed with, out of the {@code CompletionException} a dependent stage wraps it in. */
    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
