package io.ganglion.coordination;

import static io.ganglion.coordination.DurabilityMode.MAJORITY_DURABLE;
import static io.ganglion.coordination.TickHarness.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import io.ganglion.coordination.HistoryRecord.RecoveryPointChosen;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ControllerTickTest {
    private final TickHarness cluster = new TickHarness();

    @Test
    void shouldCommitLiveSetChangesOnce() {
        cluster.nodes("a", "b");
        TickResult first = cluster.tick();
        assertThat(first.commands()).first().isInstanceOf(CommitLiveSet.class);
        cluster.advance(100);
        assertThat(cluster.tick().commands())
                .as("heartbeat times alone are not committed")
                .isEmpty();
        cluster.kill("b");
        assertThat(cluster.tick().commands())
                .singleElement()
                .isInstanceOfSatisfying(
                        CommitLiveSet.class,
                        commit -> assertThat(commit.changes())
                                .singleElement()
                                .satisfies(state -> assertThat(state.reason()).contains(DownReason.EAGER_FAILOVER)));
    }

    @Test
    void shouldActivateNewQueueInThreeSteps() {
        cluster.nodes("a", "b", "c");
        cluster.tick();
        ObjectId queue = cluster.create("q", ObjectKind.QUEUE, 3, MAJORITY_DURABLE);

        assertThat(cluster.tick().commands())
                .containsExactly(new AppendHistory(
                        queue, new RecoveryPending(Epoch.of(1), node("a"), List.of(node("b"), node("c")))));
        assertThat(cluster.tick().commands())
                .containsExactly(new AppendHistory(queue, new RecoveryPointChosen(Epoch.of(1), LogPosition.EMPTY)));
        TickResult installs = cluster.tick();
        assertThat(installs.requests()).hasSize(3).allMatch(r -> r instanceof RecoveryRequest.Install);
        assertThat(cluster.tick().commands()).containsExactly(new AppendHistory(queue, new Activated(Epoch.of(1))));
        assertThat(cluster.history(queue).enrolled()).isTrue();
        assertThat(cluster.rejections).isEmpty();
    }

    @Test
    void shouldSealEveryAffectedObjectInTheSameTick() {
        cluster.nodes("a", "b", "c");
        List<ObjectId> queues = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            queues.add(cluster.activeQueue("q" + i, 3, MAJORITY_DURABLE));
        }
        long ownedByA = queues.stream()
                .filter(q -> cluster.history(q).validate().orElseThrow().owner().equals(node("a")))
                .count();
        assertThat(ownedByA).isEqualTo(4);

        cluster.kill("a");
        cluster.tick(); // live set change and pending recoveries for the four queues a owned
        TickResult seals = cluster.tick();

        assertThat(seals.requests().stream()
                        .filter(r -> r instanceof RecoveryRequest.Seal)
                        .map(RecoveryRequest::object)
                        .distinct())
                .as("no one-at-a-time limit")
                .hasSize(4);
        cluster.ticks(5, 100);
        assertThat(queues)
                .allSatisfy(q -> assertThat(cluster.history(q).validate()).isPresent());
    }

    @Test
    void shouldRetryUnansweredSealsWithDoublingBackoff() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.silent.add(node("b"));
        cluster.kill("a");
        cluster.tick();

        List<Long> sendTimes = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            int before = cluster.sent.size();
            cluster.tick();
            if (cluster.sent.subList(before, cluster.sent.size()).stream()
                    .anyMatch(
                            r -> r instanceof RecoveryRequest.Seal s && s.node().equals(node("b")))) {
                sendTimes.add(cluster.now);
            }
            cluster.advance(10);
        }
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < sendTimes.size(); i++) {
            gaps.add(sendTimes.get(i) - sendTimes.get(i - 1));
        }
        // The first resend is immediate: c's seal moved the history, which resets the backoff.
        assertThat(gaps).startsWith(10L, 50L, 100L, 200L, 400L, 800L, 1600L).contains(2000L);
        assertThat(gaps).allMatch(gap -> gap <= 2000);
        assertThat(cluster.history(queue).validate()).as("one seal of R = 2").isEmpty();
    }

    @Test
    void shouldResumeRecoveryUnderANewController() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.silent.add(node("b"));
        cluster.kill("a");
        cluster.ticks(3, 10);
        assertThat(cluster.history(queue).validate()).isEmpty();

        cluster.silent.clear();
        cluster.backoff = RecoveryBackoff.none(); // the new controller has no retry state
        TickResult first = cluster.tick();

        assertThat(first.requests()).as("sends at once").isNotEmpty();
        cluster.ticks(3, 10);
        assertThat(cluster.history(queue).validate().orElseThrow().epoch()).isEqualTo(Epoch.of(2));
    }

    @Test
    void shouldRejectCommandOvertakenByAnother() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        CoordinationImage.Applied stale =
                cluster.image.apply(new AppendHistory(queue, new RecoveryPending(Epoch.of(1), node("b"), List.of())));
        assertThat(stale.rejection())
                .hasValueSatisfying(reason -> assertThat(reason).contains("committed epoch + 1"));
        assertThat(stale.image()).isSameAs(cluster.image);
    }

    @Test
    void shouldRecoverWhenOwnerRestartsBeforeItIsDeclaredDown() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        cluster.logEnds.put(queue, java.util.Map.of(before.followers().get(0), LogPosition.of(1, 9)));

        cluster.restart(before.owner().value(), 4242); // a new incarnation, never seen down
        TickResult result = cluster.tick();

        assertThat(result.commands())
                .first()
                .isEqualTo(
                        new AppendHistory(queue, new RecoveryPending(Epoch.of(2), before.owner(), before.followers())));
        assertThat(result.commands()).last().isInstanceOf(CommitLiveSet.class);
        cluster.ticks(5, 100);
        Assignment after = cluster.history(queue).validate().orElseThrow();
        assertThat(after.epoch()).isEqualTo(Epoch.of(2));
        assertThat(after.sameMembers(before.owner(), before.followers())).isTrue();
        assertThat(cluster.history(queue).records())
                .contains(new HistoryRecord.RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 9)));
    }

    @Test
    void shouldKeepEpochWhenOnlyAFollowerRestarts() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();

        cluster.restart(before.followers().get(1).value(), 4343);
        TickResult result = cluster.tick();

        assertThat(result.commands()).singleElement().isInstanceOf(CommitLiveSet.class);
        assertThat(cluster.history(queue).validate()).contains(before);
    }

    @Test
    void shouldComputeBackoffDelays() {
        assertThat(RecoveryBackoff.delayMs(1, 50, 2000)).isEqualTo(50);
        assertThat(RecoveryBackoff.delayMs(3, 50, 2000)).isEqualTo(200);
        assertThat(RecoveryBackoff.delayMs(40, 50, 2000)).isEqualTo(2000);
        assertThat(RecoveryBackoff.delayMs(70, Long.MAX_VALUE / 4, Long.MAX_VALUE))
                .isEqualTo(Long.MAX_VALUE);
    }
}
