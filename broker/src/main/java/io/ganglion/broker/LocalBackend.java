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
import io.ganglion.broker.replication.PeerSender;
import io.ganglion.broker.replication.RecoveryReplySink;
import io.ganglion.broker.replication.ReplicaHost;
import io.ganglion.broker.replication.ReplicationContext;
import io.ganglion.broker.replication.ReplicationRouter;
import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.metadata.Rejection;
import io.ganglion.metadata.User;
import io.ganglion.metadata.Vhost;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.StreamStart;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import io.ganglion.queues.routing.HeadersMatcher;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.storage.Storage;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
    /** How long a consume or get waits for a replicated queue's owner to serve it, and how often it asks again. */
    static final long MOVING_WAIT_MS = 5_000;

    static final long MOVING_RETRY_MS = 50;
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
            "x-durability",
            "x-queue-leader-locator",
            "x-initial-cluster-size",
            "x-max-age",
            "x-stream-max-segment-size-bytes");

    private final ServerInfo info;
    private final MetadataLog metadata;
    private final Storage storage;
    private final List<Shard> shards;
    private final Map<Long, QueueReplica> replicas = new ConcurrentHashMap<>();
    /** Counts the queues placed on shards in turn: see {@link #shardOf}. */
    private final AtomicInteger nextShard = new AtomicInteger();
    /** This broker's node id in a cluster, empty on a single broker. */
    private final String self;
    /** Queues homed on other brokers; null on a single broker. */
    private final RemoteQueues remote;
    /** Replicated queues with a copy on this broker, by storage object id; their hosts come from the router. */
    private final Map<Long, ReplicatedQueue> replicated = new ConcurrentHashMap<>();
    /** The view each replicated queue's host was last given (assignment, installed, retention), to send changes only. */
    private final Map<ObjectId, String> views = new ConcurrentHashMap<>();

    private volatile ReplicationRouter router;
    private volatile int clusterSize = 1;
    private final Map<ObjectId, List<CompletableFuture<Void>>> activations = new ConcurrentHashMap<>();
    private static final long ACTIVATION_WAIT_MS = 10_000;
    private volatile ReplicationContext replicationContext;

    LocalBackend(ServerInfo info, MetadataLog metadata, Storage storage, List<Shard> shards) {
        this(info, metadata, storage, shards, "");
    }

    LocalBackend(ServerInfo info, MetadataLog metadata, Storage storage, List<Shard> shards, String self) {
        this.info = info;
        this.metadata = metadata;
        this.storage = storage;
        this.shards = List.copyOf(shards);
        this.self = self;
        this.remote = self.isEmpty() ? null : new RemoteQueues(new NodeId(self), this::localQueue);
        metadata.subscribe(this::reconcile);
        reconcile(metadata.image());
        deleteOrphanLogs();
    }

    /**
     * Deletes the logs in storage of queues the image does not hold: queues deleted while this broker was down, whose
     * deletion it never acted on (the metadata log hands over the image at the end of its replay, and a snapshot may
     * skip the entries anyway). Judged against a linearizable image ({@link MetadataLog#sync}), never the local one: a
     * restarted broker's own log may know fewer entries committed than it had applied before (a follower persists the
     * commit index behind the one it acts on), and the queue of a log it created then would look deleted. The store's
     * ids are read before that image: a log created since was created for a queue of an image at least as new, which
     * this one holds unless the queue was deleted since, and then its deletion removes it. Without an answer (no
     * leader) nothing is deleted; the next start tries again.
     */
    private void deleteOrphanLogs() {
        java.util.Set<Long> stored = storage.objectIds();
        metadata.sync()
                .whenCompleteAsync(
                        (image, failure) -> {
                            if (failure != null) {
                                LOG.info("event=orphan_logs_not_checked cause={}", failure.toString());
                                return;
                            }
                            java.util.Set<Long> known = new java.util.HashSet<>();
                            for (Vhost vhost : image.vhosts().values()) {
                                for (QueueDef queue : vhost.queues().values()) {
                                    known.add(queue.objectId());
                                }
                            }
                            for (Long id : stored) {
                                if (known.contains(id)) {
                                    continue;
                                }
                                try {
                                    storage.deleteReplica(id);
                                    LOG.info("event=orphan_log_deleted object={}", id);
                                } catch (IOException | RuntimeException e) {
                                    LOG.error("event=orphan_log_delete_failed object={}", id, e);
                                }
                            }
                        },
                        shards.get(0));
    }

    private synchronized void reconcile(MetadataImage image) {
        Map<Long, QueueDef> wanted = new HashMap<>();
        Map<Long, String> vhostOf = new HashMap<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (queue.replicated() || !isHomeOf(queue)) {
                    continue;
                }
                wanted.put(queue.objectId(), queue);
                vhostOf.put(queue.objectId(), vhost.name());
            }
        }
        for (Map.Entry<Long, QueueDef> entry : wanted.entrySet()) {
            replicas.computeIfAbsent(entry.getKey(), id -> {
                Shard shard = shardOf(id);
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
        refreshReplicatedViews(image);
        checkActivations(image);
        if (remote != null) {
            remote.ownersMayHaveChanged();
        }
    }

    /**
     * Wires replicated queues to the replication layer: {@code router} creates hosts on demand (for recovery commands
     * and frames); {@link #hostFactory} builds them. Called once, before the peer link delivers anything.
     */
    void attachReplication(ReplicationRouter router, ReplicationContext context, int clusterSize) {
        this.clusterSize = clusterSize;
        remote.replication(
                (vhost, queue) -> metadata.image()
                        .vhost(vhost)
                        .flatMap(v -> v.queue(queue))
                        .flatMap(def -> owner(vhost, def)),
                publisherId(context, true));
        this.replicationContext = context;
        this.router = router;
        refreshReplicatedViews(metadata.image());
    }

    /**
     * This broker's publisher id in replicated queues' logs, where (publisher, sequence) identifies a publish and a
     * second one with the same pair is taken for a re-send: unique per process (incarnation), per broker (its id's
     * hash) and per role (publishes admitted here, or forwarded from here, count their sequences apart).
     */
    private long publisherId(ReplicationContext context, boolean forwarded) {
        return (context.incarnation().value() << 31)
                | ((long) (self.hashCode() & 0x3FFFFFFF) << 1)
                | (forwarded ? 1 : 0);
    }

    /**
     * The shard that runs a queue: the one its queue object of this process runs on (a replicated queue's host is
     * closed and opened again as its roles change, and the close may still be running on that shard: the two must not
     * run at once), else the next shard in turn. An object id modulo the shard count put all three queues of a broker
     * on one of its two shards in a quarter of the failover bench's trials, one thread doing every queue's work while
     * the other stood idle, and a new owner's take-over stalled the queues it kept as follower. Object ids are never
     * reused, so a deleted queue leaves nothing to remember.
     */
    Shard shardOf(long objectId) {
        QueueReplica local = replicas.get(objectId);
        if (local != null) {
            return local.shard();
        }
        ReplicatedQueue copy = replicated.get(objectId);
        if (copy != null) {
            return copy.shard();
        }
        return shards.get(Math.floorMod(nextShard.getAndIncrement(), shards.size()));
    }

    /** Opens this broker's copy of a replicated queue: its {@link ReplicatedQueue} and the host that drives it. */
    Optional<ReplicaHost> hostFactory(ObjectId object, PeerSender sender, RecoveryReplySink replies) {
        ReplicationContext context = replicationContext;
        if (context == null) {
            return Optional.empty();
        }
        Optional<QueueDef> found = metadata.image().vhost(object.vhost()).flatMap(v -> v.queue(object.name()));
        if (found.isEmpty() || !found.get().replicated()) {
            return Optional.empty();
        }
        QueueDef def = found.get();
        Shard shard = shardOf(def.objectId());
        long publisher = publisherId(context, false);
        ReplicatedQueue queue = new ReplicatedQueue(object.vhost(), def, shard, publisher);
        ReplicaHost host = new ReplicaHost(object, def.objectId(), shard, storage, context, sender, replies, queue);
        queue.attach(host);
        replicated.put(def.objectId(), queue);
        return Optional.of(host);
    }

    /**
     * Gives every replicated queue's host the assignment it is a member of (or none), from the committed image, as
     * the simulator's broker does; closes the hosts of deleted queues.
     */
    private synchronized void refreshReplicatedViews(MetadataImage image) {
        ReplicationRouter current = router;
        if (current == null) {
            return;
        }
        NodeId me = new NodeId(self);
        long protect = image.coordination().settings().value(RuntimeSettings.RETENTION_PROTECT_MS);
        java.util.Set<Long> live = new java.util.HashSet<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef def : vhost.queues().values()) {
                if (!def.replicated()) {
                    continue;
                }
                live.add(def.objectId());
                ObjectId object = ObjectId.of(vhost.name(), def.name());
                Optional<AcceptedHistory> history = image.coordination().object(object);
                Optional<Assignment> active = history.flatMap(AcceptedHistory::validate);
                ReplicaEvent event;
                String key;
                if (active.isPresent() && active.get().hasMember(me)) {
                    Assignment assignment = active.get();
                    event = new ReplicaEvent.Assigned(
                            assignment,
                            history.get().spec().writeRequirement(),
                            history.get().installedInCommitted(),
                            history.get().leavingInCommitted(),
                            protect);
                    key = assignment + "|" + history.get().installedInCommitted() + "|"
                            + history.get().leavingInCommitted() + "|" + protect;
                } else {
                    if (current.existingHost(object).isEmpty()) {
                        continue;
                    }
                    event = new ReplicaEvent.Unassigned();
                    key = "none";
                }
                if (key.equals(views.get(object))) {
                    continue;
                }
                views.put(object, key);
                // when this broker learned of a role: with the controller's history_committed lines, where a
                // recovery's time went (a metadata follower learns of a commit after the leader)
                LOG.info("event=replica_assignment object={} assignment={}", object, key);
                Optional<ReplicaHost> host = current.host(object);
                if (host.isEmpty()) {
                    continue;
                }
                host.get().deliver(event);
                ReplicatedQueue queue = replicated.get(def.objectId());
                boolean owner = active.isPresent() && active.get().owner().equals(me);
                if (queue != null && !owner) {
                    queue.shard().execute(queue::ownershipLost);
                }
            }
        }
        remote.forgetLanesExcept(live);
        for (Long id : List.copyOf(replicated.keySet())) {
            if (!live.contains(id)) {
                ReplicatedQueue queue = replicated.remove(id);
                ObjectId object = ObjectId.of(queue.vhost, queue.def.name());
                views.remove(object);
                current.remove(object)
                        .whenComplete((ignored, failure) -> queue.shard().execute(() -> {
                            queue.close();
                            try {
                                storage.deleteReplica(id);
                            } catch (IOException | RuntimeException e) {
                                LOG.error("event=queue_log_delete_failed queue={} object={}", queue.def.name(), id, e);
                            }
                        }));
            }
        }
    }

    /** The queue this broker serves itself for {@code objectId}, if any: what the remote-queue protocol serves. */
    private LocalQueue localQueue(long objectId) {
        QueueReplica single = replicas.get(objectId);
        return single != null ? single : replicated.get(objectId);
    }

    /**
     * The status of a replicated queue's copy at its active owner ({@link ReplicaStatus}): read here when this broker
     * owns it, asked of the owner over the peer link otherwise; a map with an {@code error} when it cannot be had.
     */
    CompletableFuture<Map<String, Object>> ownerStatus(String vhost, QueueDef def) {
        Optional<NodeId> owner = owner(vhost, def);
        if (owner.isEmpty()) {
            return CompletableFuture.completedFuture(Map.of("error", "no active owner"));
        }
        CompletableFuture<Map<String, Object>> status;
        if (owner.get().value().equals(self)) {
            LocalQueue local = localQueue(def.objectId());
            status = local == null
                    ? CompletableFuture.completedFuture(Map.of("error", "not open here yet"))
                    : ReplicaStatus.of(local);
        } else if (remote == null) {
            status = CompletableFuture.completedFuture(Map.of("error", "no peer link"));
        } else {
            status = remote.call(owner.get(), def.objectId(), def.name(), RemoteQueues.OP_STATUS, 0)
                    .thenApply(reply -> reply.replyCode() == 0
                            ? ReplicaStatus.decode(reply.message())
                            : Map.<String, Object>of("error", reply.text()));
        }
        return status.completeOnTimeout(Map.of("error", "owner did not answer"), STATUS_WAIT_MS, TimeUnit.MILLISECONDS)
                .exceptionally(failure -> Map.of("error", String.valueOf(failure.getMessage())));
    }

    /** The status of every copy of a replicated queue this broker holds, by "vhost/name". */
    Map<String, CompletableFuture<Map<String, Object>>> localReplicaStatuses() {
        Map<String, CompletableFuture<Map<String, Object>>> statuses = new java.util.TreeMap<>();
        replicated.values().forEach(queue -> statuses.put(queue.vhost + "/" + queue.name(), ReplicaStatus.of(queue)));
        return statuses;
    }

    private static final long STATUS_WAIT_MS = 1_000;

    /** The failure a future completed with, out of the {@code CompletionException} a dependent stage wraps it in. */
    static Throwable unwrap(Throwable failure) {
        return failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause()
                : failure;
    }

    /** The remote-queue protocol of this broker, for its peer link; empty on a single broker. */
    Optional<RemoteQueues> remote() {
        return Optional.ofNullable(remote);
    }

    private boolean isHomeOf(QueueDef queue) {
        return queue.home().isEmpty() || queue.home().equals(self);
    }

    /**
     * The node id of the broker that serves {@code queue} now, from one reading of the image: a classic queue's home,
     * a replicated queue's active owner (empty while it recovers); this broker's own id (empty for a single broker)
     * when it is this one. Callers read it once per operation: an owner read twice can change in between (a publish
     * that saw the old owner, then none, failed its channel with 404 during a failover).
     */
    private Optional<String> homeNow(String vhost, QueueDef queue) {
        if (!queue.replicated()) {
            return Optional.of(isHomeOf(queue) ? self : queue.home());
        }
        return owner(vhost, queue).map(NodeId::value);
    }

    /** {@link #homeNow}, or NOT_FOUND for a replicated queue that has no active owner now. */
    private String homeOrFail(String vhost, QueueDef def) {
        return homeNow(vhost, def)
                .orElseThrow(() -> failure(
                        ReplyCode.NOT_FOUND,
                        "queue '" + def.name() + "' in vhost '" + vhost + "' has no active owner now (recovering)"));
    }

    private Optional<NodeId> owner(String vhost, QueueDef queue) {
        return metadata.image()
                .coordination()
                .object(ObjectId.of(vhost, queue.name()))
                .flatMap(AcceptedHistory::validate)
                .map(Assignment::owner);
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
            return counts(vhost, def);
        }
        String name = queue.isEmpty() ? serverName() : queue;
        Map<String, Object> args = FieldTables.toPlain(arguments);
        QueueType type = queueType(args, name, vhost);
        if (type == QueueType.STREAM) {
            StreamArguments.check(args, name, vhost);
        }
        boolean replicate = remote != null
                && (type == QueueType.QUORUM || type == QueueType.STREAM || args.containsKey("x-copies"));
        if ((replicate || type == QueueType.STREAM) && (!durable || exclusive || autoDelete)) {
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
        QueueDef def = replicate
                ? new QueueDef(
                        name,
                        objectId,
                        type,
                        durable,
                        "",
                        autoDelete,
                        compared,
                        firstOwner(args, name, vhost),
                        copies(args, name, vhost),
                        durability(args, type, name, vhost))
                : new QueueDef(
                        name, objectId, type, durable, exclusive ? connectionId : "", autoDelete, compared, self);
        return propose(new MetadataCommand.DeclareQueue(vhost, def)).thenCompose(image -> {
            QueueDef declared = image.vhost(vhost).flatMap(v -> v.queue(name)).orElseThrow();
            if (declared.replicated()) {
                // declare-ok once the queue serves: its first epoch activated (or after a bound, if recovery waits)
                return awaitActive(vhost, declared).thenCompose(ignored -> counts(vhost, declared));
            }
            return counts(vhost, declared);
        });
    }

    /** Copies of a replicated queue: x-copies, x-quorum-initial-group-size, or min(3, brokers). */
    private int copies(Map<String, Object> args, String name, String vhost) {
        Object given = args.getOrDefault(
                "x-copies", args.getOrDefault("x-quorum-initial-group-size", args.get("x-initial-cluster-size")));
        int copies;
        if (given == null) {
            copies = Math.min(3, clusterSize);
        } else if (given instanceof Number number && number.longValue() >= 1 && number.longValue() <= clusterSize) {
            copies = number.intValue();
        } else {
            throw failure(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid arg 'x-copies' for queue '" + name + "' in vhost '" + vhost + "': " + given
                            + " is not a number of copies between 1 and the cluster's " + clusterSize + " brokers");
        }
        return copies;
    }

    /**
     * The broker placement prefers as a new replicated queue's first owner, by x-queue-leader-locator as RabbitMQ
     * names it: {@code client-local} (the default) is this broker, the one the client declared through, so its
     * publishes and deliveries need no hop to another broker; {@code balanced} is none (the least loaded broker).
     */
    private String firstOwner(Map<String, Object> args, String name, String vhost) {
        Object given = args.getOrDefault("x-queue-leader-locator", "client-local");
        return switch (String.valueOf(given)) {
            case "client-local" -> self;
            case "balanced" -> "";
            default ->
                throw failure(
                        ReplyCode.PRECONDITION_FAILED,
                        "invalid arg 'x-queue-leader-locator' for queue '" + name + "' in vhost '" + vhost + "': '"
                                + given + "', expected client-local or balanced");
        };
    }

    /** Durability of a replicated queue: x-durability, or majority_durable. */
    private static DurabilityMode durability(Map<String, Object> args, QueueType type, String name, String vhost) {
        Object given = args.get("x-durability");
        if (given == null) {
            return DurabilityMode.MAJORITY_DURABLE;
        }
        for (DurabilityMode mode : DurabilityMode.values()) {
            if (mode.settingName().equals(String.valueOf(given))) {
                return mode;
            }
        }
        throw failure(
                ReplyCode.PRECONDITION_FAILED,
                "invalid arg 'x-durability' for queue '" + name + "' in vhost '" + vhost + "': '" + given
                        + "', expected owner_durable, majority_durable or all_durable");
    }

    /** Completes once a replicated queue has an activated owner, or after {@value #ACTIVATION_WAIT_MS} ms. */
    private CompletableFuture<Void> awaitActive(String vhost, QueueDef def) {
        CompletableFuture<Void> active = new CompletableFuture<>();
        ObjectId object = ObjectId.of(vhost, def.name());
        activations
                .computeIfAbsent(object, o -> new java.util.concurrent.CopyOnWriteArrayList<>())
                .add(active);
        checkActivations(metadata.image());
        return active.completeOnTimeout(null, ACTIVATION_WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void checkActivations(MetadataImage image) {
        activations.entrySet().removeIf(entry -> {
            boolean activeNow = image.coordination()
                    .object(entry.getKey())
                    .flatMap(AcceptedHistory::validate)
                    .isPresent();
            boolean gone = image.coordination().object(entry.getKey()).isEmpty();
            if (activeNow || gone) {
                entry.getValue().forEach(future -> future.complete(null));
                return true;
            }
            entry.getValue().removeIf(CompletableFuture::isDone);
            return entry.getValue().isEmpty();
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
                                + "': unsupported queue type '" + type + "', expected classic, quorum or stream"));
    }

    private CompletionStage<QueueDeclared> counts(String vhost, QueueDef def) {
        Optional<String> home = homeNow(vhost, def);
        if (home.isEmpty()) {
            return CompletableFuture.completedFuture(new QueueDeclared(def.name(), 0, 0)); // not active yet
        }
        if (!home.get().equals(self)) {
            return remote.call(new NodeId(home.get()), def.objectId(), def.name(), RemoteQueues.OP_COUNTS, 0)
                    .thenApply(reply -> new QueueDeclared(def.name(), reply.count(), (int) reply.consumers()));
        }
        LocalQueue replica = localQueue(def.objectId());
        if (replica == null) {
            return CompletableFuture.completedFuture(new QueueDeclared(def.name(), 0, 0));
        }
        return CompletableFuture.supplyAsync(
                () -> new QueueDeclared(def.name(), replica.readyCount(), replica.consumerCount()), replica.shard());
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
        String home = homeOrFail(vhost, def);
        if (!home.equals(self)) {
            return remote.call(new NodeId(home), def.objectId(), queue, RemoteQueues.OP_PURGE, 0)
                    .thenApply(reply -> reply.count());
        }
        LocalQueue replica = replica(vhost, queue, connectionId);
        return CompletableFuture.supplyAsync(replica::purge, replica.shard());
    }

    @Override
    public CompletionStage<Long> deleteQueue(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId) {
        Vhost current = vhost(vhost);
        if (current.queue(queue).isEmpty()) {
            return CompletableFuture.completedFuture(0L); // RabbitMQ: deleting a missing queue succeeds
        }
        QueueDef def = queueDef(vhost, queue, connectionId);
        String home = homeOrFail(vhost, def);
        if (!home.equals(self)) {
            int flags = (ifUnused ? RemoteQueues.FLAG_IF_UNUSED : 0) | (ifEmpty ? RemoteQueues.FLAG_IF_EMPTY : 0);
            return remote.call(new NodeId(home), def.objectId(), queue, RemoteQueues.OP_DELETE_CHECK, flags)
                    .thenCompose(reply -> propose(new MetadataCommand.DeleteQueue(vhost, queue))
                            .thenApply(image -> reply.count()));
        }
        LocalQueue replica = replica(vhost, queue, connectionId);
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
                        replica.shard())
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
            Optional<String> home = homeNow(vhost, def);
            if (home.isPresent() && !home.get().equals(self)) {
                durable.add(remote.publish(
                        new NodeId(home.get()),
                        vhost,
                        def.objectId(),
                        def.name(),
                        def.replicated(),
                        payload.duplicate()));
                continue;
            }
            LocalQueue replica = home.isPresent() ? localQueue(def.objectId()) : null;
            if (replica == null && def.replicated()) {
                // recovering, or named its owner before its replica opened here: the publish waits for the owner (the
                // resender sends it) and is confirmed only once stored, never acked with no copy
                durable.add(
                        remote.publish(new NodeId(self), vhost, def.objectId(), def.name(), true, payload.duplicate()));
                continue;
            }
            if (replica == null) {
                continue; // a classic queue deleted meanwhile: routed to nothing, as RabbitMQ
            }
            CompletableFuture<Void> done = new CompletableFuture<>();
            ByteBuffer copy = payload.duplicate();
            if (def.replicated() && remote != null) {
                if (!remote.publishLocallyNow(def.objectId())) {
                    // an earlier publish of this queue from this broker waits to be sent again, or is in flight to
                    // another broker: this one goes behind it, in order
                    durable.add(remote.publish(
                            new NodeId(self), vhost, def.objectId(), def.name(), true, payload.duplicate()));
                    continue;
                }
                // an id from the re-send sequence: if this replica cannot decide it (the owner role is being taken or
                // was just lost), it goes on to the next owner with the same id instead of a nack
                long sequence = remote.nextSequence();
                long publisher = remote.publisherId();
                replica.shard().execute(() -> replica.publish(copy, done, publisher, sequence));
                long objectId = def.objectId();
                durable.add(done.handle((ignored, failure) -> {
                            if (failure != null && unwrap(failure) instanceof QueueMoved) {
                                return remote.adopt(sequence, vhost, objectId, def.name(), payload.duplicate());
                            }
                            remote.decidedLocally(objectId);
                            return failure == null
                                    ? CompletableFuture.<Void>completedFuture(null)
                                    : CompletableFuture.<Void>failedFuture(failure);
                        })
                        .thenCompose(outcome -> outcome));
                continue;
            }
            durable.add(done);
            replica.shard().execute(() -> replica.publish(copy, done));
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
        return whileMoving(
                vhost,
                queue,
                () -> consumeNow(
                        vhost,
                        queue,
                        channelId,
                        consumerTag,
                        noAck,
                        exclusive,
                        prefetch,
                        arguments,
                        sink,
                        connectionId));
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
        StreamStart start =
                def.type() == QueueType.STREAM ? StreamArguments.start(arguments, queue, vhost) : StreamStart.NEXT;
        String home = homeOrFail(vhost, def);
        if (!home.equals(self)) {
            return remote.consume(
                    new NodeId(home), def.objectId(), queue, consumerTag, noAck, exclusive, prefetch, start, sink);
        }
        LocalQueue replica = replica(vhost, queue, connectionId);
        ConsumerKey key = new ConsumerKey(channelId, consumerTag);
        return CompletableFuture.supplyAsync(
                () -> {
                    replica.consume(key, consumerTag, noAck, exclusive, prefetch, start, sink);
                    return replica;
                },
                replica.shard());
    }

    @Override
    public void cancel(QueueHandle queue, long channelId, String consumerTag) {
        if (queue instanceof RemoteQueues.RemoteHandle handle) {
            remote.cancel(handle, consumerTag);
            return;
        }
        LocalQueue replica = (LocalQueue) queue;
        replica.shard().execute(() -> replica.cancel(new ConsumerKey(channelId, consumerTag)));
    }

    @Override
    public CompletionStage<Optional<Delivery>> get(String vhost, String queue, boolean noAck, String connectionId) {
        return whileMoving(vhost, queue, () -> getNow(vhost, queue, noAck, connectionId));
    }

    private CompletionStage<Optional<Delivery>> getNow(String vhost, String queue, boolean noAck, String connectionId) {
        QueueDef def = queueDef(vhost, queue, connectionId);
        String home = homeOrFail(vhost, def);
        if (!home.equals(self)) {
            return remote.get(new NodeId(home), def.objectId(), queue, noAck);
        }
        LocalQueue replica = replica(vhost, queue, connectionId);
        return CompletableFuture.supplyAsync(() -> replica.get(noAck), replica.shard());
    }

    /**
     * Before a clean stop, with the clients gone: every local queue writes the settlements it buffered (acks are
     * written in batches, up to 10 ms late), each on its shard; waits for them to be appended (the journal forces
     * them as it stops), at most {@code timeoutMs}.
     */
    void writeSettlesBeforeStop(long timeoutMs) {
        List<CompletableFuture<Void>> written = new ArrayList<>();
        for (QueueReplica replica : replicas.values()) {
            written.add(CompletableFuture.runAsync(replica::writeSettles, replica.shard()));
        }
        try {
            CompletableFuture.allOf(written.toArray(CompletableFuture[]::new))
                    .get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.warn("event=settles_before_stop_incomplete reason={}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void settle(QueueHandle queue, long[] offsets, Settlement settlement) {
        if (queue instanceof RemoteQueues.RemoteHandle handle) {
            remote.settle(handle, offsets, settlement);
            return;
        }
        LocalQueue replica = (LocalQueue) queue;
        replica.shard().execute(() -> replica.settle(offsets, settlement));
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

    /**
     * Runs {@code operation} on a queue; while it fails with 404 and the queue is a replicated one the metadata still
     * holds, runs it again every {@value #MOVING_RETRY_MS} ms for up to {@value #MOVING_WAIT_MS} ms. Between the
     * metadata naming a queue's new owner and that owner taking the role (or this broker's link to it coming back
     * after a restart) the owner answers "not served here now": a consumer that subscribes in that moment waits for
     * the owner, as a publish does, instead of losing its channel to a 404 for a queue that exists.
     */
    private <T> CompletionStage<T> whileMoving(
            String vhost, String queue, java.util.function.Supplier<CompletionStage<T>> operation) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MOVING_WAIT_MS);
        // inside freshOnMiss: a queue this broker's image lacks is looked up again once after a sync of the metadata
        // log; one it holds, whose owner is not serving yet, is asked again without a sync each time
        return freshOnMiss(() -> retryWhile(
                operation,
                failure -> failure instanceof BrokerFailure broker
                        && broker.replyCode() == ReplyCode.NOT_FOUND
                        && metadata.image()
                                .vhost(vhost)
                                .flatMap(v -> v.queue(queue))
                                .filter(QueueDef::replicated)
                                .isPresent(),
                deadline,
                CompletableFuture.delayedExecutor(MOVING_RETRY_MS, TimeUnit.MILLISECONDS)));
    }

    /**
     * Runs {@code operation} and again, each time through {@code later}, while it fails with a failure {@code again}
     * accepts and {@link System#nanoTime} is before {@code deadline}; then its last outcome.
     */
    static <T> CompletionStage<T> retryWhile(
            java.util.function.Supplier<CompletionStage<T>> operation,
            java.util.function.Predicate<Throwable> again,
            long deadline,
            java.util.concurrent.Executor later) {
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

    private QueueDef queueDef(String vhost, String queue, String connectionId) {
        QueueDef def = vhost(vhost)
                .queue(queue)
                .orElseThrow(() -> failure(ReplyCode.NOT_FOUND, "no queue '" + queue + "' in vhost '" + vhost + "'"));
        checkExclusive(def, vhost, connectionId);
        return def;
    }

    private LocalQueue replica(String vhost, String queue, String connectionId) {
        QueueDef def = queueDef(vhost, queue, connectionId);
        LocalQueue replica = localQueue(def.objectId());
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
