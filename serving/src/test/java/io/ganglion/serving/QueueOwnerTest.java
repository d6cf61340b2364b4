package io.ganglion.serving;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Epoch;
import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The owner side's settled low water: below the lowest unsettled message, and never inside the resend window. */
class QueueOwnerTest {
    private static final Epoch EPOCH = Epoch.of(1);
    private static final long WINDOW_MS = 3_000;

    private final List<Record> log = new ArrayList<>();
    private final List<Long> lowWaters = new ArrayList<>();
    private final QueueEffects effects = new QueueEffects() {
        @Override
        public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {}

        @Override
        public void settle(long offset) {
            log.add(new Record.Settle(EPOCH, log.size(), offset));
        }
    };
    private final QueueOwner owner = new QueueOwner(new LogHost(), effects);

    private final class LogHost implements QueueOwner.Host {
        @Override
        public Optional<Epoch> owning() {
            return Optional.of(EPOCH);
        }

        @Override
        public boolean mayDeliver(Epoch epoch, long nowMs) {
            return true;
        }

        @Override
        public long start() {
            return 0;
        }

        @Override
        public long end() {
            return log.size() - 1;
        }

        @Override
        public List<Record> read(long from, long to) {
            return List.copyOf(log.subList((int) from, (int) to + 1));
        }

        @Override
        public void rebuilt(Epoch epoch, QueueMachine machine, int messages) {}

        @Override
        public void settledLowWater(long offset) {
            lowWaters.add(offset);
        }

        @Override
        public long resendWindowMs() {
            return WINDOW_MS;
        }
    }

    private void append(int messages) {
        for (int i = 0; i < messages; i++) {
            log.add(new Record.Message(EPOCH, log.size(), new PublishId(7, log.size()), ByteBuffer.allocate(1)));
        }
    }

    /** Commits the whole log at {@code nowMs}. */
    private void commit(long nowMs) throws Exception {
        owner.deliverable(EPOCH, log.size() - 1, nowMs);
    }

    @Test
    void shouldKeepSettledMessagesUntilTheResendWindowSinceTheirCommitHasPassed() throws Exception {
        log.add(new Record.EpochStart(EPOCH, 0));
        append(3);
        commit(0); // the rebuild: offsets 1..3 count as committed at 0
        QueueMachine machine = owner.machine();
        for (long offset = 1; offset <= 3; offset++) {
            machine.get(true, effects); // taken without acknowledgement: settled at once
        }
        commit(10); // the settle records

        owner.tick(1_000);
        owner.tick(2_000);
        assertThat(lowWaters).as("settled, but inside the window").isEmpty();

        owner.tick(3_000);
        assertThat(lowWaters)
                .as("everything committed by 0 is outside the window at 3000")
                .containsExactly(4L);
    }

    @Test
    void shouldNeverDiscardAMessageCommittedInsideTheWindowEvenWhenItIsSettled() throws Exception {
        log.add(new Record.EpochStart(EPOCH, 0));
        commit(0);
        append(2); // offsets 1, 2
        commit(1_000);
        append(2); // offsets 3, 4
        commit(2_500);
        QueueMachine machine = owner.machine();
        for (int i = 0; i < 4; i++) {
            machine.get(true, effects);
        }
        commit(2_600);

        owner.tick(4_100); // the window began at 1100: offsets 1 and 2 (committed at 1000) are out of it
        assertThat(lowWaters).containsExactly(3L);
        owner.tick(5_600); // 2600: everything committed by then, settles included
        assertThat(lowWaters).containsExactly(3L, 9L);
    }

    @Test
    void shouldCountTheRecordsARebuildInheritsAsCommittedAtTheRebuild() throws Exception {
        log.add(new Record.EpochStart(EPOCH, 0));
        append(5);
        // settled by an earlier owner: their commit times are unknown here
        for (long offset = 1; offset <= 5; offset++) {
            log.add(new Record.Settle(EPOCH, log.size(), offset));
        }
        commit(10_000);

        owner.tick(12_000);
        assertThat(lowWaters).isEmpty();
        owner.tick(13_000);
        assertThat(lowWaters).containsExactly(11L);
    }

    @Test
    void shouldRebuildEachMessagesDeliveryCountFromItsReturnedRecords() throws Exception {
        log.add(new Record.EpochStart(EPOCH, 0));
        append(3); // offsets 1..3
        log.add(new Record.Returned(EPOCH, log.size(), new long[] {1, 2}));
        log.add(new Record.Returned(EPOCH, log.size(), new long[] {2}));
        log.add(new Record.Settle(EPOCH, log.size(), 1));
        commit(0);

        QueueMachine machine = owner.machine();
        assertThat(machine.readyCount()).isEqualTo(2);
        assertThat(machine.deliveryCount(2)).isEqualTo(2);
        assertThat(machine.deliveryCount(3)).isZero();
    }

    @Test
    void shouldKeepAPendingDeadLetterOutOfTheQueueAndTheLowWaterBelowItUntilItIsSettled() throws Exception {
        log.add(new Record.EpochStart(EPOCH, 0));
        append(3); // offsets 1..3
        log.add(new Record.DeadLettered(EPOCH, log.size(), new long[] {1, 2}, 2));
        log.add(new Record.Settle(EPOCH, log.size(), 2)); // 2's targets confirmed it, 1's did not yet
        commit(0);

        assertThat(owner.machine().readyCount()).as("3 only").isEqualTo(1);
        assertThat(owner.pendingDeadLetters()).isDeepEqualTo(new long[][] {{1, 2}});
        owner.machine().get(true, effects); // 3 settled
        commit(10);
        owner.tick(10_000);
        assertThat(lowWaters).as("1 waits for its targets").containsExactly(1L);

        assertThat(owner.deadLettered(1)).isTrue();
        effects.settle(1);
        commit(10_100);
        owner.tick(20_000);
        assertThat(lowWaters).containsExactly(1L, 8L);
    }
}
