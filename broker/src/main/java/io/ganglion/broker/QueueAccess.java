package io.ganglion.broker;

import static io.ganglion.broker.Failures.failure;
import static io.ganglion.broker.Failures.unwrap;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.ConsumeRequest;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.QueueDeclared;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.StreamStart;
import io.ganglion.queues.routing.ResourceName;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Operations on one queue where it is served now: consume, get, cancel, settle, purge, counts and the checks before a
 * delete. A queue this broker serves runs them on its shard; one served by another broker is reached over the peer
 * link ({@link RemoteQueues}).
 */
final class QueueAccess {
    /** How long a consume or get waits for a replicated queue's owner to serve it, and how often it asks again. */
    static final long MOVING_WAIT_MS = 5_000;

    static final long MOVING_RETRY_MS = 50;

    private static final long STATUS_WAIT_MS = 1_000;

    private final QueueDirectory directory;
    private final QueueRegistry registry;
    private final Membership membership;

    QueueAccess(QueueDirectory directory, QueueRegistry registry, Membership membership) {
        this.directory = directory;
        this.registry = registry;
        this.membership = membership;
    }

    CompletionStage<QueueHandle> consume(ConsumeRequest request) {
        String vhost = request.vhost();
        String queue = request.queue();
        String connectionId = request.connectionId();
        FieldTable arguments = request.arguments();
        return whileMoving(vhost, queue, () -> {
            QueueDef def = directory.queueDef(vhost, queue, connectionId);
            QueueArguments.checkConsumer(arguments, queue, vhost);
            StreamStart start =
                    def.type() == QueueType.STREAM ? StreamArguments.start(arguments, queue, vhost) : StreamStart.NEXT;
            QueueConsumer consumer = new QueueConsumer(
                    request.consumerTag(),
                    request.noAck(),
                    request.exclusive(),
                    request.prefetch(),
                    start,
                    request.sink());
            String home = directory.homeOrFail(vhost, def);
            if (!home.equals(directory.self())) {
                return membership.forwarding().consume(new NodeId(home), def.objectId(), queue, consumer);
            }
            LocalQueue replica = replica(vhost, queue, connectionId);
            ConsumerKey key = new ConsumerKey(request.channelId(), request.consumerTag());
            return onShard(replica, () -> {
                replica.consume(key, consumer);
                return replica;
            });
        });
    }

    void cancel(QueueHandle queue, long channelId, String consumerTag) {
        if (queue instanceof ForwardingClient.RemoteHandle handle) {
            membership.forwarding().cancel(handle, consumerTag);
            return;
        }
        LocalQueue replica = (LocalQueue) queue;
        replica.shard().execute(() -> replica.cancel(new ConsumerKey(channelId, consumerTag)));
    }

    CompletionStage<Optional<Delivery>> get(String vhost, String queue, boolean noAck, String connectionId) {
        return whileMoving(vhost, queue, () -> {
            QueueDef def = directory.queueDef(vhost, queue, connectionId);
            String home = directory.homeOrFail(vhost, def);
            if (!home.equals(directory.self())) {
                return membership.forwarding().get(new NodeId(home), def.objectId(), queue, noAck);
            }
            LocalQueue replica = replica(vhost, queue, connectionId);
            return onShard(replica, () -> replica.get(noAck));
        });
    }

    void settle(QueueHandle queue, long[] offsets, Settlement settlement) {
        if (queue instanceof ForwardingClient.RemoteHandle handle) {
            membership.forwarding().settle(handle, offsets, settlement);
            return;
        }
        LocalQueue replica = (LocalQueue) queue;
        replica.shard().execute(() -> replica.settle(offsets, settlement));
    }

    CompletionStage<Long> purge(String vhost, String queue, String connectionId) {
        return membership.freshOnMiss(() -> {
            QueueDef def = directory.queueDef(vhost, queue, connectionId);
            String home = directory.homeOrFail(vhost, def);
            if (!home.equals(directory.self())) {
                return membership
                        .forwarding()
                        .call(new NodeId(home), def.objectId(), queue, RemoteQueues.OP_PURGE, 0)
                        .thenApply(reply -> reply.count());
            }
            LocalQueue replica = replica(vhost, queue, connectionId);
            return onShard(replica, replica::purge);
        });
    }

    /** A queue's ready messages and consumers, where it is served now; zeros while it has no owner. */
    CompletionStage<QueueDeclared> counts(String vhost, QueueDef def) {
        Optional<String> home = directory.homeNow(vhost, def);
        if (home.isEmpty()) {
            return CompletableFuture.completedFuture(new QueueDeclared(def.name(), 0, 0)); // not active yet
        }
        if (!home.get().equals(directory.self())) {
            return membership
                    .forwarding()
                    .call(new NodeId(home.get()), def.objectId(), def.name(), RemoteQueues.OP_COUNTS, 0)
                    .thenApply(reply -> new QueueDeclared(def.name(), reply.count(), (int) reply.consumers()));
        }
        LocalQueue replica = registry.localQueue(def.objectId());
        if (replica == null) {
            return CompletableFuture.completedFuture(new QueueDeclared(def.name(), 0, 0));
        }
        return onShard(replica, () -> {
            replica.declared();
            return new QueueDeclared(def.name(), replica.readyCount(), replica.consumerCount());
        });
    }

