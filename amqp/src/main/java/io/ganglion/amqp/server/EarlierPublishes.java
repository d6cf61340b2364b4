package io.ganglion.amqp.server;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A connection's routed publishes whose messages are not yet in their queues (durable and enqueued), so that a later
 * {@code basic.get}, {@code queue.purge}, {@code queue.declare}, {@code queue.delete} or {@code basic.consume} of the
 * connection can wait for them and observe them, as in RabbitMQ (docs/amqp.md, "A connection sees its own
 * publishes"). Publishes complete mostly in order, so done stages leave from the head; a sweep of the whole deque runs
 * only when it doubled since the last one. Confined to the connection's event loop.
 */
final class EarlierPublishes {
    private static final int SWEEP_MIN = 64;

    private final ArrayDeque<CompletableFuture<Void>> pending = new ArrayDeque<>();
    private int sweepAt = SWEEP_MIN;

    /** A publish routed just now; its stage completes once its message is in every queue it reached. */
    void add(CompletionStage<Void> durable) {
        CompletableFuture<Void> stage = durable.toCompletableFuture();
        dropDoneHead();
        if (stage.isDone()) {
            return;
        }
        pending.addLast(stage);
        if (pending.size() >= sweepAt) {
            pending.removeIf(CompletableFuture::isDone);
            sweepAt = Math.max(SWEEP_MIN, pending.size() * 2);
        }
    }

    /**
     * A stage that completes once every publish added so far has completed, failed or not (a nacked publish put
     * nothing in its queue, which is what a later operation then observes); null when none is pending.
     */
    CompletableFuture<Void> allDone() {
        dropDoneHead();
        if (pending.isEmpty()) {
            return null;
        }
        pending.removeIf(CompletableFuture::isDone);
        if (pending.isEmpty()) {
            return null;
        }
        CompletableFuture<?>[] stages = pending.toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(stages).handle((ignored, failure) -> null);
    }

    /** How many publishes may still be pending (done ones not yet swept count too). */
    int size() {
        return pending.size();
    }

    private void dropDoneHead() {
        while (!pending.isEmpty() && pending.peekFirst().isDone()) {
            pending.pollFirst();
        }
    }
}
