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
        TickHarness.assertOneEagerFailover(cluster.tick().commands());
    }

    @Test
    void shouldActivateNewQueueInTwoTicks() {
        cluster.nodes("a", "b", "c");
        cluster.tick();
        ObjectId queue = cluster.create("q", ObjectKind.QUEUE, 3, MAJORITY_DURABLE);

        // a first epoch needs no seals: the proposal, its point and the install requests go out in one tick
        TickResult first = cluster.tick();
        assertThat(first.commands())
                .containsExactly(
                        new AppendHistory(
                                queue, new RecoveryPending(Epoch.of(1), node("a"), List.of(node("b"), node("c")))),
                        new AppendHistory(queue, new RecoveryPointChosen(Epoch.of(1), LogPosition.EMPTY)));
        assertThat(first.requests()).hasSize(3).allMatch(r -> r instanceof RecoveryRequest.Install);
        assertThat(cluster.tick().commands()).containsExactly(new AppendHistory(queue, new Activated(Epoch.of(1))));
        assertThat(cluster.history(queue).enrolled()).isTrue();
        assertThat(cluster.rejections).isEmpty();
    }

    @Test
    void shouldCountASealEndingAtThePointAsTheInstall() {
        ObjectId queue = ownerLostWithSurvivorsEndingAt(41, 41);

        assertThat(cluster.tick().requests())
                .as("no seal before the recovery's proposal is committed")
                .noneMatch(r -> r instanceof RecoveryRequest.Seal);
        TickResult first = cluster.tick();
        assertThat(first.requests())
                .as("seals go out once the proposal is committed")
                .filteredOn(r -> r instanceof RecoveryRequest.Seal)
                .hasSize(2);
        TickResult second = cluster.tick();
        assertThat(second.commands())
                .as("both seals end at the point: no install request, activation in the same round")
                .containsExactly(
                        new AppendHistory(
                                queue, new RecoveryPointChosen(Epoch.of(2), new LogPosition(Epoch.of(1), 41))),
                        new AppendHistory(queue, new HistoryRecord.MemberInstalled(Epoch.of(2), node("b"))),
                        new AppendHistory(queue, new HistoryRecord.MemberInstalled(Epoch.of(2), node("c"))),
                        new AppendHistory(queue, new Activated(Epoch.of(2))));
        assertThat(second.requests()).isEmpty();
        assertThat(cluster.history(queue).validate().orElseThrow().epoch()).isEqualTo(Epoch.of(2));
        assertThat(cluster.rejections).isEmpty();
    }

    @Test
    void shouldInstallAMemberWhoseSealEndsBelowThePoint() {
        ObjectId queue = ownerLostWithSurvivorsEndingAt(41, 39);
        cluster.tick(); // the proposal
        cluster.tick(); // the seals
        cluster.tick(); // the point

        TickResult second = cluster.tick();
        NodeId behind = node("c");
        assertThat(second.requests())
                .as("only the member behind the point gets an install")
                .singleElement()
                .isInstanceOfSatisfying(
                        RecoveryRequest.Install.class,
                        install -> assertThat(install.node()).isEqualTo(behind));
        cluster.tick();
        assertThat(cluster.history(queue).validate().orElseThrow().epoch()).isEqualTo(Epoch.of(2));
        assertThat(cluster.rejections).isEmpty();
    }

    /** A queue of 3 copies owned by a, whose followers b and c hold epoch 1 up to these offsets; a is killed. */
    private ObjectId ownerLostWithSurvivorsEndingAt(long endOfB, long endOfC) {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.logEnds.put(
                queue, java.util.Map.of(node("b"), LogPosition.of(1, endOfB), node("c"), LogPosition.of(1, endOfC)));
        cluster.kill("a");
        return queue;
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
        // the live set change and pending recoveries for the four queues a owned, then, committed, their seal requests
        assertThat(cluster.tick().requests()).noneMatch(r -> r instanceof RecoveryRequest.Seal);
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
        cluster.tick(); // the proposal
        assertThat(cluster.tick().requests())
                .filteredOn(r -> r instanceof RecoveryRequest.Seal s && s.node().equals(node("b")))
                .hasSize(1);

        long firstLoopTick = cluster.now;
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
        // The first send went out with the recovery's proposal, before the loop; c's seal moved the history, which
        // resets the backoff, so the loop's first tick sends again at once, and from there the delay doubles.
        assertThat(sendTimes).first().isEqualTo(firstLoopTick);
        assertThat(gaps).startsWith(50L, 100L, 200L, 400L, 800L, 1600L).contains(2000L);
        assertThat(gaps).allMatch(gap -> gap <= 2000);
        assertThat(cluster.history(queue).validate()).as("one seal of R = 2").isEmpty();
    }

    @Test
    void shouldNotSealARecoveryWhoseProposalIsNotCommitted() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        cluster.kill("a");
        cluster.heartbeats();

        // the proposal may be lost with the controller's leadership: a seal sent for it would fence b and c in epoch 1
        // with nothing in the log to move the queue on
        TickResult proposing = ControllerTick.run(cluster.image, cluster.observed, cluster.backoff, cluster.now);
        assertThat(proposing.commands())
                .contains(new AppendHistory(queue, new RecoveryPending(Epoch.of(2), node("b"), List.of(node("c")))));
        assertThat(proposing.requests()).noneMatch(r -> r instanceof RecoveryRequest.Seal);

        // a controller whose proposal is in flight (its speculative image holds it) does not seal either
        TickResult inFlight = ControllerTick.run(
                cluster.image, proposing.commands(), cluster.observed, proposing.backoff(), cluster.now + 100);
        assertThat(inFlight.requests()).noneMatch(r -> r instanceof RecoveryRequest.Seal);
        assertThat(inFlight.commands()).as("nothing proposed twice").doesNotContainAnyElementsOf(proposing.commands());

        // committed: the seals go out at once
        proposing.commands().forEach(cluster::apply);
        assertThat(ControllerTick.run(cluster.image, cluster.observed, inFlight.backoff(), cluster.now + 100)
                        .requests())
                .filteredOn(r -> r instanceof RecoveryRequest.Seal)
                .extracting(RecoveryRequest::node)
                .containsExactlyInAnyOrder(node("b"), node("c"));
        assertThat(cluster.rejections).isEmpty();
    }

    @Test
    void shouldNotInstallToAPointThatIsNotCommitted() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, DurabilityMode.ALL_DURABLE); // W = 3: R = 1
        LogPosition shorter = new LogPosition(Epoch.of(1), 39);
        LogPosition longer = new LogPosition(Epoch.of(1), 41);
        cluster.logEnds.put(queue, java.util.Map.of(node("b"), shorter, node("c"), longer));
        cluster.silent.add(node("c")); // c's seal reply is on its way
        cluster.kill("a");
        cluster.tick(); // the proposal
        cluster.tick(); // the seals: b's is in

        TickResult choosing = ControllerTick.run(cluster.image, cluster.observed, cluster.backoff, cluster.now);
        assertThat(choosing.commands())
                .contains(new AppendHistory(queue, new RecoveryPointChosen(Epoch.of(2), shorter)));
        assertThat(choosing.requests())
                .as("an install to (1,39) would cut c's record 41, the point if c's seal commits first")
                .noneMatch(r -> r instanceof RecoveryRequest.Install);
        TickResult inFlight = ControllerTick.run(
                cluster.image, choosing.commands(), cluster.observed, choosing.backoff(), cluster.now + 100);
        assertThat(inFlight.requests()).noneMatch(r -> r instanceof RecoveryRequest.Install);

        // c's seal commits first: the proposed point is not the highest sealed end any more
        cluster.apply(new AppendHistory(
                queue, new HistoryRecord.SealReceived(Epoch.of(1), new SealReply(node("c"), longer, 41))));
        choosing.commands().forEach(cluster::apply);
        assertThat(cluster.rejections).first().asString().contains("not the highest sealed end");
        cluster.tick(); // the point again, (1,41)
        assertThat(cluster.history(queue).pending().orElseThrow().recoveryPoint())
                .isEqualTo(longer);
        assertThat(cluster.tick().requests())
                .filteredOn(r -> r instanceof RecoveryRequest.Install)
                .isNotEmpty()
                .allSatisfy(
                        r -> assertThat(((RecoveryRequest.Install) r).point()).isEqualTo(longer));
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
    void shouldRecoverWhenOwnerRestartsAfterItsDownCommittedWithoutItsRecovery() {
        cluster.nodes("a", "b", "c");
        ObjectId queue = cluster.activeQueue("q", 3, MAJORITY_DURABLE);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        cluster.kill(before.owner().value());
        cluster.heartbeats();
        TickResult lost = ControllerTick.run(cluster.image, cluster.observed, cluster.backoff, cluster.now);
        // the leader dies with a prefix committed: the live set change, not the recovery behind it
        assertThat(lost.commands()).first().isInstanceOf(CommitLiveSet.class);
        assertThat(lost.commands().get(1)).isInstanceOf(AppendHistory.class);
        cluster.apply(lost.commands().get(0));
        assertThat(cluster.history(queue).validate()).contains(before);

        cluster.restart(before.owner().value(), 4444); // back before the next controller's first tick
        TickResult result = cluster.tick();
        assertThat(result.commands())
                .first()
                .isEqualTo(
                        new AppendHistory(queue, new RecoveryPending(Epoch.of(2), before.owner(), before.followers())));
        cluster.ticks(5, 100);
        assertThat(cluster.history(queue).validate().orElseThrow().epoch()).isEqualTo(Epoch.of(2));
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
    void shouldTakeBackAReturnedOwnerAsAFollowerOfTheRecoveredEpoch() {
        ObjectId queue = ownerLostWithSurvivorsEndingAt(41, 41);
        cluster.ticks(4, 10);
        Assignment recovered = cluster.history(queue).validate().orElseThrow();
        assertThat(recovered.members()).containsExactly(node("b"), node("c"));

        cluster.restart("a", 4343);
        TickResult returned = cluster.tick();

        assertThat(returned.commands())
                .as("a joins epoch 2 as a follower: no recovery, no seal")
                .contains(new AppendHistory(queue, new HistoryRecord.FollowerAdded(Epoch.of(2), node("a"))))
                .noneMatch(command ->
                        command instanceof AppendHistory append && append.record() instanceof RecoveryPending);
        assertThat(returned.requests())
                .as("it is asked to catch up from the owner")
                .singleElement()
                .isInstanceOfSatisfying(
                        RecoveryRequest.CatchUp.class,
                        catchUp -> assertThat(catchUp.node()).isEqualTo(node("a")));
        assertThat(cluster.history(queue).validate())
                .contains(new Assignment(Epoch.of(2), node("b"), List.of(node("c"), node("a")), true));
        assertThat(cluster.history(queue).enrolled())
                .as("installed once caught up")
                .isTrue();
        cluster.ticks(3, 10);
        assertThat(cluster.history(queue).committedEpoch()).isEqualTo(Epoch.of(2));
        assertThat(cluster.sent)
                .noneMatch(request -> request instanceof RecoveryRequest.Seal seal
                        && seal.epoch().equals(Epoch.of(2)));
        assertThat(cluster.rejections).isEmpty();
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
