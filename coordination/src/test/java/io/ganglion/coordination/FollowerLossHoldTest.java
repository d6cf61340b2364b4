package io.ganglion.coordination;

import static io.ganglion.coordination.DurabilityMode.MAJORITY_DURABLE;
import static io.ganglion.coordination.DurabilityMode.OWNER_DURABLE;
import static io.ganglion.coordination.TickHarness.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The follower loss hold end to end through the controller tick: the seed note's cases and the ones around them. Three
 * brokers a, b, c (and a spare d where a replacement matters); a queue of 3 copies, majority_durable (W = 2), placed
 * with owner a and followers b, c.
 */
class FollowerLossHoldTest {
    private static final long HOLD = RuntimeSettings.FOLLOWER_LOSS_HOLD_MS.defaultValue();

    private final TickHarness cluster = new TickHarness();

    private static boolean writesPendingRecovery(TickResult result) {
        return result.commands().stream()
                .anyMatch(command ->
                        command instanceof AppendHistory append && append.record() instanceof RecoveryPending);
    }

    private void assertStillServing(ObjectId queue, Assignment before) {
        AcceptedHistory history = cluster.history(queue);
        assertThat(history.pending()).as("no pending recovery").isEmpty();
        assertThat(history.validate())
                .as("assignment, epoch and activation unchanged")
                .contains(before);
        assertThat(cluster.image.projectedAssignments())
                .as("queue still projected")
                .containsEntry(queue, before);
    }

    /** Kills {@code follower}, ticks 100 ms later, and checks the queue held it and kept serving. */
    private void assertHeldThroughKill(ObjectId queue, Assignment before, String follower) {
        cluster.kill(follower);
        cluster.advance(100);
        TickResult result = cluster.tick();

        assertThat(writesPendingRecovery(result)).isFalse();
        assertThat(result.held()).containsEntry(queue, List.of(node(follower)));
        assertStillServing(queue, before);
    }

    // The seed note's five cases.

    @Test
    void shouldKeepAssignmentWhenFollowerLostWithinHold() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        assertThat(before.sameMembers(node("a"), List.of(node("b"), node("c")))).isTrue();

