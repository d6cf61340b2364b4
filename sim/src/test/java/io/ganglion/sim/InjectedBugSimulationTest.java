package io.ganglion.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker catches a rule broken on purpose. */
class InjectedBugSimulationTest {
    /** The default random run's seed count: every injected bug must be caught within it. */
    private static final int SEEDS = 500;

    private static SimResult firstFailure(Bug bug) {
        SimConfig template = SimConfig.of(0, 3).withBug(bug);
        for (long seed = 1; seed <= SEEDS; seed++) {
            SimResult result = RandomFaults.run(seed, template);
            if (!result.ok()) {
                System.out.println("checker caught " + bug + " at " + result.reproduce());
                return result;
            }
        }
        return null;
    }

    @Test
    void shouldCatchActivationWithoutRSealsWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.FORGE_SEALS);
        assertThat(caught).as("a seed that activates on forged seals").isNotNull();
        // the forged activation itself, or what it costs: the new owner lacks a confirmed record
        assertThat(caught.violations())
                .anyMatch(violation -> violation.contains("real seals")
                        || violation.contains("a confirmed record is lost")
                        || violation.contains("lacks confirmed"));
    }

    @Test
    void shouldCatchActivationWithOneCopyWhenOwnerLostWhileFollowerHeld() {
        SimCluster cluster = new SimCluster(SimConfig.of(14, 5).withBug(Bug.FORGE_SEALS));
        ObjectId queue = cluster.createQueue("q", 3, DurabilityMode.MAJORITY_DURABLE);
        assertThat(cluster.awaitAllActivated(5_000)).isTrue();
        cluster.runFor(1_000);
        Assignment before = cluster.history(queue).validate().orElseThrow();
        NodeId controller = cluster.controller().orElseThrow();
        NodeId follower = before.followers().stream()
                .filter(node -> !node.equals(controller))
                .findFirst()
                .orElseThrow();
        cluster.crash(follower);
        cluster.runFor(2_000);
        cluster.crash(before.owner());
        cluster.runFor(10_000);

        SimResult result = cluster.finish(List.of());
        assertThat(result.violations())
                .anyMatch(violation -> violation.contains("activated with 1 real seals of epoch 1"));
    }

    @Test
    void shouldCatchASealThatDoesNotFenceWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.SEAL_WITHOUT_FENCE);
        assertThat(caught).as("a seed where the owner appends after its seal").isNotNull();
    }

    @Test
    void shouldCatchRComputedAsWMinusOneWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.R_IS_W_MINUS_ONE);
        assertThat(caught).as("a seed that activates on W - 1 seals").isNotNull();
        // a forged seal of a member whose real seal is still on its way passes the seal count; the loss is caught then
        assertThat(caught.violations())
                .anyMatch(violation -> violation.contains("real seals")
                        || violation.contains("a confirmed record is lost")
                        || violation.contains("lacks confirmed"));
    }

    @Test
    void shouldCatchConfirmingAtWMinusOneCopiesWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.CONFIRM_AT_W_MINUS_ONE);
        assertThat(caught).as("a seed that confirms on W - 1 copies").isNotNull();
        assertThat(caught.violations()).anyMatch(violation -> violation.contains("not committed"));
    }

    @Test
    void shouldCatchActivatingBeforeInstallWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.ACTIVATE_BEFORE_INSTALL);
        assertThat(caught).as("a seed whose new owner lacks confirmed records").isNotNull();
        assertThat(caught.violations())
                .anyMatch(violation -> violation.contains("lacks confirmed")
                        || violation.contains("lost")
                        || violation.contains("not committed"));
    }

    @Test
    void shouldCatchADeposedOwnerDeliveringWithoutALeaseWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.NO_OWNER_LEASE);
        assertThat(caught).as("a seed where a deposed owner delivers again").isNotNull();
        assertThat(caught.violations())
                .anyMatch(violation -> violation.contains("deposed owner still delivers")
                        || violation.contains("not marked redelivered"));
    }

    @Test
    void shouldCatchAnOwnerDeliveringOnAnExpiredLeaseWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.DELIVER_ON_EXPIRED_LEASE);
        assertThat(caught)
                .as("a seed where an owner delivers after its lease ran out")
                .isNotNull();
        assertThat(caught.violations())
                .anyMatch(violation -> violation.contains("deposed owner still delivers")
                        || violation.contains("not marked redelivered"));
    }

    @Test
    void shouldCatchADiscardInsideTheResendWindowWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.DISCARD_INSIDE_RESEND_WINDOW);
        assertThat(caught)
                .as("a seed where a re-sent publish is appended again after its settled record went")
                .isNotNull();
        assertThat(caught.violations()).anyMatch(violation -> violation.contains("not marked redelivered"));
    }

    @Test
    void shouldCatchARebuildThatDropsExpiryTimesWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.REBUILD_WITHOUT_EXPIRY);
        assertThat(caught)
                .as("a seed where a new owner hands out an inherited message after its time")
                .isNotNull();
        assertThat(RandomFaults.messageTtlMs(caught.seed())).isNotEqualTo(SimConfig.NO_TTL);
        assertThat(caught.violations()).anyMatch(violation -> violation.contains("ms, expired at"));
    }

    @Test
    void shouldCatchAnAdoptedPublishTakenAsANewOneWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.ADOPT_AS_NEW);
        assertThat(caught)
                .as("a seed where a publish the owner's own replica gave back is appended a second time")
                .isNotNull();
        assertThat(caught.violations()).anyMatch(violation -> violation.contains("not marked redelivered"));
    }

    @Test
    void shouldCatchPublishesAdmittedOutOfTheirLanesOrderWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.SEND_WITHOUT_AFTER);
        assertThat(caught)
                .as("a seed where an owner admits a publish before an earlier one of its lane it sent back")
                .isNotNull();
        assertThat(caught.violations()).anyMatch(violation -> violation.contains("out of the order published"));
    }

    @Test
    void shouldCatchADropWithoutTheOwnersProofWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.DROP_WITHOUT_PROOF);
        assertThat(caught)
                .as("a seed that drops a follower some confirmed record rests on")
                .isNotNull();
        assertThat(caught.violations())
                .anyMatch(violation -> violation.contains("a recovery may lose it")
                        || violation.contains("a confirmed record is lost")
                        || violation.contains("lacks confirmed"));
    }

    @Test
    void shouldCatchASealThatIsNotPersistedWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.SKIP_SEAL_PERSIST);
        assertThat(caught).as("a seed where a sealed replica crashes").isNotNull();
        assertThat(caught.violations()).anyMatch(violation -> violation.contains("was not persisted"));
    }

    @Test
    void shouldCatchAControllerTickingOnStepsNotCommittedWithinTheDefaultSeeds() {
        SimResult caught = firstFailure(Bug.TICK_ON_PROPOSED_STEPS);
        assertThat(caught)
                .as("a seed where a step acted on before its commit breaks a rule")
                .isNotNull();
        System.out.println("violations: " + caught.violations());
    }
}
