package io.ganglion.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RuntimeSettings;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The seed note's cases, each on a whole simulated cluster with the checker running and a publisher (confirms) and a
 * consumer (acks, requeues) on every queue; every case ends with the workload drained and the total-queue check.
 */
class SeedNoteScenarioSimulationTest {

    private static ObjectId activeQueue(SimCluster cluster, String name) {
        ObjectId queue = cluster.createWithClients(
                name, io.ganglion.coordination.ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE, 20);
        assertThat(cluster.awaitAllActivated(5_000)).as("%s activated", name).isTrue();
        cluster.runFor(1_000);
        assertThat(cluster.history(queue).enrolled()).as("%s enrolled", name).isTrue();
        return queue;
    }

    private static Assignment active(SimCluster cluster, ObjectId queue) {
        return cluster.history(queue).validate().orElseThrow();
    }

    private static NodeId followerNotController(SimCluster cluster, ObjectId queue) {
        NodeId controller = cluster.controller().orElseThrow();
        return active(cluster, queue).followers().stream()
                .filter(follower -> !follower.equals(controller))
                .findFirst()
                .orElseThrow();
    }

    private static void assertClean(SimCluster cluster) {
        assertThat(cluster.drainAndCheck(20_000))
                .as(
                        "the workload drained: %d unconfirmed, %d undelivered, %s",
                        cluster.workload().unconfirmed(),
                        cluster.invariants().undelivered(),
                        cluster.image().objects())
                .isTrue();
        SimResult result = cluster.finish(List.of());
        assertThat(result.violations()).as(result.reproduce()).isEmpty();
    }

    @Test
    void shouldKeepAssignmentWhenFollowerLostWithinHold() {
        SimCluster cluster = new SimCluster(SimConfig.of(11, 3));
        ObjectId queue = activeQueue(cluster, "q");
        Assignment before = active(cluster, queue);
        NodeId follower = followerNotController(cluster, queue);
        long appendedBefore = cluster.broker(before.owner()).appended();
        long confirmedBefore = cluster.stats().confirmedPublishes();

        cluster.crash(follower);
        cluster.runFor(10_000);

        AcceptedHistory history = cluster.history(queue);
        assertThat(history.pending()).isEmpty();
        assertThat(history.validate()).contains(before);
        assertThat(cluster.image().liveSet().isLive(follower)).isFalse();
        assertThat(cluster.held()).containsEntry(queue, List.of(follower));
        assertThat(cluster.broker(before.owner()).appended()).isGreaterThan(appendedBefore + 100);
        assertThat(cluster.stats().confirmedPublishes())
                .as("the owner and one follower keep confirming")
                .isGreaterThan(confirmedBefore + 400);
        assertThat(cluster.stats().resent())
                .as("no publish failed or was re-sent")
                .isZero();
        assertThat(cluster.stats().unknownOutcome()).isZero();
        assertClean(cluster);
    }

    /**
     * The seed note's second step: with a hold of 0 the lost follower leaves the activated epoch at once (leaving,
     * then dropped on the owner's proof), and the spare joins it as a learner. No new epoch, so nothing fenced: no
     * publish failed or was re-sent.
     */
    @Test
    void shouldDropAtOnceWithHoldZeroWithoutANewEpoch() {
        SimCluster cluster = new SimCluster(SimConfig.of(12, 4));
        cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, 0);
        ObjectId queue = activeQueue(cluster, "q");
        Assignment before = active(cluster, queue);
        NodeId follower = followerNotController(cluster, queue);

        cluster.crash(follower);
        cluster.runFor(3_000);

