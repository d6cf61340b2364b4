package io.ganglion.broker;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.server.BindingChange;
import io.ganglion.amqp.server.BrokerBackend;
import io.ganglion.amqp.server.ConsumeRequest;
import io.ganglion.amqp.server.Delivery;
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
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.QueueDef;
import io.ganglion.storage.Storage;
import io.netty.buffer.ByteBuf;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The broker behind AMQP connections: declarations go through the metadata log, messages through the queues' logs
 * on their shards. Delegates each concern to its own object:
 *
 * <pre>
 *   authenticate, vhostAllowed         Authenticator
 *   declare, delete, bind, unbind      Declarations    (metadata log)
 *   publish                            PublishRouter   (local queue, or the home over the peer link)
 *   consume, get, settle, purge        QueueAccess     (local queue, or the home over the peer link)
 *   the queues served here             QueueRegistry   (follows the metadata image)
 *   single broker or cluster member    Membership      (chosen once, here)
 * </pre>
 */
final class LocalBackend implements BrokerBackend {
    private final ServerInfo info;
    private final QueueDirectory directory;
    private final Membership membership;
    private final Authenticator authenticator;
    private final QueueRegistry registry;
    private final QueueAccess access;
    private final Declarations declarations;
    private final PublishRouter publishes;
    private final ReplicationContext context;

    /** A single broker with a new incarnation and the system clock (tests). */
    LocalBackend(ServerInfo info, MetadataLog metadata, Storage storage, List<Shard> shards) {
        this(
                info,
                metadata,
                storage,
                shards,
                "",
                ReplicationContext.withDefaults(
                        new NodeId("local"),
                        new Incarnation(new SecureRandom().nextLong()),
                        System::currentTimeMillis));
    }

    /**
     * A member of a cluster whose node id is {@code self}, or a single broker for an empty id.
     *
     * @param context this broker's node id, incarnation and clock, for the hosts of its queues
     */
    LocalBackend(
            ServerInfo info,
            MetadataLog metadata,
            Storage storage,
            List<Shard> shards,
            String self,
            ReplicationContext context) {
        this.info = info;
        this.context = context;
        this.directory = new QueueDirectory(metadata, self);
        this.authenticator = new Authenticator(metadata);
        this.registry = new QueueRegistry(directory, storage, shards, context);
        this.membership = Membership.of(self, metadata, registry::localQueue, registry::shardOf, shards);
        this.access = new QueueAccess(directory, registry, membership);
        this.declarations = new Declarations(directory, access, membership);
        this.publishes = new PublishRouter(directory, registry, membership);
        registry.deadLetterTo(publishes::deadLetter);
        metadata.subscribe(this::imageApplied);
        imageApplied(metadata.image());
        registry.deleteOrphanLogs();
    }

    /** On the metadata log's thread, for every applied image in order. */
    private void imageApplied(MetadataImage image) {
        registry.reconcile(image);
        declarations.checkActivations(image);
        membership.imageApplied();
    }

    /**
     * Wires replicated queues to the replication layer (see {@link QueueRegistry#attach}) and re-sends to their
     * owners ({@link ForwardingClient#replication}). Called once, on a cluster member, before the peer link delivers
     * anything.
     */
    void attachReplication(ReplicationRouter router, int clusterSize) {
        declarations.clusterSize(clusterSize);
        ForwardingClient remote = membership.forwarding();
        remote.replication(
                (vhost, queue) -> directory
                        .image()
                        .vhost(vhost)
                        .flatMap(v -> v.queue(queue))
                        .flatMap(def -> directory.owner(vhost, def)),
                QueueRegistry.publisherId(context, directory.self(), true));
        registry.attach(router, context, remote::forgetLanesExcept);
    }

    /** Opens this broker's copy of a replicated queue, for the {@link ReplicationRouter}. */
    Optional<ReplicaHost> hostFactory(ObjectId object, PeerSender sender, RecoveryReplySink replies) {
        return registry.hostFactory(object, sender, replies);
    }

    /** The shard that runs the queue {@code objectId} ({@link QueueRegistry#shardOf}). */
    Shard shardOf(long objectId) {
        return registry.shardOf(objectId);
    }

    /** The status of a replicated queue's copy at its active owner ({@link QueueAccess#ownerStatus}). */
    CompletableFuture<Map<String, Object>> ownerStatus(String vhost, QueueDef def) {
        return access.ownerStatus(vhost, def);
    }

