package io.ganglion.broker;

import io.ganglion.amqp.server.ServerInfo;
import io.ganglion.broker.cluster.ClusterNode;
import io.ganglion.broker.cluster.IncarnationFile;
import io.ganglion.broker.cluster.Seed;
import io.ganglion.broker.jvm.EagerClasses;
import io.ganglion.broker.peer.PeerLink;
import io.ganglion.broker.replication.ReplicationContext;
import io.ganglion.broker.replication.ReplicationRouter;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.User;
import io.ganglion.metadata.Vhost;
import io.ganglion.metadata.ratis.LeaderPathWarmup;
import io.ganglion.metadata.ratis.RatisLogConfig;
import io.ganglion.metadata.ratis.RatisMetadataLog;
import io.ganglion.metadata.ratis.Voter;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Ganglion broker process: storage, the metadata log, the shards, the AMQP listener and the HTTP API.
 *
 * <p>On start it replays the metadata log and each durable queue's log, and drops what RabbitMQ drops at a restart:
 * non-durable queues and exchanges, and exclusive queues (their connections are gone).
 */
public final class Broker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Broker.class);

    /** The version reported to clients and by {@code ctl}: a semantic version. */
    public static final String VERSION = "0.1.0";

    private final BrokerConfig config;
    private final Storage storage;
    private final MetadataLog metadata;
    private final ClusterNode cluster;
    private final ReplicationRouter router;
    private final Shard.Group shards;
    private final LocalBackend backend;
    private final AutoCloseable amqp;
    private final AdminHttp http;

    private Broker(
            BrokerConfig config,
            Storage storage,
            MetadataLog metadata,
            ClusterNode cluster,
            ReplicationRouter router,
            Shard.Group shards,
            LocalBackend backend,
            AutoCloseable amqp,
            AdminHttp http) {
        this.config = config;
        this.storage = storage;
        this.metadata = metadata;
        this.cluster = cluster;
        this.router = router;
        this.shards = shards;
        this.backend = backend;
        this.amqp = amqp;
        this.http = http;
    }

    public static Broker start(BrokerConfig config) throws IOException {
        Clock clock = Clock.systemUTC();
        // before any traffic: the compiler then meets failover's types initialized (EagerClasses)
        EagerClasses.initialize(Broker.class.getClassLoader());
        Storage storage = Storage.open(
                config.dataDir().resolve("storage"),
                StorageConfig.defaults(clock::millis)
                        .withSegmentBytes(config.segmentBytes())
                        .withGroupCommitNanos(config.groupCommitMicros() * 1000));
        Incarnation incarnation = IncarnationFile.next(config.dataDir());
        ServerInfo info = new ServerInfo("Ganglion", VERSION, "Java " + Runtime.version(), config.clusterName());
        Shard.Group shardGroup =
                new Shard.Group(Math.max(1, Runtime.getRuntime().availableProcessors()));
        Parts parts = new Parts(config, clock, storage, incarnation, info, shardGroup);
        Core core = config.clustered() ? startClustered(parts) : startSingle(parts);
        AutoCloseable amqp = AmqpListener.start(config, core.backend(), shardGroup.eventLoops());
        AdminHttp http = AdminHttp.start(
                config.amqpHost(),
                config.httpPort(),
                core.metadata(),
                config,
                core.cluster(),
                incarnation,
                core.backend());
        LOG.info(
                "event=broker_started node={} incarnation={} amqp={}:{} http={} data={}",
                config.nodeId(),
                incarnation,
                config.amqpHost(),
                config.amqpPort(),
                http.port(),
                config.dataDir());
        return new Broker(
                config,
                storage,
                core.metadata(),
                core.cluster(),
                core.router(),
                shardGroup,
                core.backend(),
                amqp,
                http);
    }

    /** What {@link #start} builds before the listeners; {@code cluster} and {@code router} are null unclustered. */
    private record Core(MetadataLog metadata, ClusterNode cluster, ReplicationRouter router, LocalBackend backend) {}

    /** What both kinds of start are given. */
    private record Parts(
            BrokerConfig config,
            Clock clock,
            Storage storage,
            Incarnation incarnation,
            ServerInfo info,
            Shard.Group shardGroup) {
        /** The broker's backend over {@code metadata}; {@code home} is this broker's node id, "" alone. */
        LocalBackend backend(MetadataLog metadata, String home) {
            return new LocalBackend(
                    info,
                    metadata,
                    storage,
                    shardGroup.shards(),
                    home,
                    ReplicationContext.withDefaults(new NodeId(config.nodeId()), incarnation, clock::millis));
        }
    }

    /** One broker alone: the metadata log in a file, no peers. */
    private static Core startSingle(Parts parts) throws IOException {
        MetadataLog metadata = FileMetadataLog.open(parts.config().dataDir().resolve("metadata"));
        bootstrap(metadata, parts.config());
        dropTransient(metadata);
        return new Core(metadata, null, null, parts.backend(metadata, ""));
    }

    /**
     * A cluster member: the Ratis metadata log, the replication router and the cluster node with its peer link. On a
     * failure closes what it started, and the shards and storage too, then rethrows.
     */
    private static Core startClustered(Parts parts) throws IOException {
        BrokerConfig config = parts.config();
        RatisLogConfig ratis = ratisConfig(config);
        if (config.metadataWarmup()) {
            LeaderPathWarmup.run(config.dataDir().resolve("metadata-warmup"), ratis, java.time.Duration.ofSeconds(10));
        }
        MetadataLog metadata = RatisMetadataLog.start(ratis, config.clusterName());
        ClusterNode cluster = null;
        ReplicationRouter router = null;
        try {
            LocalBackend backend = parts.backend(metadata, config.nodeId());
            RemoteQueues remote = backend.remote().orElseThrow();
            AtomicReference<PeerLink> link = new AtomicReference<>();
            AtomicReference<ClusterNode> clusterRef = new AtomicReference<>();
            ReplicationRouter replication = replicationRouter(config, metadata, backend, link, clusterRef);
            router = replication;
            backend.attachReplication(replication, config.seeds().size());
            cluster = ClusterNode.start(
                    config.clusterName(),
                    config.self(),
                    config.seeds(),
                    parts.incarnation(),
                    metadata,
                    parts.clock(),
                    (from, message) -> {
                        if (!replication.onMessage(from, message)) {
                            remote.onMessage(from, message);
                        }
                    },
                    remote::onDisconnected,
                    replication::requestRecovery,
                    parts.shardGroup().eventLoops());
            link.set(cluster.link());
            clusterRef.set(cluster);
            remote.attach(cluster.link());
            awaitBootstrap(metadata, config);
            dropTransientHomedHere(metadata, config.nodeId());
            return new Core(metadata, cluster, router, backend);
        } catch (IOException | RuntimeException e) {
            if (cluster != null) {
                cluster.close();
            }
            if (router != null) {
                router.close();
            }
            metadata.close();
            parts.shardGroup().close();
            parts.storage().close();
            throw e;
        }
    }

    /**
     * The router of this broker's replicas. It sends over {@code link} once the cluster node has set it, and passes
     * recovery replies to the cluster node's controller once {@code clusterRef} holds it.
     */
    private static ReplicationRouter replicationRouter(
            BrokerConfig config,
            MetadataLog metadata,
            LocalBackend backend,
            AtomicReference<PeerLink> link,
            AtomicReference<ClusterNode> clusterRef) {
        return new ReplicationRouter(
                new NodeId(config.nodeId()),
                (to, message) -> {
                    PeerLink current = link.get();
                    return current != null && current.send(to, message);
                },
                backend::hostFactory,
                command -> {
                    // the controller counts a reply before it commits; without one yet, just propose it
                    ClusterNode node = clusterRef.get();
                    if (node != null) {
                        node.controller().recoveryReply(command);
                    } else {
                        metadata.propose(new MetadataCommand.Coordination(command));
                    }
                });
    }

    /** Voters are the first three (or five) seeds, the others follow the log as listeners. */
    static RatisLogConfig ratisConfig(BrokerConfig config) {
        List<Voter> members = config.seeds().stream()
                .map(seed -> new Voter(seed.id(), seed.host(), seed.metadataPort()))
                .toList();
        int voters = Seed.voterCount(members.size());
        return RatisLogConfig.of(
                        config.nodeId(),
                        members.subList(0, voters),
                        members.subList(voters, members.size()),
                        config.dataDir().resolve("metadata-ratis"))
                .withElectionTimeouts(
                        java.time.Duration.ofMillis(config.electionTimeoutMinMs()),
                        java.time.Duration.ofMillis(config.electionTimeoutMaxMs()));
    }

    /**
     * Bootstraps the cluster's metadata (vhost / and the default user) once a quorum runs: every broker proposes it if
     * it finds the image empty; the commands are idempotent. A broker started before a majority of voters waits here,
     * logging every few seconds, for up to {@value #QUORUM_WAIT_MINUTES} minutes.
     */
    private static void awaitBootstrap(MetadataLog metadata, BrokerConfig config) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(QUORUM_WAIT_MINUTES);
        while (true) {
            try {
                bootstrap(metadata, config);
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("no metadata quorum within " + QUORUM_WAIT_MINUTES + " minutes: " + e, e);
                }
                LOG.info("event=waiting_for_metadata_quorum node={} reason={}", config.nodeId(), e.toString());
            }
        }
    }

    private static final int QUORUM_WAIT_MINUTES = 5;

    private static void bootstrap(MetadataLog metadata, BrokerConfig config) {
        MetadataImage image = metadata.image();
        if (image.vhosts().isEmpty() && image.users().isEmpty()) {
            // decided when applied, not here: this broker's image may not hold every committed command yet
            byte[] salt = new byte[4];
            new SecureRandom().nextBytes(salt);
            MetadataImage after = metadata.propose(new MetadataCommand.Bootstrap(User.withPassword(
                            config.defaultUser(), config.defaultPass(), salt, List.of("administrator"))))
                    .join()
                    .image();
            LOG.info(
                    "event=bootstrapped vhosts={} users={}",
                    after.vhosts().keySet(),
                    after.users().keySet());
            // runtime settings in the config seed the cluster's settings when it is first bootstrapped; afterwards
            // they live in the metadata log and change with `ctl settings set`
            Map<String, String> seeded = new java.util.TreeMap<>();
            config.settings().overrides().forEach((name, value) -> seeded.put(name, String.valueOf(value)));
            if (!seeded.isEmpty()) {
                metadata.propose(new MetadataCommand.Coordination(
                                new io.ganglion.coordination.CoordinationCommand.SetSettings(seeded)))
                        .join();
                LOG.info("event=settings_seeded settings={}", seeded);
            }
        }
    }

    /**
     * In a cluster, a restarted broker drops the non-durable and exclusive queues it was home to (their connections
     * are gone); exchanges stay, as other brokers may use them.
     */
    private static void dropTransientHomedHere(MetadataLog metadata, String self) {
        for (Vhost vhost : metadata.image().vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (queue.home().equals(self) && (!queue.durable() || queue.exclusive())) {
                    metadata.propose(new MetadataCommand.DeleteQueue(vhost.name(), queue.name()))
                            .join();
                }
            }
        }
    }

    private static void dropTransient(MetadataLog metadata) {
        for (Vhost vhost : metadata.image().vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (!queue.durable() || queue.exclusive()) {
                    metadata.propose(new MetadataCommand.DeleteQueue(vhost.name(), queue.name()))
                            .join();
                }
            }
            for (String name : vhost.topology().exchangeNames()) {
                Exchange exchange = vhost.topology().exchange(name).orElseThrow();
                if (!exchange.durable()) {
                    metadata.propose(new MetadataCommand.DeleteExchange(vhost.name(), name, false))
                            .join();
                }
            }
        }
    }

    public BrokerConfig config() {
        return config;
    }

    public int httpPort() {
        return http.port();
    }

    /** How long a clean stop waits for the classic queues' hosts to close. */
    private static final long CLASSIC_CLOSE_MS = 5_000;

    @Override
    public void close() {
        closeQuietly(amqp);
        http.close();
        backend.writeSettlesBeforeStop(CLASSIC_CLOSE_MS);
        if (cluster != null) {
            cluster.close();
        }
        if (router != null) {
            router.close();
        }
        backend.closeClassicQueues(CLASSIC_CLOSE_MS);
        shards.close();
        closeQuietly(storage);
        metadata.close();
        LOG.info("event=broker_stopped node={}", config.nodeId());
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            LOG.warn("event=close_failed what={}", closeable, e);
        }
    }
}
