package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.server.PublishOutcome;
import io.ganglion.amqp.server.ServerInfo;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.User;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import io.ganglion.testing.Poll;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalBackendTest {
    @TempDir
    Path dir;

    @Test
    void shouldAllowGuestFromLoopbackOnlyAndCheckPasswords() throws Exception {
        try (FileMetadataLog metadata = FileMetadataLog.open(dir.resolve("meta"));
                Storage storage = Storage.open(dir.resolve("storage"), StorageConfig.defaults(() -> 0L));
                Shard shard = new Shard(0)) {
            metadata.propose(new MetadataCommand.PutVhost("/")).join();
            metadata.propose(new MetadataCommand.PutUser(
                            User.withPassword("guest", "guest", new byte[] {1, 2, 3, 4}, List.of("administrator"))))
                    .join();
            metadata.propose(new MetadataCommand.PutUser(
                            User.withPassword("alice", "pw", new byte[] {4, 3, 2, 1}, List.of())))
                    .join();
            LocalBackend backend = new LocalBackend(
                    new ServerInfo("Ganglion", "0.1.0", "test", "c"), metadata, storage, List.of(shard));
            InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 40000);
            InetSocketAddress remote =
                    new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) 198, 51, 100, 7}), 40000);

            assertThat(backend.authenticate("guest", "guest", loopback)).contains("guest");
            assertThat(backend.authenticate("guest", "guest", remote))
                    .as("guest is loopback only")
                    .isEmpty();
            assertThat(backend.authenticate("alice", "pw", remote)).contains("alice");
            assertThat(backend.authenticate("alice", "wrong", loopback)).isEmpty();
            assertThat(backend.authenticate("nobody", "pw", loopback)).isEmpty();
            assertThat(backend.vhostAllowed("alice", "/")).isTrue();
            assertThat(backend.vhostAllowed("alice", "other")).isFalse();
        }
    }

    /** Declares the durable queue {@code name} and publishes one message to it. */
    private static PublishOutcome declareAndPublish(LocalBackend backend, String name) throws Exception {
        backend.declareQueue(
                        "/",
                        new QueueMethod.Declare(name, false, true, false, false, false, FieldTable.EMPTY),
                        "conn-1")
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        return backend.publish(
                "/",
                "",
                name,
                BasicProperties.EMPTY,
                ContentHeaderCodec.encoded(ContentHeader.basic(5, BasicProperties.EMPTY)),
                Unpooled.wrappedBuffer("hello".getBytes(StandardCharsets.UTF_8)),
                "guest");
    }

    @Test
    void shouldDeleteAtStartTheLogsOfQueuesTheMetadataDoesNotHold() throws Exception {
        try (FileMetadataLog metadata = FileMetadataLog.open(dir.resolve("meta"));
                Storage storage =
                        Storage.open(dir.resolve("storage"), StorageConfig.defaults(System::currentTimeMillis));
                Shard shard = new Shard(0)) {
            metadata.propose(new MetadataCommand.PutVhost("/")).join();
            LocalBackend first = new LocalBackend(
                    new ServerInfo("Ganglion", "0.1.0", "test", "c"), metadata, storage, List.of(shard));
            PublishOutcome outcome = declareAndPublish(first, "kept");
            ((PublishOutcome.Routed) outcome).durable().toCompletableFuture().get(10, TimeUnit.SECONDS);
            long kept = storage.objectIds().iterator().next();
            // the log of a queue deleted while this broker was down: no queue of the image has its id
            long orphan = kept + 1;
            storage.replica(orphan);
            assertThat(storage.objectIds()).containsExactlyInAnyOrder(kept, orphan);

            new LocalBackend(new ServerInfo("Ganglion", "0.1.0", "test", "c"), metadata, storage, List.of(shard));
            Poll.within(Duration.ofSeconds(10), () -> !storage.objectIds().contains(orphan));
            assertThat(storage.objectIds()).containsExactly(kept);
        }
    }

    @Test
    void shouldSpreadQueuesEvenlyOverTheShardsAndKeepEachOnItsShard() throws Exception {
        try (FileMetadataLog metadata = FileMetadataLog.open(dir.resolve("meta"));
                Storage storage =
                        Storage.open(dir.resolve("storage"), StorageConfig.defaults(System::currentTimeMillis));
                Shard first = new Shard(0);
                Shard second = new Shard(1)) {
            metadata.propose(new MetadataCommand.PutVhost("/")).join();
            LocalBackend backend = new LocalBackend(
                    new ServerInfo("Ganglion", "0.1.0", "test", "c"), metadata, storage, List.of(first, second));
            for (int i = 0; i < 6; i++) {
                declareAndPublish(backend, "q" + i);
            }
            Map<Shard, Long> queuesPerShard = storage.objectIds().stream()
                    .collect(Collectors.groupingBy(backend::shardOf, Collectors.counting()));

            // random object ids modulo two shards split six queues 3/3 in only 5 of 16 draws
            assertThat(queuesPerShard).containsOnly(Map.entry(first, 3L), Map.entry(second, 3L));
            for (long id : storage.objectIds()) {
                assertThat(backend.shardOf(id)).as("a queue stays on its shard").isSameAs(backend.shardOf(id));
            }
        }
    }

    @Test
    void shouldDeleteTheQueueLogFromStorageWhenTheQueueIsDeleted() throws Exception {
        try (FileMetadataLog metadata = FileMetadataLog.open(dir.resolve("meta"));
                Storage storage =
                        Storage.open(dir.resolve("storage"), StorageConfig.defaults(System::currentTimeMillis));
                Shard shard = new Shard(0)) {
            metadata.propose(new MetadataCommand.PutVhost("/")).join();
            LocalBackend backend = new LocalBackend(
                    new ServerInfo("Ganglion", "0.1.0", "test", "c"), metadata, storage, List.of(shard));
            PublishOutcome outcome = declareAndPublish(backend, "q");
            assertThat(outcome).isInstanceOf(PublishOutcome.Routed.class);
            ((PublishOutcome.Routed) outcome).durable().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThat(storage.objectIds()).hasSize(1);
            long objectId = storage.objectIds().iterator().next();
            Path replicaDir = storage.directory().resolve("replicas").resolve(String.format("%016x", objectId));
            assertThat(replicaDir).isDirectory();

            assertThat(backend.deleteQueue("/", "q", false, false, "conn-1")
                            .toCompletableFuture()
                            .get(10, TimeUnit.SECONDS))
                    .isEqualTo(1L);
            // the replica leaves the store's map before its files are removed: wait for both
            Poll.within(
                    Duration.ofSeconds(10),
                    () -> storage.existingReplica(objectId).isEmpty() && !Files.exists(replicaDir));
            assertThat(storage.existingReplica(objectId))
                    .as("the queue's log is deleted")
                    .isEmpty();
            assertThat(Files.exists(replicaDir)).as("its files are freed").isFalse();
        }
    }
}