        assertHeldThroughKill(queue, before, "c");
        assertThat(cluster.history(queue).eligibleSet().members())
                .as("the held follower keeps its slot in E")
                .contains(node("c"));
        assertThat(cluster.history(queue).recoveryThreshold()).isEqualTo(2);
    }

    @Test
    void shouldMakeProposedReplacementWaitForTheHold() {
        cluster.nodes("a", "b", "c", "d");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        NodeId lost = before.followers().get(1);
        NodeId spare = cluster.observed.placeableNodes().stream()
                .filter(n -> !before.hasMember(n))
                .findFirst()
                .orElseThrow();

        cluster.kill(lost.value());
        Proposal proposal = Placement.propose(
                        List.of(new Placement.Current(
                                cluster.history(queue).spec(),
                                cluster.history(queue).committed())),
                        cluster.observed)
                .get(queue);
        assertThat(proposal.followers())
                .as("placement proposes a replacement")
                .contains(spare)
                .doesNotContain(lost);

        for (int i = 0; i < 50; i++) {
            cluster.advance(HOLD / 60);
            assertThat(writesPendingRecovery(cluster.tick())).isFalse();
        }
        assertStillServing(queue, before);
    }

    @Test
    void shouldDropTheFollowerPastTheHoldWithoutANewEpochAndThenAddTheReplacement() {
        cluster.nodes("a", "b", "c", "d");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        NodeId lost = before.followers().get(1);
        cluster.kill(lost.value());
        cluster.tick();
        assertThat(cluster.history(queue).pending()).isEmpty();

        cluster.advance(HOLD);
        TickResult result = cluster.tick();

        assertThat(writesPendingRecovery(result))
                .as("no recovery: the follower leaves the epoch")
                .isFalse();
        assertThat(result.commands())
                .contains(new AppendHistory(queue, new HistoryRecord.FollowerLeaving(Epoch.of(1), lost)));
        assertThat(cluster.history(queue).leavingInCommitted()).containsExactly(lost);
        assertThat(cluster.history(queue).validate())
                .as("still serving in epoch 1")
                .contains(before);
        cluster.ticks(10, 100);
        AcceptedHistory history = cluster.history(queue);
        Assignment after = history.validate().orElseThrow();
        assertThat(after.epoch()).as("no new epoch at any point").isEqualTo(Epoch.of(1));
        assertThat(history.records())
                .noneMatch(
                        r -> r instanceof RecoveryPending p && p.proposedEpoch().value() == 2);
        assertThat(after.owner()).isEqualTo(before.owner());
        assertThat(after.members()).doesNotContain(lost).hasSize(3);
        assertThat(history.enrolled())
                .as("the replacement caught up as a learner")
                .isTrue();
        assertThat(history.records())
                .filteredOn(r -> r instanceof HistoryRecord.FollowerDropped || r instanceof HistoryRecord.FollowerAdded)
                .as("dropped, then the replacement joined")
                .hasSize(2)
                .first()
                .isEqualTo(new HistoryRecord.FollowerDropped(Epoch.of(1), lost));
        assertThat(cluster.rejections).isEmpty();
    }

    @Test
    void shouldAskTheOwnerOnlyOnceTheLeavingIsCommitted() {
        cluster.nodes("a", "b", "c");
        cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, 0);
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        cluster.kill("c");

        // the tick that proposes the leaving does not also ask the owner: its proof counts from the commit
        TickResult proposing = ControllerTick.run(cluster.image, cluster.observed, cluster.backoff, cluster.now);
        assertThat(proposing.commands())
                .containsExactly(
                        new CoordinationCommand.CommitLiveSet(cluster.observed.changesSince(cluster.image.liveSet())),
                        new AppendHistory(queue, new HistoryRecord.FollowerLeaving(Epoch.of(1), node("c"))));
        assertThat(proposing.requests()).noneMatch(r -> r instanceof RecoveryRequest.Drop);
        TickResult inFlight = ControllerTick.run(
                cluster.image, proposing.commands(), cluster.observed, proposing.backoff(), cluster.now + 100);
        assertThat(inFlight.requests()).as("still in flight").noneMatch(r -> r instanceof RecoveryRequest.Drop);

        cluster.tick();
        TickResult asking = cluster.tick();
        assertThat(asking.requests())
                .containsExactly(new RecoveryRequest.Drop(queue, Epoch.of(1), before.owner(), node("c")));
    }

    @Test
    void shouldRecoverAFollowerThatLeftWhenTheOwnerIsLostMidway() {
        cluster.nodes("a", "b", "c");
        cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, 0);
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.silent.add(node("a")); // the owner never answers the drop
        cluster.kill("c");
        cluster.ticks(3, 100);
        assertThat(cluster.history(queue).leavingInCommitted()).containsExactly(node("c"));

        cluster.kill("a");
        cluster.ticks(50, 1_000);

        AcceptedHistory history = cluster.history(queue);
        assertThat(history.recoveryThreshold())
                .as("c is still in E until the owner's proof: R over three members")
                .isEqualTo(2);
        assertThat(history.validate()).as("never activates on one copy").isEmpty();
    }

    @Test
    void shouldFallToWriteRequirementRuleWhenBothFollowersLost() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);

        cluster.kill("b");
        cluster.kill("c");
        TickResult result = cluster.tick();

        assertThat(result.held()).doesNotContainKey(queue);
        assertThat(writesPendingRecovery(result)).as("followers left 0 < W - 1").isTrue();
        assertThat(cluster.history(queue).validate()).isEmpty();
        cluster.ticks(50, 1_000);
        assertThat(cluster.history(queue).pending().orElseThrow().seals())
                .as("only the owner can seal: 1 < R = 2")
                .hasSize(1);
        assertThat(cluster.history(queue).validate())
                .as("never activates on one copy")
                .isEmpty();
    }

    @Test
    void shouldStillRecoverQueueWithWriteRequirementOne() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, OWNER_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        NodeId lost = before.followers().get(0);

        cluster.kill(lost.value());
        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isTrue();
        assertThat(cluster.history(queue).validate()).isEmpty();
        // W = 1: a record may be confirmed on any single copy, so R = |E| and the lost copy must seal too.
        assertThat(cluster.history(queue).recoveryThreshold()).isEqualTo(3);
        cluster.ticks(20, 1_000);
        assertThat(cluster.history(queue).validate()).isEmpty();

        cluster.restart(lost.value(), 77);
        cluster.ticks(10, 100);
        assertThat(cluster.history(queue).validate().orElseThrow().epoch()).isEqualTo(Epoch.of(2));
        assertThat(cluster.rejections).isEmpty();
    }

    // Around the seed's cases.

    @Test
    void shouldNotHoldDrainingFollower() {
        cluster.nodes("a", "b", "c", "d");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        NodeId leaving =
                cluster.history(queue).validate().orElseThrow().followers().get(0);

        cluster.drain(leaving.value());
        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isTrue();
        cluster.ticks(5, 100);
        assertThat(cluster.history(queue).validate().orElseThrow().members()).doesNotContain(leaving);
    }

    @Test
    void shouldNotHoldDrainingFollowerThatDied() {
        cluster.nodes("a", "b", "c", "d");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        NodeId leaving =
                cluster.history(queue).validate().orElseThrow().followers().get(0);
        cluster.drain(leaving.value());
        cluster.kill(leaving.value());

        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isTrue();
    }

    @Test
    void shouldTakeRecoveryPathForStream() {
        cluster.nodes("a", "b", "c");
        ObjectId stream = cluster.create("s", ObjectKind.STREAM, 3, MAJORITY_DURABLE);
        cluster.ticks(5, 100);
        Assignment before = cluster.history(stream).validate().orElseThrow();

        cluster.kill(before.followers().get(0).value());
        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isTrue();
    }

    @Test
    void shouldTakeRecoveryPathWhenOwnerChanges() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.logEnds.put(
                queue, java.util.Map.of(node("b"), LogPosition.of(1, 41), node("c"), LogPosition.of(1, 40)));

        cluster.kill("a");
        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isTrue();
        cluster.ticks(5, 100);
        AcceptedHistory history = cluster.history(queue);
        Assignment after = history.validate().orElseThrow();
        assertThat(after.epoch()).isEqualTo(Epoch.of(2));
        assertThat(after.owner()).isIn(node("b"), node("c"));
        assertThat(history.records())
                .filteredOn(r -> r instanceof HistoryRecord.RecoveryPointChosen chosen
                        && chosen.proposedEpoch().value() == 2)
                .containsExactly(new HistoryRecord.RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 41)));
    }

    @Test
    void shouldDropAtOnceWhenHoldIsZero() {
        cluster.nodes("a", "b", "c");
        cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, 0);
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);

        cluster.kill("c");
        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isFalse();
        cluster.ticks(5, 100);
        AcceptedHistory history = cluster.history(queue);
        Assignment after = history.validate().orElseThrow();
        assertThat(after.epoch()).isEqualTo(Epoch.of(1));
        assertThat(after.members()).containsExactly(node("a"), node("b"));
        assertThat(history.eligibleSet().members()).containsExactly(node("a"), node("b"));
        assertThat(history.recoveryThreshold()).as("R' = |E'| - W + 1").isEqualTo(1);

        cluster.restart("c", 5);
        cluster.ticks(5, 100);
        Assignment back = cluster.history(queue).validate().orElseThrow();
        assertThat(back.epoch()).as("back as a learner, no new epoch").isEqualTo(Epoch.of(1));
        assertThat(back.members()).containsExactly(node("a"), node("b"), node("c"));
        assertThat(cluster.history(queue).enrolled()).isTrue();
        assertThat(cluster.rejections).isEmpty();
    }

    @Test
    void shouldLeaveAssignmentUntouchedWhenSuspectedFollowerReturnsWithSameIncarnation() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        Incarnation incarnation = cluster.observed.node(node("c")).orElseThrow().incarnation();

        cluster.kill("c");
        assertThat(cluster.tick().held()).containsKey(queue);
        cluster.advance(500);
        cluster.restart("c", incarnation.value());
        TickResult result = cluster.tick();

        assertThat(result.held()).isEmpty();
        assertThat(writesPendingRecovery(result)).isFalse();
        assertStillServing(queue, before);
        cluster.advance(HOLD * 2);
        cluster.ticks(5, 100);
        assertStillServing(queue, before);
    }

    @Test
    void shouldWaitForTwoSealsWhenOwnerLostWhileFollowerHeld() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.kill("c");
        assertThat(cluster.tick().held()).containsKey(queue);

        cluster.kill("a");
        cluster.ticks(100, 1_000);

        AcceptedHistory history = cluster.history(queue);
        assertThat(history.recoveryThreshold()).as("E still has three members").isEqualTo(2);
        assertThat(history.pending().orElseThrow().seals()).containsOnlyKeys(node("b"));
        assertThat(history.validate()).as("never activates on one copy").isEmpty();
        assertThat(history.records())
                .noneMatch(r -> r instanceof Activated a && a.epoch().value() == 2);

        cluster.restart("c", 99);
        cluster.ticks(10, 100);
        Assignment after = cluster.history(queue).validate().orElseThrow();
        assertThat(after.epoch()).isEqualTo(Epoch.of(2));
        assertThat(cluster.history(queue).records())
                .filteredOn(r -> r instanceof HistoryRecord.SealReceived)
                .hasSizeGreaterThanOrEqualTo(2);
    }

    // A controller that took over.

    @Test
    void shouldHoldAFollowerWhoseLastRecordedHeartbeatIsOlderThanTheHold() {
        // A controller that just took over holds only the committed heartbeat times: from when each node last changed
        // status, possibly long ago (the old controller never heartbeats to itself). Its connection closing now is what
        // says when it went silent.
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        cluster.advance(HOLD + 60_000); // no heartbeat of c recorded since

        assertHeldThroughKill(queue, before, "c");
    }

    @Test
    void shouldCountALivenessExpiryAfterATakeoverFromTheTakeover() {
        NodeState stale = NodeState.live(node("c"), new Incarnation(1), 1_000, false);
        LiveSet expired = LiveSet.empty().with(stale).expire(HOLD * 3, 10_000, HOLD * 2);

        NodeState down = expired.node(node("c")).orElseThrow();
        assertThat(down.live()).isFalse();
        assertThat(down.lastHeartbeatMs())
                .as("silent since the takeover at the earliest")
                .isEqualTo(HOLD * 2);
        assertThat(new FollowerLossHold(expired, HOLD, HOLD * 2 + 20_000).isLostWithinHold(node("c")))
                .isTrue();
    }
}
