package io.ganglion.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.broker.Shard;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.SealReply;
import io.ganglion.replication.EpochHistory;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplicationRouterTest {
    private static final NodeId SELF = NodeId.of("ganglion-1");
    private static final NodeId OTHER = NodeId.of("ganglion-2");
    private static final ObjectId HELD = ObjectId.of("/", "held");
    private static final ObjectId ELSEWHERE = ObjectId.of("/", "elsewhere");

    @TempDir
    Path dir;

    private Storage storage;
    private Shard shard;
    private ReplicationRouter router;
    private final List<Object[]> sent = new CopyOnWriteArrayList<>();
    private final List<CoordinationCommand> commands = new CopyOnWriteArrayList<>();
    private final List<ObjectId> created = new CopyOnWriteArrayList<>();

    @BeforeEach
    void open() throws Exception {
        storage = Storage.open(
                dir, StorageConfig.defaults(System::currentTimeMillis).withJournalFileBytes(1 << 20));
        shard = new Shard(0);
        ReplicationContext context = new ReplicationContext(
                SELF, new Incarnation(1), ReplicationCluster.CONFIG, 10, System::currentTimeMillis);
        router = new ReplicationRouter(
                SELF,
                (to, message) -> sent.add(new Object[] {to, message}),
                (object, sender, replies) -> {
                    if (!object.equals(HELD)) {
                        return Optional.empty();
                    }
                    created.add(object);
                    return Optional.of(
                            new ReplicaHost(object, 7, shard, storage, context, sender, replies, ReplicaListener.NONE));
                },
                commands::add);
    }

    @AfterEach
    void close() throws Exception {
        router.close();
        storage.close();
        shard.close();
    }

    @Test
    void shouldAnswerItsOwnControllerInProcessWhenAskedToInstallItsOwnReplica() {
        router.requestRecovery(new RecoveryRequest.Install(HELD, Epoch.of(1), SELF, LogPosition.EMPTY, List.of()));

        ReplicationCluster.await(() -> !commands.isEmpty(), "the install reply");
        assertThat(commands)
                .containsExactly(new CoordinationCommand.AppendHistory(
                        HELD, new HistoryRecord.MemberInstalled(Epoch.of(1), SELF)));
        assertThat(sent).isEmpty(); // neither the request nor the reply used the link
        assertThat(created).containsExactly(HELD);
    }

    @Test
    void shouldSendARecoveryRequestForAnotherBrokerAsARecoveryCommand() {
        RecoveryRequest.Seal seal = new RecoveryRequest.Seal(HELD, Epoch.of(3), OTHER);

        router.requestRecovery(seal);

        assertThat(sent).hasSize(1);
        assertThat(sent.get(0)).containsExactly(OTHER, new PeerMessage.RecoveryCommand(seal));
        assertThat(created).isEmpty();
    }

    @Test
    void shouldSendTheHostsSealReplyToTheControllersBroker() {
        router.onMessage(OTHER, new PeerMessage.RecoveryCommand(new RecoveryRequest.Seal(HELD, Epoch.of(2), SELF)));

        ReplicationCluster.await(() -> !sent.isEmpty(), "the seal reply");
        assertThat(sent.get(0)).containsExactly(OTHER, new PeerMessage.SealReply(HELD, 2, 0, -1, -1, SELF));
    }

    @Test
    void shouldDropFramesForObjectsItHoldsNoReplicaOfAndLeaveOtherMessagesToTheCaller() {
        boolean handled = router.onMessage(
                OTHER,
                new PeerMessage.Replication(
                        ELSEWHERE,
                        new io.ganglion.replication.PeerMessage.Snapshot(Epoch.of(1), 0, EpochHistory.EMPTY)));
        boolean misrouted = router.onMessage(
                OTHER, new PeerMessage.RecoveryCommand(new RecoveryRequest.Seal(HELD, Epoch.of(1), OTHER)));
        boolean heartbeat = router.onMessage(OTHER, new PeerMessage.Heartbeat(OTHER, new Incarnation(2), false, 0));

        assertThat(handled).isTrue();
        assertThat(misrouted).isTrue();
        assertThat(heartbeat).isFalse();
        assertThat(created).isEmpty();
        assertThat(router.existingHost(ELSEWHERE)).isEmpty();
        assertThat(sent).isEmpty();
    }

    @Test
    void shouldTurnRepliesIntoHistoryRecordsOnlyFromTheNodeTheyName() {
        SealReply reply = new SealReply(OTHER, LogPosition.of(2, 17), 16);
        PeerMessage.SealReply frame = RecoveryReplies.sealReply(HELD, Epoch.of(2), reply);

        router.onMessage(OTHER, frame);
        router.onMessage(SELF, frame); // names OTHER: refused
        router.onMessage(OTHER, RecoveryReplies.installReply(HELD, Epoch.of(3), OTHER));
        router.onMessage(OTHER, new PeerMessage.InstallReply(HELD, 3, OTHER, false, "disk full"));

        assertThat(commands)
                .containsExactly(
                        new CoordinationCommand.AppendHistory(HELD, new HistoryRecord.SealReceived(Epoch.of(2), reply)),
                        new CoordinationCommand.AppendHistory(
                                HELD, new HistoryRecord.MemberInstalled(Epoch.of(3), OTHER)));
    }
}
