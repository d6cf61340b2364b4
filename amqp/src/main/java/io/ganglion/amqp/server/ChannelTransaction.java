package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.ContentCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The open transaction of a channel in {@code tx.select} mode: the publishes and settlements since the last commit or
 * rollback, applied by {@link #commit} and dropped by {@link #rollback}, as RabbitMQ's channel does. Confined to the
 * connection's event loop, as its channel.
 */
final class ChannelTransaction {
    private record Settle(List<UnackedDeliveries.Entry> entries, Settlement settlement) {}

    private List<ContentCommand> publishes = new ArrayList<>();
    private List<Settle> settles = new ArrayList<>();

    /** Buffers a publish until the commit; keeps its content. */
    void publish(ContentCommand content) {
        publishes.add(content.retain());
    }

    /** Buffers a settlement until the commit; the deliveries stay out of the unacked ones meanwhile. */
    void settle(List<UnackedDeliveries.Entry> entries, Settlement settlement) {
        if (!entries.isEmpty()) {
            settles.add(new Settle(entries, settlement));
        }
    }

    /**
     * Routes the buffered publishes with {@code route} and settles the buffered settlements with the broker, in that
     * order, and starts a new transaction.
     *
     * @return completes once every routed publish is durable; exceptionally with {@code PRECONDITION_FAILED} ("partial
     *     tx completion") if one failed
     */
    CompletionStage<Void> commit(Function<ContentCommand, CompletionStage<Void>> route, BrokerBackend backend) {
        List<ContentCommand> routed = takePublishes();
        List<Settle> settled = takeSettles();
        CompletionStage<Void> durable = CompletableFuture.completedFuture(null);
        try {
            for (ContentCommand publish : routed) {
                durable = durable.thenCombine(route.apply(publish), (a, b) -> null);
            }
        } finally {
            routed.forEach(ContentCommand::release);
        }
        for (Settle settle : settled) {
            UnackedDeliveries.settle(backend, settle.entries(), settle.settlement());
        }
        return durable.handle((done, error) -> {
            if (error != null) {
                throw new CompletionException(ServerFault.preconditionFailed("partial tx completion"));
            }
            return null;
        });
    }

    /** Drops the publishes and puts the settled deliveries back among the unacked ones, as RabbitMQ's tx.rollback. */
    void rollback(ChannelConsumers consumers) {
        takePublishes().forEach(ContentCommand::release);
        List<UnackedDeliveries.Entry> entries = new ArrayList<>();
        for (Settle settle : takeSettles()) {
            entries.addAll(settle.entries());
        }
        consumers.restore(entries);
    }

    private List<ContentCommand> takePublishes() {
        List<ContentCommand> taken = publishes;
        publishes = new ArrayList<>();
        return taken;
    }

    private List<Settle> takeSettles() {
        List<Settle> taken = settles;
        settles = new ArrayList<>();
        return taken;
    }
}