    /**
     * The checks before a queue is deleted, where it is served ({@link LocalQueue#checkDeletable}): PRECONDITION_FAILED
     * if {@code ifEmpty} and it has ready messages, or {@code ifUnused} and it has consumers; else its ready messages.
     */
    CompletionStage<Long> checkDeletable(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId) {
        QueueDef def = directory.queueDef(vhost, queue, connectionId);
        String home = directory.homeOrFail(vhost, def);
        if (!home.equals(directory.self())) {
            int flags = (ifUnused ? RemoteQueues.FLAG_IF_UNUSED : 0) | (ifEmpty ? RemoteQueues.FLAG_IF_EMPTY : 0);
            return membership
                    .forwarding()
                    .call(new NodeId(home), def.objectId(), queue, RemoteQueues.OP_DELETE_CHECK, flags)
                    .thenApply(reply -> reply.count());
        }
        LocalQueue replica = replica(vhost, queue, connectionId);
        return onShard(replica, () -> replica.checkDeletable(ifUnused, ifEmpty));
    }

    /**
     * The status of a replicated queue's copy at its active owner ({@link ReplicaStatus}): read here when this broker
     * owns it, asked of the owner over the peer link otherwise; a map with an {@code error} when it cannot be had.
     */
    CompletableFuture<Map<String, Object>> ownerStatus(String vhost, QueueDef def) {
        Optional<NodeId> owner = directory.owner(vhost, def);
        if (owner.isEmpty()) {
            return CompletableFuture.completedFuture(Map.of("error", "no active owner"));
        }
        CompletableFuture<Map<String, Object>> status;
        if (owner.get().value().equals(directory.self())) {
            LocalQueue local = registry.localQueue(def.objectId());
            status = local == null
                    ? CompletableFuture.completedFuture(Map.of("error", "not open here yet"))
                    : ReplicaStatus.of(local);
        } else {
            status = membership.statusAt(owner.get(), def);
        }
        return status.completeOnTimeout(Map.of("error", "owner did not answer"), STATUS_WAIT_MS, TimeUnit.MILLISECONDS)
                .exceptionally(failure -> Map.of("error", String.valueOf(failure.getMessage())));
    }

    /**
     * Runs {@code operation} on the queue's shard once the queue served here for the first time: a queue opened a
     * moment ago (declared, or its broker just started) serves once its epoch's start is durable, one journal force.
     */
    private static <T> CompletableFuture<T> onShard(LocalQueue queue, Supplier<T> operation) {
        return queue.firstServed().thenApplyAsync(ignored -> operation.get(), queue.shard());
    }

    private LocalQueue replica(String vhost, String queue, String connectionId) {
        QueueDef def = directory.queueDef(vhost, queue, connectionId);
        LocalQueue replica = registry.localQueue(def.objectId());
        if (replica == null) {
            throw failure(ReplyCode.NOT_FOUND, "no " + ResourceName.queue(vhost, queue));
        }
        return replica;
    }

    /**
     * Runs {@code operation} on a queue; while it fails with 404 and the metadata still holds the queue, runs it again every {@value #MOVING_RETRY_MS} ms for up to {@value #MOVING_WAIT_MS} ms. Between the
     * metadata naming a queue's new owner and that owner taking the role (or this broker's link to it coming back
     * after a restart) the owner answers "not served here now": a consumer that subscribes in that moment waits for
     * the owner, as a publish does, instead of losing its channel to a 404 for a queue that exists.
     */
    private <T> CompletionStage<T> whileMoving(String vhost, String queue, Supplier<CompletionStage<T>> operation) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MOVING_WAIT_MS);
        // inside freshOnMiss: a queue this broker's image lacks is looked up again once after a sync of the metadata
        // log; one it holds, whose owner is not serving yet, is asked again without a sync each time
        return membership.freshOnMiss(() -> retryWhile(
                operation,
                failure -> failure instanceof BrokerFailure broker
                        && broker.replyCode() == ReplyCode.NOT_FOUND
                        && directory.holds(vhost, queue),
                deadline,
                CompletableFuture.delayedExecutor(MOVING_RETRY_MS, TimeUnit.MILLISECONDS)));
    }

    /**
     * Runs {@code operation} and again, each time through {@code later}, while it fails with a failure {@code again}
     * accepts and {@link System#nanoTime} is before {@code deadline}; then its last outcome.
     */
    static <T> CompletionStage<T> retryWhile(
            Supplier<CompletionStage<T>> operation, Predicate<Throwable> again, long deadline, Executor later) {
        CompletionStage<T> attempt;
        try {
            attempt = operation.get();
        } catch (RuntimeException failure) {
            attempt = CompletableFuture.failedFuture(failure);
        }
        return attempt.handle((value, failure) -> {
                    if (failure == null) {
                        return CompletableFuture.completedFuture(value);
                    }
                    Throwable cause = unwrap(failure);
                    if (again.test(cause) && System.nanoTime() - deadline < 0) {
                        return CompletableFuture.supplyAsync(() -> null, later)
                                .thenCompose(ignored -> retryWhile(operation, again, deadline, later));
                    }
                    return CompletableFuture.<T>failedFuture(cause);
                })
                .thenCompose(stage -> stage);
    }
}
