package io.ganglion.broker;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.queues.ConsumeOutcome;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.queues.routing.ResourceName;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A queue this broker serves itself: the owner's side of a {@link ReplicatedQueue}, a classic queue's (its only copy)
 * or a replicated queue's. Every method but {@link #shard()}, {@link #name()} and {@link #vhost()} runs on {@link #shard()}.
 */
interface LocalQueue extends QueueHandle {
    Shard shard();

    /** Completes once the queue served here for the first time, or closed before that. Any thread. */
    CompletableFuture<Void> firstServed();

    /** Admits a publish; {@code done} completes once it is confirmed (durable as the queue's mode requires). */
    void publish(ByteBuffer payload, CompletableFuture<Void> done);

    /**
     * Admits a publish that another broker forwarded, identified by {@code publisher} and {@code sequence}: a
     * queue confirms one it already holds (a re-send) instead of appending it again. It admits it only after publish
     * {@code after} of the same publisher ({@code ForwardLanes.NONE}: no condition), so that a queue's publishes from
     * one broker keep their order across a change of owner.
     */
    default void publish(ByteBuffer payload, CompletableFuture<Void> done, long publisher, long sequence, long after) {
        publish(payload, done);
    }

    /**
     * Adds a consumer. {@code start} is where a stream's consumer reads from (its {@code x-stream-offset}); a queue
     * ignores it.
     */
    void consume(ConsumerKey key, QueueConsumer consumer);

    void cancel(ConsumerKey key);

    /**
     * The checks before a consumer is added to queue {@code name}: a stream's consumer arguments, and a tag not in use
     * on this queue ({@code tagInUse}), each a channel error as RabbitMQ gives it.
     */
    static void checkNewConsumer(boolean stream, String vhost, String name, QueueConsumer consumer, boolean tagInUse) {
        if (stream) {
            StreamSupport.checkConsumer(name, vhost, consumer.noAck(), consumer.prefetch());
        }
        if (tagInUse) {
            throw new BrokerFailure(ReplyCode.NOT_ALLOWED, "attempt to reuse consumer tag '" + consumer.tag() + "'");
        }
    }

    /** The machine's answer to a consume: nothing when added, else {@code undo} runs and the channel error follows. */
    static void requireAdded(ConsumeOutcome outcome, String vhost, String name, String tag, Runnable undo) {
        switch (outcome) {
            case ADDED -> {}
            case DUPLICATE_TAG -> {
                undo.run();
                throw new BrokerFailure(ReplyCode.NOT_ALLOWED, "attempt to reuse consumer tag '" + tag + "'");
            }
            case EXCLUSIVE_CONFLICT -> {
                undo.run();
                throw new BrokerFailure(
                        ReplyCode.ACCESS_REFUSED, ResourceName.queue(vhost, name) + " in exclusive use");
            }
        }
    }

    Optional<Delivery> get(boolean noAck);

    /** The queue was declared (or declared passively): a use, as RabbitMQ counts it for {@code x-expires}. */
    default void declared() {}

    void settle(long[] offsets, Settlement settlement);

    long purge();

    int readyCount();

    int consumerCount();

    String vhost();

    /**
     * The conditions of a {@code queue.delete}, in the order RabbitMQ's queue checks them: throws 406
     * PRECONDITION_FAILED when {@code ifEmpty} and messages are ready, else when {@code ifUnused} and it has
     * consumers. Returns the ready messages, the count the delete answers. Unacknowledged messages count for neither.
     */
    default long checkDeletable(boolean ifUnused, boolean ifEmpty) {
        if (ifEmpty && readyCount() > 0) {
            throw new BrokerFailure(ReplyCode.PRECONDITION_FAILED, ResourceName.queue(vhost(), name()) + " not empty");
        }
        if (ifUnused && consumerCount() > 0) {
            throw new BrokerFailure(ReplyCode.PRECONDITION_FAILED, ResourceName.queue(vhost(), name()) + " in use");
        }
        return readyCount();
    }

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
