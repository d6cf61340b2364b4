package io.ganglion.broker;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerBackend;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.amqp.server.PublishOutcome;
import io.ganglion.amqp.server.QueueDeclared;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.amqp.server.ServerInfo;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.metadata.Rejection;
import io.ganglion.metadata.User;
import io.ganglion.metadata.Vhost;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import io.ganglion.queues.routing.HeadersMatcher;
import io.ganglion.storage.Storage;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker behind AMQP connections on a single node: declarations go through the metadata log, messages through the
 * queues' logs on their shards.
 *
 * <p>Implementation notes. The registry of queue replicas follows the metadata image: {@link #reconcile} runs on every
 * applied image (on the metadata log's thread, in order) and creates or closes replicas. A replica is created before
 * the proposal that declared it completes, so a consume right after declare-ok finds it; its log opens on its shard
 * before any later task there.
 */
final class LocalBackend implements BrokerBackend {
    private static final Logger LOG = LoggerFactory.getLogger(LocalBackend.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Set<String> QUEUE_ARGUMENTS_COMPARED = Set.of(
            "x-queue-type",
            "x-message-ttl",
            "x-expires",
            "x-max-length",
            "x-max-length-bytes",
            "x-dead-letter-exchange",
            "x-dead-letter-routing-key",
            "x-max-priority",
            "x-overflow",
            "x-quorum-initial-group-size",
            "x-copies",
            "x-durability");

    private final ServerInfo info;
    private final MetadataLog metadata;
    private final Storage storage;
    private final List<Shard> shards;
    private final Map<Long, QueueReplica> replicas = new ConcurrentHashMap<>();
    /** This broker's node id in a cluster, empty on a single broker. */
    private final String self;
    /** Queues homed on other brokers; null on a single broker. */
    private final RemoteQueues remote;

    LocalBackend(ServerInfo info, MetadataLog metadata, Storage storage, List<Shard> shards) {
        this(info, metadata, storage, shards, "");
    }

    LocalBackend(ServerInfo info, MetadataLog metadata, Storage storage, List<Shard> shards, String self) {
        this.info = info;
        this.metadata = metadata;
        this.storage = storage;
        this.shards = List.copyOf(shards);
        this.self = self;
        this.remote = self.isEmpty() ? null : new RemoteQueues(new NodeId(self), replicas::get);
        metadata.subscribe(this::reconcile);
        reconcile(metadata.image());
    }

    private synchronized void reconcile(MetadataImage image) {
        Map<Long, QueueDef> wanted = new HashMap<>();
        Map<Long, String> vhostOf = new HashMap<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (!isHome(queue)) {
                    continue;
                }
                wanted.put(queue.objectId(), queue);
                vhostOf.put(queue.objectId(), vhost.name());
            }
        }
        for (Map.Entry<Long, QueueDef> entry : wanted.entrySet()) {
            replicas.computeIfAbsent(entry.getKey(), id -> {
                Shard shard = shards.get((int) Math.floorMod(id, (long) shards.size()));
                QueueReplica replica = new QueueReplica(vhostOf.get(id), entry.getValue(), shard, storage);
                replica.onAutoDelete(
                        () -> metadata.propose(new MetadataCommand.DeleteQueue(replica.vhost, replica.def.name())));
                shard.execute(() -> {
                    try {
                        replica.open();
                    } catch (Exception e) {
                        LOG.error("event=queue_open_failed queue={} object={}", replica.def.name(), id, e);
                    }
                });
                return replica;
            });
        }
        for (Long id : List.copyOf(replicas.keySet())) {
            if (!wanted.containsKey(id)) {
                QueueReplica replica = replicas.remove(id);
                replica.shard.execute(replica::close);
            }
        }
    }

    /** The remote-queue protocol of this broker, for its peer link; empty on a single broker. */
    Optional<RemoteQueues> remote() {
        return Optional.ofNullable(remote);
    }

    private boolean isHome(QueueDef queue) {
        return queue.home().isEmpty() || queue.home().equals(self);
    }

    @Override
    public ServerInfo info() {
        return info;
    }

    @Override
    public Optional<String> authenticate(String user, String password, SocketAddress remote) {
        Optional<User> known = metadata.image().user(user);
        if (known.isEmpty() || !known.get().checkPassword(password)) {
            return Optional.empty();
        }
        if (user.equals("guest") && !isLoopback(remote)) {
            LOG.warn("event=guest_refused remote={}", remote);
            return Optional.empty();
        }
        return Optional.of(user);
    }

    private static boolean isLoopback(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet
                && inet.getAddress() != null
                && inet.getAddress().isLoopbackAddress();
    }

    @Override
    public boolean vhostAllowed(String user, String vhost) {
        MetadataImage image = metadata.image();
        return image.user(user).isPresent() && image.vhost(vhost).isPresent();
    }

    // ------------------------------------------------------------------------------------------------ declarations

    @Override
    public CompletionStage<Void> declareExchange(
            String vhost,
            String exchange,
            String type,
            boolean passive,
            boolean durable,
            boolean autoDelete,
            boolean internal,
            FieldTable arguments) {
        return freshOnMiss(
                () -> declareExchangeNow(vhost, exchange, type, passive, durable, autoDelete, internal, arguments));
    }

    private CompletionStage<Void> declareExchangeNow(
            String vhost,
            String exchange,
            String type,
            boolean passive,
            boolean durable,
            boolean autoDelete,
            boolean internal,
            FieldTable arguments) {
        Vhost current = vhost(vhost);
        if (passive) {
            if (current.topology().exchange(exchange).isEmpty()) {
                return failed(ReplyCode.NOT_FOUND, "no exchange '" + exchange + "' in vhost '" + vhost + "'");
            }
            return done();
        }
        Optional<ExchangeType> exchangeType = ExchangeType.parse(type);
        if (exchangeType.isEmpty()) {
            return failed(ReplyCode.COMMAND_INVALID, "unknown exchange type '" + type + "'");
        }
        Map<String, Object> args = new HashMap<>();
        Object alternate = FieldTables.toPlain(arguments).get("alternate-exchange");
        if (alternate != null) {
            args.put("alternate-exchange", alternate);
        }
        Exchange declared = new Exchange(exchange, exchangeType.get(), durable, autoDelete, internal, args);
        return propose(new MetadataCommand.DeclareExchange(vhost, declared)).thenApply(image -> null);
    }

    @Override
    public CompletionStage<Void> deleteExchange(String vhost, String exchange, boolean ifUnused) {
        vhost(vhost);
        return propose(new MetadataCommand.DeleteExchange(vhost, exchange, ifUnused))
                .thenApply(image -> null);
    }

    @Override
    public CompletionStage<Void> bindExchange(
            String vhost, String destination, String source, String routingKey, FieldTable arguments, boolean bind) {
        vhost(vhost);
        Binding binding = binding(source, Destination.exchange(destination), routingKey, arguments);
        return propose(bind ? new MetadataCommand.Bind(vhost, binding) : new MetadataCommand.Unbind(vhost, binding))
                .thenApply(image -> null);
    }

    @Override
    public CompletionStage<QueueDeclared> declareQueue(
            String vhost,
            String queue,
            boolean passive,
            boolean durable,
            boolean exclusive,
            boolean autoDelete,
            FieldTable arguments,
            String connectionId) {
        return freshOnMiss(
                () -> declareQueueNow(vhost, queue, passive, durable, exclusive, autoDelete, arguments, connectionId));
    }

    private CompletionStage<QueueDeclared> declareQueueNow(
            String vhost,
            String queue,
            boolean passive,
            boolean durable,
            boolean exclusive,
            boolean autoDelete,
            FieldTable arguments,
            String connectionId) {
        Vhost current = vhost(vhost);
        if (passive) {
            QueueDef def = current.queue(queue)
                    .orElseThrow(
                            () -> failure(ReplyCode.NOT_FOUND, "no queue '" + queue + "' in vhost '" + vhost + "'"));
            checkExclusive(def, vhost, connectionId);
            return counts(def);
        }
        String name = queue.isEmpty() ? serverName() : queue;
        Map<String, Object> args = FieldTables.toPlain(arguments);
        QueueType type = queueType(args, name, vhost);
        if (type == QueueType.QUORUM && remote != null && current.queue(name).isEmpty()) {
            return failed(
                    ReplyCode.NOT_IMPLEMENTED,
                    "replicated queues (x-queue-type quorum) are not available in a cluster yet: the replication"
                            + " layer is not wired; declare a classic queue, which lives on the broker it is declared"
                            + " through and is reachable from every broker");
        }
        if (type == QueueType.QUORUM && (!durable || exclusive || autoDelete)) {
            return failed(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid property '" + (!durable ? "non-durable" : exclusive ? "exclusive" : "auto-delete")
                            + "' for queue '" + name + "' in vhost '" + vhost + "'");
        }
        Map<String, Object> compared = new HashMap<>();
        args.forEach((key, value) -> {
            if (QUEUE_ARGUMENTS_COMPARED.contains(key) && !key.equals("x-queue-type")) {
                compared.put(key, value);
            }
        });
        long objectId = existingObjectId(current, name).orElseGet(LocalBackend::newObjectId);
        QueueDef def =
                new QueueDef(name, objectId, type, durable, exclusive ? connectionId : "", autoDelete, compared, self);
        return propose(new MetadataCommand.DeclareQueue(vhost, def)).thenCompose(image -> {
            QueueDef declared = image.vhost(vhost).flatMap(v -> v.queue(name)).orElseThrow();
            return counts(declared);
        });
    }

    private static Optional<Long> existingObjectId(Vhost vhost, String name) {
        return vhost.queue(name).map(QueueDef::objectId);
    }

    private QueueType queueType(Map<String, Object> args, String name, String vhost) {
        Object type = args.get("x-queue-type");
        if (type == null) {
            return QueueType.CLASSIC;
        }
        return QueueType.parse(String.valueOf(type))
                .orElseThrow(() -> failure(
                        ReplyCode.PRECONDITION_FAILED,
                        "invalid arg 'x-queue-type' for queue '" + name + "' in vhost '" + vhost
                                + "': unsupported queue type '" + type + "', expected classic or quorum"));
    }

    private CompletionStage<QueueDeclared> counts(QueueDef def) {
        if (!isHome(def)) {
            return remote.call(home(def), def.objectId(), def.name(), RemoteQueues.OP_COUNTS, 0)
                    .thenApply(reply -> new QueueDeclared(def.name(), reply.count(), (int) reply.consumers()));
        }
        QueueReplica replica = replicas.get(def.objectId());
        if (replica == null) {
            return CompletableFuture.completedFuture(new QueueDeclared(def.name(), 0, 0));
        }
        return CompletableFuture.supplyAsync(
                () -> new QueueDeclared(def.name(), replica.readyCount(), replica.consumerCount()), replica.shard);
    }

    @Override
    public CompletionStage<Void> bindQueue(
            String vhost,
            String queue,
            String exchange,
            String routingKey,
            FieldTable arguments,
            boolean bind,
            String connectionId) {
        Vhost current = vhost(vhost);
        current.queue(queue).ifPresent(def -> checkExclusive(def, vhost, connectionId));
        Binding binding = binding(exchange, Destination.queue(queue), routingKey, arguments);
        return propose(bind ? new MetadataCommand.Bind(vhost, binding) : new MetadataCommand.Unbind(vhost, binding))
                .thenApply(image -> null);
    }

    private Binding binding(String source, Destination destination, String routingKey, FieldTable arguments) {
        Map<String, Object> args = FieldTables.toPlain(arguments);
        if (!HeadersMatcher.validMatchMode(args)) {
            throw failure(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid x-match field value " + args.get("x-match")
                            + "; expected all, any, all-with-x, or any-with-x");
        }
        return new Binding(source, destination, routingKey, args);
    }

    @Override
    public CompletionStage<Long> purgeQueue(String vhost, String queue, String connectionId) {
        return freshOnMiss(() -> purgeQueueNow(vhost, queue, connectionId));
    }

    private CompletionStage<Long> purgeQueueNow(String vhost, String queue, String connectionId) {
        QueueDef def = queueDef(vhost, queue, connectionId);
        if (!isHome(def)) {
            return remote.call(home(def), def.objectId(), queue, RemoteQueues.OP_PURGE, 0)
                    .thenApply(reply -> reply.count());
        }
        QueueReplica replica = replica(vhost, queue, connectionId);
        return CompletableFuture.supplyAsync(replica::purge, replica.shard);
    }

    @Override
    public CompletionStage<Long> deleteQueue(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId) {
        Vhost current = vhost(vhost);
        if (current.queue(queue).isEmpty()) {
            return CompletableFuture.completedFuture(0L); // RabbitMQ: deleting a missing queue succeeds
        }
        QueueDef def = queueDef(vhost, queue, connectionId);
        if (!isHome(def)) {
            int flags = (ifUnused ? RemoteQueues.FLAG_IF_UNUSED : 0) | (ifEmpty ? RemoteQueues.FLAG_IF_EMPTY : 0);
            return remote.call(home(def), def.objectId(), queue, RemoteQueues.OP_DELETE_CHECK, flags)
                    .thenCompose(reply -> propose(new MetadataCommand.DeleteQueue(vhost, queue))
                            .thenApply(image -> reply.count()));
        }
        QueueReplica replica = replica(vhost, queue, connectionId);
        return CompletableFuture.supplyAsync(
                        () -> {
                            if (ifUnused && replica.consumerCount() > 0) {
                                throw failure(
                                        ReplyCode.PRECONDITION_FAILED,
                                        "queue '" + queue + "' in vhost '" + vhost + "' in use");
                            }
                            if (ifEmpty && replica.readyCount() > 0) {
                                throw failure(
                                        ReplyCode.PRECONDITION_FAILED,
                                        "queue '" + queue + "' in vhost '" + vhost + "' is not empty");
                            }
                            return (long) replica.readyCount();
                        },
                        replica.shard)
                .thenCompose(count ->
                        propose(new MetadataCommand.DeleteQueue(vhost, queue)).thenApply(image -> count));
    }

    // ---------------------------------------------------------------------------------------------------- messages

    @Override
    public PublishOutcome publish(
            String vhost, String exchange, String routingKey, BasicProperties properties, ByteBuf body, String user) {
        Vhost current = vhost(vhost);
        Optional<Exchange> target = current.topology().exchange(exchange);
        if (target.isEmpty()) {
            throw failure(ReplyCode.NOT_FOUND, "no exchange '" + exchange + "' in vhost '" + vhost + "'");
        }
        if (target.get().internal()) {
            throw failure(
                    ReplyCode.ACCESS_REFUSED,
                    "cannot publish to internal exchange '" + exchange + "' in vhost '" + vhost + "'");
        }
        Map<String, Object> headers =
                properties.headers() == null ? Map.of() : FieldTables.toPlain(properties.headers());
        Set<String> queues = current.topology().route(exchange, routingKey, headers);
        if (queues.isEmpty()) {
            Object alternate = target.get().arguments().get("alternate-exchange");
            if (alternate != null) {
                queues = current.topology().route(String.valueOf(alternate), routingKey, headers);
            }
        }
        if (queues.isEmpty()) {
            return new PublishOutcome.Unroutable();
        }
        ByteBuffer payload = MessageRecord.encodeMessage(exchange, routingKey, properties, body);
        List<CompletableFuture<Void>> durable = new ArrayList<>(queues.size());
        for (String queue : queues) {
            QueueDef def = current.queue(queue).orElseThrow();
            if (!isHome(def)) {
                durable.add(remote.publish(home(def), def.objectId(), def.name(), payload.duplicate()));
                continue;
            }
            QueueReplica replica = replicas.get(def.objectId());
            if (replica == null) {
                continue;
            }
            CompletableFuture<Void> done = new CompletableFuture<>();
            durable.add(done);
            ByteBuffer copy = payload.duplicate();
            replica.shard.execute(() -> replica.publish(copy, done));
        }
        CompletableFuture<Void> all = durable.size() == 1
                ? durable.get(0)
                : CompletableFuture.allOf(durable.toArray(CompletableFuture[]::new));
        return new PublishOutcome.Routed(all);
    }

    @Override
    public CompletionStage<QueueHandle> consume(
            String vhost,
            String queue,
            long channelId,
            String consumerTag,
            boolean noAck,
            boolean exclusive,
            int prefetch,
            FieldTable arguments,
            DeliverySink sink,
            String connectionId) {
        return freshOnMiss(() -> consumeNow(
                vhost, queue, channelId, consumerTag, noAck, exclusive, prefetch, arguments, sink, connectionId));
    }

    private CompletionStage<QueueHandle> consumeNow(
            String vhost,
            String queue,
            long channelId,
            String consumerTag,
            boolean noAck,
            boolean exclusive,
            int prefetch,
            FieldTable arguments,
            DeliverySink sink,
            String connectionId) {
        QueueDef def = queueDef(vhost, queue, connectionId);
        if (!isHome(def)) {
            return remote.consume(home(def), def.objectId(), queue, consumerTag, noAck, exclusive, prefetch, sink);
        }
        QueueReplica replica = replica(vhost, queue, connectionId);
        ConsumerKey key = new ConsumerKey(channelId, consumerTag);
        return CompletableFuture.supplyAsync(
                () -> {
                    replica.consume(key, consumerTag, noAck, exclusive, prefetch, sink);
                    return replica;
                },
                replica.shard);
    }

    @Override
    public void cancel(QueueHandle queue, long channelId, String consumerTag) {
        if (queue instanceof RemoteQueues.RemoteHandle handle) {
            remote.cancel(handle, consumerTag);
            return;
        }
        QueueReplica replica = (QueueReplica) queue;
        replica.shard.execute(() -> replica.cancel(new ConsumerKey(channelId, consumerTag)));
    }

    @Override
    public CompletionStage<Optional<Delivery>> get(String vhost, String queue, boolean noAck, String connectionId) {
        return freshOnMiss(() -> getNow(vhost, queue, noAck, connectionId));
    }

    private CompletionStage<Optional<Delivery>> getNow(String vhost, String queue, boolean noAck, String connectionId) {
        QueueDef def = queueDef(vhost, queue, connectionId);
        if (!isHome(def)) {
            return remote.get(home(def), def.objectId(), queue, noAck);
        }
        QueueReplica replica = replica(vhost, queue, connectionId);
        return CompletableFuture.supplyAsync(() -> replica.get(noAck), replica.shard);
    }

    @Override
    public void settle(QueueHandle queue, long[] offsets, Settlement settlement) {
        if (queue instanceof RemoteQueues.RemoteHandle handle) {
            remote.settle(handle, offsets, settlement);
            return;
        }
        QueueReplica replica = (QueueReplica) queue;
        replica.shard.execute(() -> replica.settle(offsets, settlement));
    }

    @Override
    public void connectionClosed(String connectionId) {
        MetadataImage image = metadata.image();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (queue.exclusiveOwner().equals(connectionId)) {
                    metadata.propose(new MetadataCommand.DeleteQueue(vhost.name(), queue.name()));
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------------ helpers

    /**
     * Runs {@code operation}; if it finds no such vhost, exchange or queue, runs it once more on an image that holds
     * every command committed before now ({@link MetadataLog#sync}): in a cluster this broker may not yet have applied
     * a declaration another broker just confirmed, and a client that declared through one broker and uses the queue
     * through another must not get a 404 for it.
     */
    private <T> CompletionStage<T> freshOnMiss(java.util.function.Supplier<CompletionStage<T>> operation) {
        CompletionStage<T> first;
        try {
            first = operation.get();
        } catch (BrokerFailure failure) {
            if (failure.replyCode() != ReplyCode.NOT_FOUND || remote == null) {
                throw failure;
            }
            return metadata.sync().thenCompose(image -> operation.get());
        }
        if (remote == null) {
            return first;
        }
        return first.handle((value, failure) -> {
                    Throwable cause =
                            failure instanceof java.util.concurrent.CompletionException c && c.getCause() != null
                                    ? c.getCause()
                                    : failure;
                    if (cause instanceof BrokerFailure broker && broker.replyCode() == ReplyCode.NOT_FOUND) {
                        return metadata.sync().thenCompose(image -> operation.get());
                    }
                    return failure == null
                            ? CompletableFuture.completedFuture(value)
                            : CompletableFuture.<T>failedFuture(cause);
                })
                .thenCompose(stage -> stage);
    }

    private QueueDef queueDef(String vhost, String queue, String connectionId) {
        QueueDef def = vhost(vhost)
                .queue(queue)
                .orElseThrow(() -> failure(ReplyCode.NOT_FOUND, "no queue '" + queue + "' in vhost '" + vhost + "'"));
        checkExclusive(def, vhost, connectionId);
        return def;
    }

    private static NodeId home(QueueDef def) {
        return new NodeId(def.home());
    }

    private QueueReplica replica(String vhost, String queue, String connectionId) {
        QueueDef def = queueDef(vhost, queue, connectionId);
        QueueReplica replica = replicas.get(def.objectId());
        if (replica == null) {
            throw failure(ReplyCode.NOT_FOUND, "no queue '" + queue + "' in vhost '" + vhost + "'");
        }
        return replica;
    }

    private static void checkExclusive(QueueDef def, String vhost, String connectionId) {
        if (def.exclusive() && !def.exclusiveOwner().equals(connectionId)) {
            throw failure(
                    ReplyCode.RESOURCE_LOCKED,
                    "cannot obtain exclusive access to locked queue '" + def.name() + "' in vhost '" + vhost
                            + "'. It could be originally declared on another connection or the exclusive property value"
                            + " does not match that of the original declaration.");
        }
    }

    private Vhost vhost(String name) {
        return metadata.image().vhost(name).orElseThrow(() -> failure(ReplyCode.NOT_FOUND, "no vhost '" + name + "'"));
    }

    private CompletionStage<MetadataImage> propose(MetadataCommand command) {
        return metadata.propose(command).thenApply(applied -> {
            if (applied.rejection().isPresent()) {
                Rejection rejection = applied.rejection().get();
                throw failure(replyCode(rejection.kind()), rejection.message());
            }
            return applied.image();
        });
    }

    private static ReplyCode replyCode(Rejection.Kind kind) {
        return switch (kind) {
            case NOT_FOUND -> ReplyCode.NOT_FOUND;
            case PRECONDITION_FAILED -> ReplyCode.PRECONDITION_FAILED;
            case ACCESS_REFUSED -> ReplyCode.ACCESS_REFUSED;
            case RESOURCE_LOCKED -> ReplyCode.RESOURCE_LOCKED;
        };
    }

    private static String serverName() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return "amq.gen-" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static long newObjectId() {
        long id;
        do {
            id = RANDOM.nextLong() & Long.MAX_VALUE;
        } while (id == 0);
        return id;
    }

    private static BrokerFailure failure(ReplyCode code, String text) {
        return new BrokerFailure(code, text);
    }

    private static <T> CompletionStage<T> failed(ReplyCode code, String text) {
        return CompletableFuture.failedFuture(failure(code, text));
    }

    private static CompletionStage<Void> done() {
        return CompletableFuture.completedFuture(null);
    }
}
