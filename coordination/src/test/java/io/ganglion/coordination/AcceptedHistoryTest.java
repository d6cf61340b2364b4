package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.HistoryOutcome.Accepted;
import io.ganglion.coordination.HistoryOutcome.Rejected;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.Created;
import io.ganglion.coordination.HistoryRecord.FollowerAdded;
import io.ganglion.coordination.HistoryRecord.MemberInstalled;
import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import io.ganglion.coordination.HistoryRecord.RecoveryPointChosen;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class AcceptedHistoryTest {
    private static final NodeId A = NodeId.of("a");
    private static final NodeId B = NodeId.of("b");
    private static final NodeId C = NodeId.of("c");
    private static final ObjectSpec QUEUE =
            new ObjectSpec(ObjectId.of("/", "q"), ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE);

    private static AcceptedHistory append(AcceptedHistory history, HistoryRecord record) {
        HistoryOutcome outcome = history.append(record);
        assertThat(outcome).as("append %s", record).isInstanceOf(Accepted.class);
        return ((Accepted) outcome).history();
    }

    private static String rejection(AcceptedHistory history, HistoryRecord record) {
        HistoryOutcome outcome = history.append(record);
        assertThat(outcome).as("append %s", record).isInstanceOf(Rejected.class);
        return ((Rejected) outcome).reason();
    }

    /** Epoch 1 on a, b, c, activated and enrolled. */
    private static AcceptedHistory activeOnAbc() {
        AcceptedHistory history = AcceptedHistory.created(QUEUE);
        history = append(history, new RecoveryPending(Epoch.of(1), A, List.of(B, C)));
        history = append(history, new RecoveryPointChosen(Epoch.of(1), LogPosition.EMPTY));
        for (NodeId node : List.of(A, B, C)) {
            history = append(history, new MemberInstalled(Epoch.of(1), node));
        }
        return append(history, new Activated(Epoch.of(1)));
    }

    private static SealReceived seal(NodeId node, long epoch, long offset) {
        return new SealReceived(Epoch.of(1), new SealReply(node, LogPosition.of(epoch, offset), offset));
    }

    @Test
    void shouldActivateFirstEpochWithoutSeals() {
        AcceptedHistory history = activeOnAbc();
        assertThat(history.validate()).contains(new Assignment(Epoch.of(1), A, List.of(B, C), true));
        assertThat(history.enrolled()).isTrue();
        assertThat(history.records().get(0)).isEqualTo(new Created(QUEUE));
    }

    @Test
    void shouldProjectNothingWhileRecoveryIsPendingAndKeepCommittedBesideIt() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        assertThat(history.validate()).isEmpty();
        assertThat(history.committed().orElseThrow().epoch()).isEqualTo(Epoch.of(1));
        assertThat(history.enrolled()).isFalse();
    }

    @Test
    void shouldRefuseActivationWithFewerThanRSeals() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        history = append(history, seal(B, 1, 10));
        assertThat(rejection(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 10))))
                .contains("R = 2");
        assertThat(rejection(history, new Activated(Epoch.of(2)))).contains("R = 2");
    }

    @Test
    void shouldChooseHighestSealedEndAsRecoveryPoint() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        history = append(history, seal(B, 1, 10));
        history = append(history, seal(C, 1, 12));
        assertThat(RecoveryPlanner.recoveryPoint(history)).contains(LogPosition.of(1, 12));
        assertThat(rejection(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 10))))
                .contains("not the highest");
        history = append(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 12)));
        assertThat(history.pending().orElseThrow().sourcesOf(LogPosition.of(1, 12)))
                .containsExactly(C);
    }

    @Test
    void shouldTellARecordItReflectsAlreadyFromOneThatChangesIt() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        assertThat(history.reflects(seal(B, 1, 10))).isFalse();
        history = append(history, seal(B, 1, 10));
        assertThat(history.reflects(seal(B, 1, 10)))
                .as("the same reply again: no need to propose it")
                .isTrue();
        assertThat(history.reflects(seal(C, 1, 10))).isFalse();
        history = append(history, seal(C, 1, 10));
        history = append(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 10)));
        assertThat(history.reflects(new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 10))))
                .isTrue();
        assertThat(history.reflects(new MemberInstalled(Epoch.of(2), B))).isFalse();
        history = append(history, new MemberInstalled(Epoch.of(2), B));
        assertThat(history.reflects(new MemberInstalled(Epoch.of(2), B))).isTrue();
        assertThat(history.reflects(new MemberInstalled(Epoch.of(2), A)))
                .as("a rejected record is not reflected: proposing it is the state machine's call")
                .isFalse();
    }

    @Test
    void shouldOrderLogPositionsByEpochFirst() {
        assertThat(LogPosition.of(2, 3)).isGreaterThan(LogPosition.of(1, 100));
        assertThat(LogPosition.of(1, 4)).isGreaterThan(LogPosition.of(1, 3));
        assertThat(LogPosition.EMPTY).isLessThan(LogPosition.of(1, 0));
    }

    @Test
    void shouldRefuseActivationBeforeWMembersWithTheOwnerAreInstalled() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        history = append(history, seal(B, 1, 10));
        history = append(history, seal(C, 1, 10));
        assertThat(rejection(history, new MemberInstalled(Epoch.of(2), B))).contains("before the recovery point");
        history = append(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 10)));
        assertThat(rejection(history, new MemberInstalled(Epoch.of(2), A))).contains("not a proposed member");
        history = append(history, new MemberInstalled(Epoch.of(2), C));
        assertThat(rejection(history, new Activated(Epoch.of(2)))).contains("owner b is not installed");
        history = append(history, new MemberInstalled(Epoch.of(2), B));
        history = append(history, new Activated(Epoch.of(2)));
        assertThat(history.validate()).contains(new Assignment(Epoch.of(2), B, List.of(C), true));
    }

    @Test
    void shouldRejectStaleOrForeignRecords() {
        AcceptedHistory history = activeOnAbc();
        assertThat(rejection(history, new RecoveryPending(Epoch.of(3), A, List.of(B))))
                .contains("committed epoch + 1");
        assertThat(rejection(history, seal(A, 1, 1))).contains("no recovery pending");
        assertThat(rejection(history, new Created(QUEUE))).contains("already exists");
        AcceptedHistory pending = append(history, new RecoveryPending(Epoch.of(2), A, List.of(B)));
        assertThat(rejection(
                        pending, new SealReceived(Epoch.of(1), new SealReply(NodeId.of("z"), LogPosition.EMPTY, -1))))
                .contains("not in E");
        assertThat(rejection(pending, new SealReceived(Epoch.of(0), new SealReply(A, LogPosition.EMPTY, -1))))
                .contains("committed epoch is 1");
        assertThat(rejection(pending, new RecoveryPending(Epoch.of(2), A, List.of(A))))
                .contains("two copies");
    }

    @Test
    void shouldKeepSealsAndInstallsOfRemainingMembersWhenProposalIsReplaced() {
        AcceptedHistory history = append(bcInstalledAfterLosingA(), new RecoveryPending(Epoch.of(2), B, List.of(A)));

        PendingRecovery pending = history.pending().orElseThrow();
        assertThat(pending.seals()).containsOnlyKeys(B, C);
        assertThat(pending.point()).contains(LogPosition.of(1, 5));
        assertThat(pending.installed()).containsExactly(B);
    }

    @Test
    void shouldTreatRepeatedRepliesAsNoChange() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        AcceptedHistory sealed = append(history, seal(B, 1, 5));
        assertThat(append(sealed, seal(B, 1, 5))).isSameAs(sealed);
    }

    @Test
    void shouldEnrollLateMembersOfTheActivatedEpoch() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), A, List.of(B, C)));
        history = append(history, seal(A, 1, 5));
        history = append(history, seal(B, 1, 5));
        history = append(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 5)));
        history = append(history, new MemberInstalled(Epoch.of(2), A));
        history = append(history, new MemberInstalled(Epoch.of(2), B));
        history = append(history, new Activated(Epoch.of(2)));
        assertThat(history.enrolled()).isFalse();
        assertThat(RecoveryPlanner.catchUpTargets(history)).containsExactly(C);
        history = append(history, new MemberInstalled(Epoch.of(2), C));
        assertThat(history.enrolled()).isTrue();
    }

    /** Epoch 2 proposed on b and c after a was lost, both sealed at (1, 5) and installed there, not activated. */
    private static AcceptedHistory bcInstalledAfterLosingA() {
        AcceptedHistory history = append(activeOnAbc(), new RecoveryPending(Epoch.of(2), B, List.of(C)));
        history = append(history, seal(B, 1, 5));
        history = append(history, seal(C, 1, 5));
        history = append(history, new RecoveryPointChosen(Epoch.of(2), LogPosition.of(1, 5)));
        history = append(history, new MemberInstalled(Epoch.of(2), B));
        return append(history, new MemberInstalled(Epoch.of(2), C));
    }

    /** Epoch 2 on b and c after a was lost: two members, R = 1. */
    private static AcceptedHistory activeOnBcAfterLosingA() {
        return append(bcInstalledAfterLosingA(), new Activated(Epoch.of(2)));
    }

    @Test
    void shouldAddAFollowerToTheActivatedEpochWhichCatchesUpBeforeItIsEnrolled() {
        AcceptedHistory before = activeOnBcAfterLosingA();
        assertThat(before.recoveryThreshold()).isEqualTo(1);

        AcceptedHistory history = append(before, new FollowerAdded(Epoch.of(2), A));

        assertThat(history.validate())
                .as("same epoch, still activated, a after the followers kept")
                .contains(new Assignment(Epoch.of(2), B, List.of(C, A), true));
        assertThat(history.recoveryThreshold()).as("E grew: R = 3 - 2 + 1").isEqualTo(2);
        assertThat(history.installedInCommitted()).containsExactlyInAnyOrder(B, C);
        assertThat(history.enrolled()).isFalse();
        assertThat(RecoveryPlanner.catchUpTargets(history)).containsExactly(A);
        assertThat(history.reflects(new FollowerAdded(Epoch.of(2), A))).isTrue();

        history = append(history, new MemberInstalled(Epoch.of(2), A));
        assertThat(history.enrolled()).isTrue();
    }

    @Test
    void shouldRefuseAFollowerOutsideAnActivatedEpochOrBeyondTheCopies() {
        AcceptedHistory active = activeOnBcAfterLosingA();
        assertThat(rejection(active, new FollowerAdded(Epoch.of(1), A))).contains("committed epoch is 2");
        assertThat(rejection(active, new FollowerAdded(Epoch.of(2), B))).contains("owns epoch 2");
        assertThat(rejection(
                        append(active, new RecoveryPending(Epoch.of(3), B, List.of(C, A))),
                        new FollowerAdded(Epoch.of(2), A)))
                .contains("no recovery pending");
        assertThat(rejection(AcceptedHistory.created(QUEUE), new FollowerAdded(Epoch.of(1), A)))
                .contains("activated epoch");
        assertThat(rejection(activeOnAbc(), new FollowerAdded(Epoch.of(1), NodeId.of("d"))))
                .contains("object wants 3");
    }

    @Test
    void shouldLetAFollowerLeaveTheActivatedEpochAndThenDropItFromE() {
        AcceptedHistory active = activeOnAbc();
        AcceptedHistory leaving = append(active, new HistoryRecord.FollowerLeaving(Epoch.of(1), C));

        assertThat(leaving.leavingInCommitted()).containsExactly(C);
        assertThat(leaving.eligibleSet().members())
                .as("still in E until dropped")
                .contains(C);
        assertThat(leaving.recoveryThreshold()).isEqualTo(2);
        assertThat(leaving.validate()).as("still projected, same epoch").isEqualTo(active.validate());
        assertThat(leaving.reflects(new HistoryRecord.FollowerLeaving(Epoch.of(1), C)))
                .isTrue();

        AcceptedHistory dropped = append(leaving, new HistoryRecord.FollowerDropped(Epoch.of(1), C));
        Assignment after = dropped.validate().orElseThrow();
        assertThat(after.epoch()).isEqualTo(Epoch.of(1));
        assertThat(after.members()).containsExactly(A, B);
        assertThat(dropped.leavingInCommitted()).isEmpty();
        assertThat(dropped.installedInCommitted()).containsExactlyInAnyOrder(A, B);
        assertThat(dropped.enrolled()).isTrue();
        assertThat(dropped.recoveryThreshold())
                .as("R' = |E'| - W + 1 = 2 - 2 + 1")
                .isEqualTo(1);
        assertThat(dropped.reflects(new HistoryRecord.FollowerDropped(Epoch.of(1), C)))
                .as("a reply sent again")
                .isTrue();

        AcceptedHistory back = append(dropped, new FollowerAdded(Epoch.of(1), C));
        assertThat(back.validate().orElseThrow().members()).containsExactly(A, B, C);
        assertThat(rejection(back, new HistoryRecord.FollowerDropped(Epoch.of(1), C)))
                .as("a stale drop of the follower that came back")
                .contains("not leaving");
    }

    @Test
    void shouldRefuseALeavingThatBreaksWOrADropWithoutLeaving() {
        AcceptedHistory active = activeOnAbc();
        assertThat(rejection(active, new HistoryRecord.FollowerDropped(Epoch.of(1), C)))
                .contains("not leaving");
        assertThat(rejection(active, new HistoryRecord.FollowerLeaving(Epoch.of(1), A)))
                .contains("not a follower");
        assertThat(rejection(active, new HistoryRecord.FollowerLeaving(Epoch.of(2), C)))
                .contains("committed epoch is 1");
        AcceptedHistory oneLeaving = append(active, new HistoryRecord.FollowerLeaving(Epoch.of(1), C));
        assertThat(rejection(oneLeaving, new HistoryRecord.FollowerLeaving(Epoch.of(1), B)))
                .as("a, alone, is short of W = 2")
                .contains("W = 2");
        AcceptedHistory pending = append(oneLeaving, new RecoveryPending(Epoch.of(2), B, List.of(A)));
        assertThat(rejection(pending, new HistoryRecord.FollowerDropped(Epoch.of(1), C)))
                .as("a recovery overtook the drop: the new epoch decides")
                .contains("no recovery pending");
        assertThat(pending.recoveryThreshold())
                .as("the leaving follower still counts in E")
                .isEqualTo(2);
    }

    private static final AtomicInteger GENERATED_ACTIVATIONS = new AtomicInteger();

    static LongStream seeds() {
        return Generators.seeds(400);
    }

    @AfterAll
    static void generatorShouldReachActivations() {
        assertThat(GENERATED_ACTIVATIONS.get())
                .as("generated histories that activated")
                .isGreaterThan(100);
    }

    /**
     * Random record sequences, mostly plausible, some stale. After every append: nothing projected while a recovery is
     * pending, and every accepted activation had R seals, a recovery point and W installed members with the owner.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldNeverProjectWhilePendingNorActivateWithoutProof(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int copies = random.nextInt(1, 6);
        ObjectSpec spec = new ObjectSpec(ObjectId.of("/", "q"), ObjectKind.QUEUE, copies, Generators.mode(random));
        List<NodeId> pool = Generators.nodes(copies + 2);
        AcceptedHistory history = AcceptedHistory.created(spec);
        for (int step = 0; step < 200; step++) {
            HistoryRecord record = randomRecord(random, history, pool);
            HistoryOutcome outcome = history.append(record);
            if (outcome instanceof Accepted accepted) {
                if (record instanceof Activated) {
                    GENERATED_ACTIVATIONS.incrementAndGet();
                    PendingRecovery before = history.pending().orElseThrow();
                    assertThat(before.seals().size())
                            .as("seed %d: seals at activation", seed)
                            .isGreaterThanOrEqualTo(history.recoveryThreshold());
                    assertThat(before.point()).as("seed %d", seed).isPresent();
                    assertThat(before.installed())
                            .as("seed %d", seed)
                            .contains(before.proposed().owner());
                    assertThat(before.installedMembers())
                            .as("seed %d", seed)
                            .isGreaterThanOrEqualTo(spec.writeRequirement());
                }
                history = accepted.history();
            }
            if (history.pending().isPresent()) {
                assertThat(history.validate())
                        .as("seed %d: projected while pending", seed)
                        .isEmpty();
            } else {
                history.validate()
                        .ifPresent(active -> assertThat(active.activated()).isTrue());
            }
            if (history.committed().isPresent()) {
                Assignment committed = history.committed().get();
                assertThat(committed.followers())
                        .as("seed %d: only followers leave", seed)
                        .containsAll(history.leavingInCommitted());
                if (!history.leavingInCommitted().isEmpty()) {
                    assertThat(committed.members().size()
                                    - history.leavingInCommitted().size())
                            .as("seed %d: members that stay meet W", seed)
                            .isGreaterThanOrEqualTo(spec.writeRequirement());
                }
            }
        }
    }

    private static HistoryRecord randomRecord(SplittableRandom random, AcceptedHistory history, List<NodeId> pool) {
        Epoch committed = history.committedEpoch();
        Epoch proposed = history.pending().map(p -> p.proposed().epoch()).orElse(committed.next());
        Epoch epoch = random.nextInt(10) == 0 ? Epoch.of(random.nextLong(0, 4)) : proposed;
        NodeId node = pool.get(random.nextInt(pool.size()));
        return switch (random.nextInt(9)) {
            case 0 -> {
                List<NodeId> shuffled = new ArrayList<>(pool);
                java.util.Collections.shuffle(shuffled, new java.util.Random(random.nextLong()));
                int size = random.nextInt(1, history.spec().copies() + 1);
                yield new RecoveryPending(
                        random.nextInt(5) == 0 ? epoch : committed.next(), shuffled.get(0), shuffled.subList(1, size));
            }
            case 1 ->
                new SealReceived(
                        random.nextInt(10) == 0 ? epoch : committed,
                        new SealReply(
                                node,
                                LogPosition.of(random.nextLong(0, committed.value() + 1), random.nextLong(-1, 50)),
                                0));
            case 2 ->
                new RecoveryPointChosen(
                        epoch,
                        random.nextBoolean()
                                ? history.pending()
                                        .map(PendingRecovery::highestSealedEnd)
                                        .orElse(LogPosition.EMPTY)
                                : LogPosition.of(random.nextLong(0, 3), random.nextLong(-1, 50)));
            case 3, 4 -> new MemberInstalled(random.nextInt(4) == 0 ? committed : epoch, node);
            case 5 -> new FollowerAdded(random.nextInt(4) == 0 ? epoch : committed, node);
            case 6 -> new HistoryRecord.FollowerLeaving(random.nextInt(4) == 0 ? epoch : committed, node);
            case 7 -> new HistoryRecord.FollowerDropped(random.nextInt(4) == 0 ? epoch : committed, node);
            default -> new Activated(epoch);
        };
    }
}
