package io.ganglion.broker;

import static io.ganglion.broker.Failures.unwrap;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.QueueDef;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/**
 * What differs between a single broker and a member of a cluster, chosen once when the backend is built: whether
 * queues may be replicated, how a lookup that misses is retried, and how other brokers are reached. A single broker
 * serves every queue itself, so it never reaches another broker.
 */
sealed interface Membership {

    /** A member of a cluster with node id {@code self}, or a single broker for an empty id. */
    static Membership of(
            String self,
            MetadataLog metadata,
            LongFunction<LocalQueue> localQueues,
            LongFunction<Shard> shardOf,
            List<Shard> shards) {
        return self.isEmpty()
                ? new Single()
                : new Clustered(metadata, new RemoteQueues(new NodeId(self), localQueues, shardOf, shards));
    }

    /** Whether a declaration may create a replicated queue (quorum, stream, x-copies). */
    boolean replicates();

    /** A new image was applied: publishes waiting for a queue's owner may go now. */
    void imageApplied();

    /**
     * Runs {@code operation}; in a cluster, if it finds no such vhost, exchange or queue, runs it once more on an
     * image that holds every command committed before now ({@link MetadataLog#sync}): this broker may not yet have
     * applied a declaration another broker just confirmed, and a client that declared through one broker and uses the
     * queue through another must not get a 404 for it.
     */
    <T> CompletionStage<T> freshOnMiss(Supplier<CompletionStage<T>> operation);

    /** This broker forwarding to the other brokers; only a cluster member has them. */
    ForwardingClient forwarding();

    /** The status of a replicated queue's copy at {@code owner}, another broker ({@link ReplicaStatus}). */
    CompletableFuture<Map<String, Object>> statusAt(NodeId owner, QueueDef def);

    /** A broker on its own: every queue is homed here. */
    record Single() implements Membership {
        @Override
        public boolean replicates() {
            return false;
        }

        @Override
        public void imageApplied() {}

        @Override
        public <T> CompletionStage<T> freshOnMiss(Supplier<CompletionStage<T>> operation) {
            return operation.get();
        }

        @Override
        public ForwardingClient forwarding() {
            throw new IllegalStateException("a single broker serves every queue itself");
        }

        @Override
        public CompletableFuture<Map<String, Object>> statusAt(NodeId owner, QueueDef def) {
            return CompletableFuture.completedFuture(Map.of("error", "no peer link"));
        }
    }

    /** A member of a cluster: queues may live on other brokers, reached through {@code remote}. */
    record Clustered(MetadataLog metadata, RemoteQueues remote) implements Membership {
        @Override
        public boolean replicates() {
            return true;
        }

        @Override
        public ForwardingClient forwarding() {
            return remote.client();
        }

        @Override
        public void imageApplied() {
            remote.client().ownersMayHaveChanged();
        }

        @Override
        public <T> CompletionStage<T> freshOnMiss(Supplier<CompletionStage<T>> operation) {
            CompletionStage<T> first;
            try {
                first = operation.get();
            } catch (BrokerFailure failure) {
                if (failure.replyCode() != ReplyCode.NOT_FOUND) {
                    throw failure;
                }
                return metadata.sync().thenCompose(image -> operation.get());
            }
            return first.handle((value, failure) -> {
                        Throwable cause = unwrap(failure);
                        if (cause instanceof BrokerFailure broker && broker.replyCode() == ReplyCode.NOT_FOUND) {
                            return metadata.sync().thenCompose(image -> operation.get());
                        }
                        return failure == null
                                ? CompletableFuture.completedFuture(value)
                                : CompletableFuture.<T>failedFuture(cause);
                    })
                    .thenCompose(stage -> stage);
        }

        @Override
        public CompletableFuture<Map<String, Object>> statusAt(NodeId owner, QueueDef def) {
            return remote.client()
                    .call(owner, def.objectId(), def.name(), RemoteQueues.OP_STATUS, 0)
                    .thenApply(reply -> reply.replyCode() == 0
                            ? ReplicaStatus.decode(reply.message())
                            : Map.<String, Object>of("error", reply.text()));
        }
    }
}