    /** The status of every copy of a replicated queue this broker holds, by "vhost/name". */
    Map<String, CompletableFuture<Map<String, Object>>> localReplicaStatuses() {
        return registry.localReplicaStatuses();
    }

    /** Before a clean stop: see {@link QueueRegistry#writeSettlesBeforeStop}. */
    void writeSettlesBeforeStop(long timeoutMs) {
        registry.writeSettlesBeforeStop(timeoutMs);
    }

    /** Before a clean stop: see {@link QueueRegistry#closeClassicQueues}. */
    void closeClassicQueues(long timeoutMs) {
        registry.closeClassicQueues(timeoutMs);
    }

    /** The remote-queue protocol of this broker, for its peer link; empty on a single broker. */
    Optional<RemoteQueues> remote() {
        return membership instanceof Membership.Clustered clustered
                ? Optional.of(clustered.remote())
                : Optional.empty();
    }

    /**
     * A queue or exchange name as RabbitMQ takes it: line feeds and carriage returns removed, in every operation that
     * names one, so {@code "a\r\nb"} and {@code "ab"} are the same queue.
     */
    static String name(String given) {
        if (given.indexOf('\n') < 0 && given.indexOf('\r') < 0) {
            return given;
        }
        return given.replace("\r", "").replace("\n", "");
    }

    @Override
    public ServerInfo info() {
        return info;
    }

    @Override
    public Optional<String> authenticate(String user, String password, SocketAddress remote) {
        return authenticator.authenticate(user, password, remote);
    }

    @Override
    public boolean vhostAllowed(String user, String vhost) {
        return authenticator.vhostAllowed(user, vhost);
    }

    @Override
    public CompletionStage<Void> declareExchange(String vhost, ExchangeMethod.Declare d) {
        return declarations.declareExchange(
                vhost,
                new ExchangeMethod.Declare(
                        name(d.exchange()),
                        d.type(),
                        d.passive(),
                        d.durable(),
                        d.autoDelete(),
                        d.internal(),
                        false,
                        d.arguments()));
    }

    @Override
    public CompletionStage<Void> deleteExchange(String vhost, String exchange, boolean ifUnused) {
        return declarations.deleteExchange(vhost, name(exchange), ifUnused);
    }

    @Override
    public CompletionStage<Void> bindExchange(String vhost, BindingChange change) {
        return declarations.bindExchange(vhost, change.renamed(LocalBackend::name));
    }

    @Override
    public CompletionStage<QueueDeclared> declareQueue(String vhost, QueueMethod.Declare d, String connectionId) {
        return declarations.declareQueue(
                vhost,
                new QueueMethod.Declare(
                        name(d.queue()), d.passive(), d.durable(), d.exclusive(), d.autoDelete(), false, d.arguments()),
                connectionId);
    }

    @Override
    public CompletionStage<Void> bindQueue(String vhost, BindingChange change, String connectionId) {
        return declarations.bindQueue(vhost, change.renamed(LocalBackend::name), connectionId);
    }

    @Override
    public CompletionStage<Long> purgeQueue(String vhost, String queue, String connectionId) {
        return access.purge(vhost, name(queue), connectionId);
    }

    @Override
    public CompletionStage<Long> deleteQueue(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId) {
        return declarations.deleteQueue(vhost, name(queue), ifUnused, ifEmpty, connectionId);
    }

    @Override
    public PublishOutcome publish(
            String vhost,
            String exchange,
            String routingKey,
            BasicProperties properties,
            ByteBuffer header,
            ByteBuf body,
            String user) {
        return publishes.publish(vhost, name(exchange), routingKey, properties, header, body);
    }

    @Override
    public CompletionStage<QueueHandle> consume(ConsumeRequest request) {
        return access.consume(request.withQueue(name(request.queue())));
    }

    @Override
    public void cancel(QueueHandle queue, long channelId, String consumerTag) {
        access.cancel(queue, channelId, consumerTag);
    }

    @Override
    public CompletionStage<Optional<Delivery>> get(String vhost, String queue, boolean noAck, String connectionId) {
        return access.get(vhost, name(queue), noAck, connectionId);
    }

    @Override
    public void settle(QueueHandle queue, long[] offsets, Settlement settlement) {
        access.settle(queue, offsets, settlement);
    }

    @Override
    public void connectionClosed(String connectionId) {
        declarations.connectionClosed(connectionId);
    }
}