        Assignment after = active(cluster, queue);
        assertThat(after.epoch()).isEqualTo(before.epoch());
        assertThat(after.owner()).isEqualTo(before.owner());
        assertThat(after.hasMember(follower)).isFalse();
        assertThat(after.members()).as("the spare joined as a learner").hasSize(3);
        assertThat(cluster.history(queue).enrolled()).isTrue();
        assertThat(cluster.stats().followersDropped()).isEqualTo(1);
        // (a publisher whose connection went through the crashed broker has unknown outcomes: the client's own loss)
        assertThat(cluster.stats().resent())
                .as("no publish failed or was re-sent")
                .isZero();
        assertClean(cluster);
    }

    @Test
    void shouldDropPastTheHoldWithoutANewEpoch() {
        SimCluster cluster = new SimCluster(SimConfig.of(13, 4));
        cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, 5_000);
        ObjectId queue = activeQueue(cluster, "q");
        Assignment before = active(cluster, queue);
        NodeId follower = followerNotController(cluster, queue);

        cluster.crash(follower);
        cluster.runFor(3_000);
        assertThat(cluster.history(queue).validate()).as("within the hold").contains(before);

        cluster.runFor(7_000);
        Assignment after = active(cluster, queue);
        assertThat(after.epoch()).isEqualTo(before.epoch());
        assertThat(after.owner()).isEqualTo(before.owner());
        assertThat(after.hasMember(follower)).isFalse();
        assertThat(after.members()).hasSize(3);
        assertThat(cluster.stats().resent()).isZero();
        assertClean(cluster);
    }

    /** A drop the old controller started (the leaving committed) is finished by the next one. */
    @Test
    void shouldFinishADropUnderANewController() {
        SimCluster cluster = new SimCluster(SimConfig.of(17, 5));
        ObjectId queue = queueWithoutTheController(cluster);
        NodeId controller = cluster.controller().orElseThrow();
        Assignment before = active(cluster, queue);
        NodeId follower = before.followers().get(0);

        cluster.crash(follower);
        for (int i = 0; i < 3_000 && cluster.history(queue).leavingInCommitted().isEmpty(); i++) {
            cluster.runFor(1);
        }
        assertThat(cluster.history(queue).leavingInCommitted())
                .as("leaving committed")
                .containsExactly(follower);
        cluster.killController();
        cluster.runFor(15_000);

        assertThat(cluster.controller()).isPresent().isNotEqualTo(java.util.Optional.of(controller));
        Assignment after = active(cluster, queue);
        assertThat(after.epoch()).isEqualTo(before.epoch());
        assertThat(after.hasMember(follower)).isFalse();
        cluster.restart(follower);
        cluster.restart(controller);
        assertClean(cluster);
    }

    @Test
    void shouldNeverActivateWithOneCopyWhenOwnerLostWhileFollowerHeld() {
        SimCluster cluster = new SimCluster(SimConfig.of(14, 5));
        ObjectId queue = activeQueue(cluster, "q");
        Assignment before = active(cluster, queue);
        NodeId follower = followerNotController(cluster, queue);

        cluster.crash(follower);
        cluster.runFor(2_000);
        assertThat(cluster.held()).containsKey(queue);
        cluster.crash(before.owner());
        cluster.runFor(20_000);

        AcceptedHistory stuck = cluster.history(queue);
        assertThat(stuck.validate())
                .as("one copy of three left: R = 2 cannot be met")
                .isEmpty();
        assertThat(stuck.committedEpoch()).isEqualTo(Epoch.of(1));
        assertThat(stuck.pending().orElseThrow().seals()).hasSizeLessThan(2);

        cluster.restart(follower);
        cluster.runFor(10_000);
        Assignment after = active(cluster, queue);
        assertThat(after.epoch()).isEqualTo(Epoch.of(2));
        assertThat(after.owner()).isNotEqualTo(before.owner());
        assertClean(cluster);
    }

    @Test
    void shouldNotStartAnEpochOnFalseSuspicion() {
        SimCluster cluster = new SimCluster(SimConfig.of(15, 3));
        ObjectId queue = activeQueue(cluster, "q");
        Assignment before = active(cluster, queue);
        NodeId follower = followerNotController(cluster, queue);
        NodeId controller = cluster.controller().orElseThrow();
        long incarnation = cluster.broker(follower).incarnation().value();

        cluster.partition(controller, follower);
        cluster.runFor(700);
        assertThat(cluster.image().liveSet().isLive(follower))
                .as("suspected by eager failover")
                .isFalse();
        assertThat(cluster.held()).containsEntry(queue, List.of(follower));
        long streamedBefore = cluster.broker(follower).replica(queue).end();

        cluster.heal(controller, follower);
        cluster.runFor(3_000);

        assertThat(cluster.image().liveSet().isLive(follower)).isTrue();
        assertThat(cluster.image()
                        .liveSet()
                        .node(follower)
                        .orElseThrow()
                        .incarnation()
                        .value())
                .isEqualTo(incarnation);
        assertThat(cluster.history(queue).validate()).contains(before);
        assertThat(cluster.held()).isEmpty();
        assertThat(cluster.broker(follower).replica(queue).end())
                .as("the follower kept streaming")
                .isGreaterThan(streamedBefore);
        assertClean(cluster);
    }

    /**
     * KNOWN GAP: an owner that restarts (new incarnation) before the controller declares it down
     * keeps its assignment, because placement and promotion look at liveness, not at incarnations. A restarted owner
     * may have lost records its followers confirmed, so the simulated broker refuses to own an epoch it held before its
     * crash, and the queue stalls in an activated epoch that nobody serves. This test pins the current behaviour; when
     * the controller starts a new epoch on an owner's incarnation change, it should assert epoch 2 instead.
     */
    @Test
    void ownerRestartedBeforeDeclaredDownRecoversWithANewEpoch() {
        SimCluster cluster = new SimCluster(SimConfig.of(17, 3));
        ObjectId queue = activeQueue(cluster, "q");
        Assignment before = active(cluster, queue);
        NodeId owner = before.owner();
        long incarnation = cluster.broker(owner).incarnation().value();
        cluster.crash(owner);
        cluster.runFor(30);
        cluster.restart(owner);
        cluster.runFor(1_000);
        long appended = cluster.broker(owner).appended();
        cluster.runFor(10_000);

        assertThat(cluster.image()
                        .liveSet()
                        .node(owner)
                        .orElseThrow()
                        .incarnation()
                        .value())
                .isNotEqualTo(incarnation);
        Assignment after = cluster.history(queue).validate().orElseThrow();
        assertThat(after.epoch()).as("the restart fenced the old epoch").isGreaterThan(before.epoch());
        NodeId servingOwner = after.owner();
        assertThat(cluster.broker(servingOwner).appended())
                .as("the queue is served again")
                .isGreaterThan(servingOwner.equals(owner) ? appended : 0);
        assertClean(cluster);
    }

    @Test
    void shouldResumePendingRecoveryUnderNewController() {
        SimCluster cluster = new SimCluster(SimConfig.of(16, 5));
        ObjectId queue = queueWithoutTheController(cluster);
        NodeId controller = cluster.controller().orElseThrow();
        NodeId owner = active(cluster, queue).owner();

        cluster.crash(owner);
        for (int i = 0; i < 300 && cluster.history(queue).pending().isEmpty(); i++) {
            cluster.runFor(5);
        }
        assertThat(cluster.history(queue).pending()).as("recovery pending").isPresent();
        Epoch pendingEpoch = cluster.history(queue).pending().get().proposed().epoch();
        assertThat(cluster.history(queue).validate()).isEmpty();
        cluster.killController();
        cluster.runFor(15_000);

        assertThat(cluster.controller()).isPresent().isNotEqualTo(java.util.Optional.of(controller));
        // The pending epoch was activated by the new controller. (If the killed controller was the proposed
        // replacement, a later epoch may follow it.)
        assertThat(cluster.history(queue).records())
                .contains(new io.ganglion.coordination.HistoryRecord.Activated(pendingEpoch));
        Assignment after = active(cluster, queue);
        assertThat(after.epoch()).isGreaterThanOrEqualTo(pendingEpoch);
        assertThat(after.hasMember(owner)).isFalse();
        // another queue may have lost two of its three copies to the two kills: it waits for one to come back
        cluster.restart(owner);
        cluster.restart(controller);
        assertClean(cluster);
    }

    /**
     * Five queues of three copies with clients on the five brokers of {@code cluster}, the hold at 0, all active and
     * running a second, and one of them without a copy on the controller's broker: when placement put a copy of each
     * on it, more queues are declared, up to ten, until one has none there.
     */
    private static ObjectId queueWithoutTheController(SimCluster cluster) {
        cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, 0);
        List<ObjectId> queues = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            queues.add(cluster.createWithClients(
                    "q" + i, io.ganglion.coordination.ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE, 40));
            if (queues.size() < 5) {
                continue;
            }
            assertThat(cluster.awaitAllActivated(5_000)).isTrue();
            cluster.runFor(1_000);
            NodeId controller = cluster.controller().orElseThrow();
            java.util.Optional<ObjectId> without = queues.stream()
                    .filter(q -> !active(cluster, q).hasMember(controller))
                    .findFirst();
            if (without.isPresent()) {
                return without.get();
            }
        }
        throw new AssertionError("every queue has a copy on the controller's broker");
    }
}
