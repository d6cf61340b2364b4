package io.ganglion.broker;

import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A queue this broker serves itself: a single-copy {@link QueueReplica}, or the owner's side of a {@link
 * ReplicatedQueue}. Every method but {@link #shard()} and {@link #name()} runs on {@link #shard()}.
 */
interface LocalQueue extends QueueHandle {
    Shard shard();

    /** Admits a publish; {@code done} completes once it is confirmed (durable as the queue's mode requires). */
    void publish(ByteBuffer payload, CompletableFuture<Void> done);

    /**
     * Admits a publish that another broker forwarded, identified by {@code publisher} and {@code sequence}: a
     * replicated queue confirms one it already holds (a re-send to a new owner) instead of appending it again; a
     * single-copy queue has no re-sends and ignores the id.
     */
    default void publish(ByteBuffer payload, CompletableFuture<Void> done, long publisher, long sequence) {
        publish(payload, done);
    }

    /**
     * Adds a consumer. {@code start} is where a stream's consumer reads from (its {@code x-stream-offset}); a queue
     * ignores it.
     */
    void consume(ConsumerKey key, QueueConsumer consumer);

    void cancel(ConsumerKey key);

    Optional<Delivery> get(boolean noAck);

    void settle(long[] offsets, Settlement settlement);

    long purge();

    int readyCount();

    int consumerCount();

    /** Applies a channel's settlement of {@code offsets} to {@code machine}: ack, discard or requeue. */
    static void apply(QueueMachine machine, long[] offsets, Settlement settlement, QueueEffects effects) {
        switch (settlement) {
            case ACK -> {
                for (long offset : offsets) {
                    machine.ack(offset, effects);
                }
            }
            case DISCARD -> {
                for (long offset : offsets) {
                    machine.reject(offset, false, effects);
                }
            }
            case REQUEUE -> machine.requeue(offsets, effects);
        }
    }
}
