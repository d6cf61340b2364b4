package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.broker.replication.RecoveryReplySink;
import io.ganglion.broker.replication.ReplicaHost;
import io.ganglion.broker.replication.ReplicationContext;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.replication.ReplicationConfig;
import io.ganglion.serving.ForwardLanes;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated queue whose replica awaits its next epoch holds the publishes sent to it (the broker that sent them
 * learned first that this one owns the next epoch) and admits them once it owns, instead of refusing each at once.
 */
class ReplicatedQueueParkTest {
    private static final NodeId SELF = NodeId.of("ganglion-1");
    private static final NodeId OTHER = NodeId.of("ganglion-2");
    private static final ObjectId OBJECT = ObjectId.of("/", "orders");

    @TempDir
    Path dir;

    private Storage storage;
    private Shard shard;
    private ReplicatedQueue queue;
    private ReplicaHost host;

    @BeforeEach
    void open() throws Exception {
        storage = Storage.open(
                dir, StorageConfig.defaults(System::currentTimeMillis).withJournalFileBytes(1 << 20));
        shard = new Shard(0);
        QueueDef def = new QueueDef(
                "orders",
                42,
                QueueType.QUORUM,
                true,
                "",
                false,
                Map.of(),
                "ganglion-1",
                1,
                DurabilityMode.OWNER_DURABLE);
        queue = new ReplicatedQueue(
                "/", def, shard, 1, () -> RuntimeSettings.RESEND_WINDOW_MS.defaultValue(), DeadLettering.Sink.NONE);
        RecoveryReplySink replies = RecoveryReplySink.NONE;
        host = new ReplicaHost(
                OBJECT,
                42,
                shard,
                storage,
                new ReplicationContext(
                        SELF, new Incarnation(7), ReplicationConfig.defaults(), 10, System::currentTimeMillis),
                (to, message) -> true,
                replies,
                queue);
        queue.attach(host, false);
        host.start().get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void close() throws Exception {
        if (host == null) {
            return;
        }
        host.close().get(10, TimeUnit.SECONDS);
        shard.close();
        storage.close();
    }

    private CompletableFuture<Void> publish(long sequence) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        shard.execute(() -> queue.publish(
                MessageRecordTest.record(BasicProperties.EMPTY, "m" + sequence),
                done,
                99,
                sequence,
                ForwardLanes.NONE));
        return done;
    }

    private void assign(NodeId owner, List<NodeId> followers) {
        Assignment assignment = new Assignment(Epoch.of(1), owner, followers, true);
        host.deliver(new ReplicaEvent.Assigned(assignment, 1, Set.of(owner), 60_000));
    }

    @Test
    void shouldHoldPublishesUntilItOwnsThenConfirmThem() throws Exception {
        CompletableFuture<Void> first = publish(1);
        CompletableFuture<Void> second = publish(2);
        Thread.sleep(50);
        assertThat(first).as("held, not refused").isNotDone();
        assertThat(second).isNotDone();
        assign(SELF, List.of());
        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldSendThemBackAtOnceWhenItFollowsAnotherOwner() {
        CompletableFuture<Void> held = publish(1);
        assign(OTHER, List.of(SELF));
        assertThatThrownBy(() -> held.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(QueueMoved.class);
        CompletableFuture<Void> later = publish(2);
        assertThatThrownBy(() -> later.get(10, TimeUnit.SECONDS))
                .as("a follower knows who owns: refused at once")
                .hasCauseInstanceOf(QueueMoved.class);
    }

    @Test
    void shouldSendThemBackAtOnceWhenAnEpochWithoutItIsAssigned() {
        CompletableFuture<Void> held = publish(1);
        assign(OTHER, List.of());
        long start = System.nanoTime();
        assertThatThrownBy(() -> held.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(QueueMoved.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("not held to the park time")
                .isLessThan(io.ganglion.serving.PublishIntake.PARK_MS);
    }

    @Test
    void shouldSendThemBackWhenNoEpochComesInTime() {
        long start = System.nanoTime();
        CompletableFuture<Void> held = publish(1);
        assertThatThrownBy(() -> held.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(QueueMoved.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
                .as("held for the park time first")
                .isGreaterThanOrEqualTo(io.ganglion.serving.PublishIntake.PARK_MS - 20);
    }
}
