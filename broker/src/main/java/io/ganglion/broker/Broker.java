package io.ganglion.broker;

import io.ganglion.amqp.server.ServerInfo;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.User;
import io.ganglion.metadata.Vhost;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
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
    private final FileMetadataLog metadata;
    private final List<Shard> shards;
    private final LocalBackend backend;
    private final AutoCloseable amqp;
    private final AdminHttp http;

    private Broker(
            BrokerConfig config,
            Storage storage,
            FileMetadataLog metadata,
            List<Shard> shards,
            LocalBackend backend,
            AutoCloseable amqp,
            AdminHttp http) {
        this.config = config;
        this.storage = storage;
        this.metadata = metadata;
        this.shards = shards;
        this.backend = backend;
        this.amqp = amqp;
        this.http = http;
    }

    public static Broker start(BrokerConfig config) throws IOException {
        Clock clock = Clock.systemUTC();
        Storage storage = Storage.open(config.dataDir().resolve("storage"), StorageConfig.defaults(clock::millis));
        FileMetadataLog metadata = FileMetadataLog.open(config.dataDir().resolve("metadata"));
        bootstrap(metadata, config);
        dropTransient(metadata);
        List<Shard> shards = new ArrayList<>();
        for (int i = 0; i < Math.max(1, Runtime.getRuntime().availableProcessors()); i++) {
            shards.add(new Shard(i));
        }
        ServerInfo info = new ServerInfo("Ganglion", VERSION, "Java " + Runtime.version(), config.clusterName());
        LocalBackend backend = new LocalBackend(info, metadata, storage, shards);
        AutoCloseable amqp = AmqpListener.start(config, backend);
        AdminHttp http = AdminHttp.start(config.amqpHost(), config.httpPort(), metadata, config);
        LOG.info(
                "event=broker_started node={} amqp={}:{} http={} data={}",
                config.nodeId(),
                config.amqpHost(),
                config.amqpPort(),
                http.port(),
                config.dataDir());
        return new Broker(config, storage, metadata, shards, backend, amqp, http);
    }

    private static void bootstrap(FileMetadataLog metadata, BrokerConfig config) {
        MetadataImage image = metadata.image();
        if (image.vhosts().isEmpty() && image.users().isEmpty()) {
            byte[] salt = new byte[4];
            new SecureRandom().nextBytes(salt);
            metadata.propose(new MetadataCommand.PutVhost("/")).join();
            metadata.propose(new MetadataCommand.PutUser(User.withPassword(
                            config.defaultUser(), config.defaultPass(), salt, List.of("administrator"))))
                    .join();
            LOG.info("event=bootstrapped vhost=/ user={}", config.defaultUser());
        }
    }

    private static void dropTransient(FileMetadataLog metadata) {
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

    @Override
    public void close() {
        closeQuietly(amqp);
        http.close();
        shards.forEach(Shard::close);
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
