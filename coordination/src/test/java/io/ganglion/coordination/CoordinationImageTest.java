package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.Batch;
import io.ganglion.coordination.CoordinationCommand.CreateObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class CoordinationImageTest {
    private static final ObjectId Q = ObjectId.of("/", "q");
    private static final NodeId A = NodeId.of("a");

    private static CreateObject create() {
        return new CreateObject(new ObjectSpec(Q, ObjectKind.QUEUE, 1, DurabilityMode.OWNER_DURABLE));
    }

    /** A batch applies in order, as its commands proposed one after the other would: each sees the ones before it. */
    @Test
    void shouldApplyABatchInOrderAndSkipOnlyTheCommandsThatDoNotFit() {
        CoordinationImage.Applied applied = CoordinationImage.empty()
                .apply(new Batch(List.of(
                        create(),
                        new AppendHistory(Q, new HistoryRecord.RecoveryPending(Epoch.of(1), A, List.of())),
                        new AppendHistory(Q, new HistoryRecord.Activated(Epoch.of(1))), // no point yet: refused
                        new AppendHistory(Q, new HistoryRecord.RecoveryPointChosen(Epoch.of(1), LogPosition.EMPTY)),
                        new AppendHistory(Q, new HistoryRecord.MemberInstalled(Epoch.of(1), A)),
                        new AppendHistory(Q, new HistoryRecord.Activated(Epoch.of(1))))));

        assertThat(applied.accepted()).isTrue();
        AcceptedHistory history = applied.image().object(Q).orElseThrow();
        assertThat(history.validate().orElseThrow().epoch()).isEqualTo(Epoch.of(1));
        assertThat(history.records()).hasSize(5); // created, pending, point, install, activation
    }

    @Test
    void shouldRefuseABatchWhoseEveryCommandIsRefusedAndLeaveTheImageAsItWas() {
        CoordinationImage image = CoordinationImage.empty().apply(create()).image();
        CoordinationImage.Applied applied = image.apply(
                new Batch(List.of(create(), new AppendHistory(Q, new HistoryRecord.Activated(Epoch.of(1))))));

        assertThat(applied.rejection())
                .hasValueSatisfying(
                        reason -> assertThat(reason).contains("already exists").contains("no recovery pending"));
        assertThat(applied.image()).isSameAs(image);
    }

    @Test
    void shouldRefuseAnEmptyOrNestedBatch() {
        assertThatThrownBy(() -> new Batch(List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Batch(List.of(new Batch(List.of(create())))))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
