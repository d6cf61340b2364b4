package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DownReason;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@code /api/queues} says of a replicated queue's followers: held within the hold, leaving past it. */
class AdminHttpTest {
    private static final NodeId A = NodeId.of("a");
    private static final NodeId B = NodeId.of("b");
    private static final NodeId C = NodeId.of("c");
    private static final ObjectId Q = ObjectId.of("/", "q");

    private MetadataImage image = MetadataImage.empty();

    private void apply(CoordinationCommand command) {
        MetadataImage.Applied applied = image.apply(new MetadataCommand.Coordination(command));
        assertThat(applied.accepted()).as("%s", command).isTrue();
        image = applied.image();
    }

    private void history(HistoryRecord record) {
        apply(new CoordinationCommand.AppendHistory(Q, record));
    }

    /** Epoch 1 of q on a, b, c, activated and enrolled, with b and c down. */
    private void activeWithTwoFollowersDown() {
        apply(new CoordinationCommand.CreateObject(
                new ObjectSpec(Q, ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE)));
        history(new HistoryRecord.RecoveryPending(Epoch.of(1), A, List.of(B, C)));
        history(new HistoryRecord.RecoveryPointChosen(Epoch.of(1), LogPosition.EMPTY));
        for (NodeId node : List.of(A, B, C)) {
            history(new HistoryRecord.MemberInstalled(Epoch.of(1), node));
        }
        history(new HistoryRecord.Activated(Epoch.of(1)));
        apply(new CoordinationCommand.CommitLiveSet(List.of(
                NodeState.live(A, new Incarnation(1), 1_000, false),
                NodeState.live(B, new Incarnation(1), 1_000, false).down(DownReason.EAGER_FAILOVER),
                NodeState.live(C, new Incarnation(1), 2_000, false).down(DownReason.EAGER_FAILOVER))));
    }

    private Map<String, Object> row() {
        Map<String, Object> row = new LinkedHashMap<>();
        QueueDef def = new QueueDef(
                "q", 7, QueueType.QUORUM, true, "", false, Map.of(), "", 3, DurabilityMode.MAJORITY_DURABLE);
        AdminHttp.replicatedColumns(row, image, "/", def);
        return row;
    }

    @Test
    void shouldListAFollowerLeavingTheEpochApartFromTheHeldOnes() {
        activeWithTwoFollowersDown();
        assertThat(row().get("leaving")).isEqualTo(List.of());
        assertThat(row().get("held").toString()).contains("node=b").contains("node=c");

        history(new HistoryRecord.FollowerLeaving(Epoch.of(1), C));
        Map<String, Object> leaving = row();
        assertThat(leaving.get("leaving")).isEqualTo(List.of("c"));
        assertThat(leaving.get("held").toString()).contains("node=b").doesNotContain("node=c");
        assertThat(leaving.get("followers")).isEqualTo(List.of("b", "c"));
        assertThat(leaving.get("epoch")).isEqualTo(1L);

        history(new HistoryRecord.FollowerDropped(Epoch.of(1), C));
        Map<String, Object> dropped = row();
        assertThat(dropped.get("leaving")).isEqualTo(List.of());
        assertThat(dropped.get("followers")).isEqualTo(List.of("b"));
        assertThat(dropped.get("epoch")).as("no new epoch").isEqualTo(1L);
    }
}
