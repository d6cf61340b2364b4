package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.ReplicaEffect.Append;
import io.ganglion.replication.ReplicaEffect.Discard;
import io.ganglion.replication.ReplicaEffect.PersistSeal;
import io.ganglion.replication.ReplicaEffect.ReadLog;
import io.ganglion.replication.ReplicaEffect.ReplyInstalled;
import io.ganglion.replication.ReplicaEffect.ReplySealed;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The owner, follower and learner state machines, and the seal and install steps, on a hand-stepped harness. */
class ReplicaTest {

    /** Owner a is lost: b and c seal epoch 1, and epoch 2 is b's, c its follower (both installed by their seals). */
    private static Assignment ownerLostToB(Harness harness) {
        harness.down.add(NodeId.of("a"));
        harness.seal("b", 1);
        harness.seal("c", 1);
        harness.settle();
        return new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("c")), true);
    }

    private static Harness threeCopies() {
        Harness harness = new Harness("a", "b", "c");
        harness.activate(1, 2, "a", "b", "c");
        harness.settle();
        return harness;
    }

    /**
     * A publish that comes before the epoch start is durable is held, not refused (a refused one came straight back
     * from the broker that forwarded it, thousands of times in a failover), and admitted in order once it is.
     */
    @Test
    void shouldWriteAnEpochStartRecordAndAdmitOnlyOnceItIsDurable() {
        Harness harness = new Harness("a", "b", "c");
        harness.activate(1, 2, "a", "b", "c");
        Harness.Node owner = harness.node("a");
        assertThat(owner.log).containsExactly(new Record.EpochStart(Epoch.of(1), 0));
        harness.publish("a", 1, 1, 1);
        harness.publish("a", 1, 1, 2);
        assertThat(owner.refusals()).as("held until the epoch start is durable").isEmpty();
        assertThat(owner.log).as("nothing admitted before it").hasSize(1);
        assertThat(harness.inFlightRecords())
                .as("only the epoch start streamed before it is durable, to both installed followers")
                .containsExactly(new Record.EpochStart(Epoch.of(1), 0), new Record.EpochStart(Epoch.of(1), 0));
        owner.sync();
        assertThat(owner.log)
                .extracting(Record::offset)
                .as("both admitted in order once it is")
                .containsExactly(0L, 1L, 2L);
        harness.publish("a", 1, 1, 3);
        assertThat(owner.log).hasSize(4);
        harness.settle();
        assertThat(owner.confirms())
                .extracting(ReplicaEffect.Confirm::id)
                .containsExactly(new PublishId(1, 1), new PublishId(1, 2), new PublishId(1, 3));
    }

    /** Held publishes of an owner deposed before its start are never admitted: its host refuses them with the role. */
    @Test
    void shouldNeverAdmitWhatItHeldWhenSealedBeforeItsStart() {
        Harness harness = new Harness("a", "b", "c");
        harness.activate(1, 2, "a", "b", "c");
        Harness.Node owner = harness.node("a");
        harness.publish("a", 1, 1, 1);
        harness.seal("a", 1);
        owner.sync();
        assertThat(owner.log).as("only the epoch start").hasSize(1);
        assertThat(owner.refusals())
                .singleElement()
                .satisfies(r -> assertThat(r.reason()).isEqualTo("sealed"));
    }

    @Test
    void shouldConfirmOnlyWhenWCopiesAreDurable() {
        Harness harness = threeCopies();
        Harness.Node owner = harness.node("a");
        harness.publish("a", 1, 1, 1);
        owner.sync();
        assertThat(owner.confirms()).as("the owner alone is one copy of W = 2").isEmpty();
        harness.deliverAll();
        harness.node("b").sync();
        assertThat(owner.confirms()).isEmpty();
        harness.deliverAll();
        assertThat(owner.confirms()).containsExactly(new ReplicaEffect.Confirm(new PublishId(1, 1), 1));
        assertThat(owner.delivered()).isEqualTo(1);
    }

    @Test
    void shouldNotWaitForAHeldFollower() {
        Harness harness = threeCopies();
        harness.down.add(NodeId.of("c")); // lost: never reports
        harness.publishMany("a", 1, 1, 10);
        harness.settle();
        assertThat(harness.node("a").confirms()).hasSize(10);
        assertThat(harness.node("c").log).hasSize(1);
    }

    /**
     * A follower leaving the epoch (HistoryRecord.FollowerLeaving) stops counting at once, and the owner answers the
     * controller's drop only once W members without it are durable at or past what it confirmed with it: records 1-3
     * were confirmed on a and c while b lagged, so dropping c from E before b held them would leave a recovery that
     * seals only b without them.
     */
    @Test
    void shouldStopCountingALeavingFollowerAndAnswerTheDropOnlyOnceTheOthersHoldWhatWasConfirmed() {
        Harness harness = threeCopies();
        Harness.Node owner = harness.node("a");
        for (int i = 1; i <= 3; i++) {
            harness.publish("a", 1, 1, i);
        }
        owner.sync();
        harness.deliverAll();
        harness.node("c").sync(); // b received the records but has not forced them
        harness.deliverAll();
        assertThat(owner.confirms()).as("confirmed on a and c").hasSize(3);

        Assignment assignment =
                new Assignment(Epoch.of(1), NodeId.of("a"), List.of(NodeId.of("b"), NodeId.of("c")), true);
        Set<NodeId> all = Set.copyOf(assignment.members());
        owner.on(new ReplicaEvent.Assigned(assignment, 2, all, Set.of(NodeId.of("c")), 60_000));
        owner.on(new ReplicaEvent.DropRequested(Harness.CONTROLLER, Epoch.of(1), NodeId.of("c")));
        harness.publish("a", 1, 1, 4);
        owner.sync();
        harness.deliverAll();
        harness.node("c").sync();
        harness.deliverAll();
        assertThat(owner.confirms()).as("c no longer counts: 4 waits for b").hasSize(3);
        assertThat(owner.effectsOf(ReplicaEffect.ReplyDropped.class))
                .as("b does not hold 1-3 durably yet")
                .isEmpty();

        harness.node("b").sync();
        harness.deliverAll();
        assertThat(owner.confirms()).hasSize(4);
        assertThat(owner.effectsOf(ReplicaEffect.ReplyDropped.class))
                .containsExactly(new ReplicaEffect.ReplyDropped(Harness.CONTROLLER, Epoch.of(1), NodeId.of("c")));

        Assignment dropped = new Assignment(Epoch.of(1), NodeId.of("a"), List.of(NodeId.of("b")), true);
        owner.on(new ReplicaEvent.Assigned(dropped, 2, Set.copyOf(dropped.members()), Set.of(), 60_000));
        assertThat(owner.replica.followerDurable()).containsOnlyKeys(NodeId.of("b"));
        assertThat(owner.replica.owning()).contains(Epoch.of(1));
        harness.publish("a", 1, 1, 5);
        harness.settle();
        assertThat(owner.confirms()).as("a and b confirm on, nothing fenced").hasSize(5);
        assertThat(owner.refusals()).isEmpty();
    }

    /** A drop asked for before the owner's view shows the follower leaving waits for the view; one it never counted not. */
    @Test
    void shouldAnswerADropOnlyForAFollowerItsViewShowsLeaving() {
        Harness harness = threeCopies();
        Harness.Node owner = harness.node("a");
        harness.publish("a", 1, 1, 1);
        harness.settle();
        owner.on(new ReplicaEvent.DropRequested(Harness.CONTROLLER, Epoch.of(1), NodeId.of("c")));
        assertThat(owner.effectsOf(ReplicaEffect.ReplyDropped.class))
                .as("c still counts here")
                .isEmpty();
        owner.on(new ReplicaEvent.DropRequested(Harness.CONTROLLER, Epoch.of(2), NodeId.of("c")));
        assertThat(owner.effectsOf(ReplicaEffect.ReplyDropped.class))
                .as("not this owner's epoch")
                .isEmpty();

        Assignment assignment =
                new Assignment(Epoch.of(1), NodeId.of("a"), List.of(NodeId.of("b"), NodeId.of("c")), true);
        owner.on(new ReplicaEvent.Assigned(
                assignment, 2, Set.copyOf(assignment.members()), Set.of(NodeId.of("c")), 60_000));
        assertThat(owner.effectsOf(ReplicaEffect.ReplyDropped.class))
                .as("b holds everything durably already")
                .containsExactly(new ReplicaEffect.ReplyDropped(Harness.CONTROLLER, Epoch.of(1), NodeId.of("c")));
    }

    @Test
    void shouldNeverConfirmOnFewerThanWCopies() {
        Harness harness = new Harness("a", "b", "c");
        harness.activate(1, 3, "a", "b", "c");
        harness.settle();
        harness.down.add(NodeId.of("c"));
        harness.publish("a", 1, 1, 1);
        harness.settle();
        assertThat(harness.node("a").confirms()).isEmpty();
        assertThat(harness.node("a").delivered()).isEqualTo(0);
    }

    @Test
    void shouldConfirmAReSentPublishOnceWithoutAppendingItAgain() {
        Harness harness = threeCopies();
        Harness.Node owner = harness.node("a");
        harness.publish("a", 1, 9, 1);
        harness.publish("a", 1, 9, 1); // re-sent before its confirm
        harness.settle();
        harness.publish("a", 1, 9, 1); // re-sent after its confirm (the confirm was lost)
        assertThat(owner.log).hasSize(2);
        assertThat(owner.confirms()).hasSize(2).allMatch(c -> c.offset() == 1);
    }

    @Test
    void shouldFindAForwardedPublishInTheRecoveredLog() {
        Harness harness = threeCopies();
        harness.publish("a", 1, 9, 1);
        harness.publish("a", 1, 9, 2);
        harness.deliverAll();
        harness.node("b").sync();
        // the owner dies before confirming; b becomes the owner of epoch 2 holding both publishes
        Assignment second = ownerLostToB(harness);
        harness.assign(second, 2, Set.copyOf(second.members()));
        harness.settle();
        Harness.Node owner = harness.node("b");
        harness.publish("b", 2, 9, 1);
        harness.publish("b", 2, 9, 2);
        harness.publish("b", 2, 9, 3);
        harness.settle();
        assertThat(owner.log.stream().filter(Record.Message.class::isInstance)).hasSize(3);
        assertThat(owner.confirms()).extracting(c -> c.id().sequence()).containsExactlyInAnyOrder(1L, 2L, 3L);
        assertThat(owner.refusals()).isEmpty();
    }

    @Test
    void shouldRefuseAPublishAdmittedUnderAnotherEpoch() {
        Harness harness = threeCopies();
        harness.publish("a", 2, 1, 1);
        harness.publish("b", 1, 1, 2);
        assertThat(harness.node("a").refusals()).hasSize(1);
        assertThat(harness.node("b").refusals())
                .singleElement()
                .satisfies(r -> assertThat(r.reason()).isEqualTo("not the owner"));
    }

    @Test
    void shouldPersistTheSealBeforeReplyingAndRefuseAppendsAfter() {
        Harness harness = threeCopies();
        Harness.Node follower = harness.node("b");
        harness.seal("b", 1);
        assertThat(follower.effectsOf(PersistSeal.class)).containsExactly(new PersistSeal(Epoch.of(1)));
        assertThat(follower.effectsOf(ReplySealed.class))
                .as("not before the persist")
                .isEmpty();
        follower.sync();
        assertThat(follower.effectsOf(ReplySealed.class)).singleElement().satisfies(reply -> {
            assertThat(reply.reply().logEnd()).isEqualTo(LogPosition.of(1, 0));
            assertThat(reply.reply().durableOffset()).isZero();
        });
        harness.publish("a", 1, 1, 1);
        harness.settle();
        assertThat(follower.log).as("sealed: refuses epoch 1").hasSize(1);
        assertThat(harness.node("c").log).hasSize(2);
        assertThat(follower.sealed).isEqualTo(1);

        follower.restart(2);
        assertThat(follower.replica.sealedEpoch())
                .as("the seal survives a restart")
                .isEqualTo(Epoch.of(1));
    }

    /**
     * The controller asks again while a seal is on its way (2-3 requests to one replica in a failover bench trial):
     * one persist answers every request for its epoch, and a request after it is answered at once.
     */
    @Test
    void shouldPersistASealOnceHoweverOftenItIsAskedFor() {
        Harness harness = threeCopies();
        Harness.Node follower = harness.node("b");
        harness.seal("b", 1);
        harness.seal("b", 1);
        assertThat(follower.effectsOf(PersistSeal.class)).containsExactly(new PersistSeal(Epoch.of(1)));
        assertThat(follower.effectsOf(ReplySealed.class)).isEmpty();
        follower.sync();
        assertThat(follower.effectsOf(ReplySealed.class)).hasSize(2);
        harness.seal("b", 1);
        assertThat(follower.effectsOf(PersistSeal.class))
                .as("persisted already")
                .hasSize(1);
        assertThat(follower.effectsOf(ReplySealed.class))
                .hasSize(3)
                .allSatisfy(reply -> assertThat(reply.reply().logEnd()).isEqualTo(LogPosition.of(1, 0)));
        harness.seal("b", 2);
        assertThat(follower.effectsOf(PersistSeal.class))
                .as("a later epoch is persisted again")
                .containsExactly(new PersistSeal(Epoch.of(1)), new PersistSeal(Epoch.of(2)));
    }

    @Test
    void shouldStopAdmittingOnceSealed() {
        Harness harness = threeCopies();
        harness.seal("a", 1);
        harness.publish("a", 1, 1, 1);
        assertThat(harness.node("a").refusals())
                .singleElement()
                .satisfies(r -> assertThat(r.reason()).isEqualTo("sealed"));
        assertThat(harness.node("a").replica.owning()).isEmpty();
    }

    @Test
    void shouldTruncateDivergentSuffixOnInstall() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 5);
        harness.settle(); // everyone holds 1@0..5
        harness.down.add(NodeId.of("c"));
        for (int i = 5; i < 9; i++) {
            harness.publish("a", 1, 1, i); // a and b get 6..9, c does not
        }
        harness.settle();
        // epoch 2 from a and b's seals... but suppose c became owner of epoch 2 with point (1,5) and wrote more
        Harness.Node c = harness.node("c");
        harness.down.clear();
        c.replica = Replica.start(
                Harness.OBJECT,
                c.id,
                new Incarnation(5),
                harness.config,
                new RecoveredLog(0, 5, EpochHistory.of(1, 0), Epoch.NONE, java.util.Map.of()));
        c.durable = 5;
        // c's log: 1@0..5, now 2@6..7 (written under an epoch 2 that was never confirmed)
        c.log.add(new Record.EpochStart(Epoch.of(2), 6));
        c.log.add(new Record.Message(Epoch.of(2), 7, new PublishId(3, 3), java.nio.ByteBuffer.allocate(1)));
        c.durable = 7;
        c.replica = Replica.start(
                Harness.OBJECT,
                c.id,
                new Incarnation(6),
                harness.config,
                new RecoveredLog(0, 7, EpochHistory.of(1, 0, 2, 6), Epoch.NONE, java.util.Map.of()));
        // recovery of epoch 3 chose (1, 9) from a and b; c installs from b
        harness.install("c", 3, LogPosition.of(1, 9), "b");
        harness.settle();
        assertThat(Harness.epochs(c.log))
                .hasSize(10)
                .allSatisfy((offset, epoch) -> assertThat(epoch).isEqualTo(1));
        assertThat(c.log).isEqualTo(harness.node("b").log);
        assertThat(c.effectsOf(ReplyInstalled.class))
                .containsExactly(new ReplyInstalled(Harness.CONTROLLER, Epoch.of(3)));
        assertThat(c.replica.sealedEpoch())
                .as("installing epoch 3 seals epoch 2")
                .isEqualTo(Epoch.of(2));
    }

    @Test
    void shouldCutWhatLiesBeyondTheRecoveryPointOnInstall() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 4);
        harness.settle();
        harness.install("a", 2, LogPosition.of(1, 2), "b");
        harness.node("a").sync();
        assertThat(harness.node("a").log).hasSize(3);
        assertThat(harness.node("a").effectsOf(ReplyInstalled.class)).hasSize(1);
    }

    /**
     * Seeds 1048 and 1581 of the simulator: an install request for epoch 2 reached a member after epoch 2 was activated
     * and it already followed the new owner. The install ran beside the follower role: the owner streamed epoch 2 into
     * the log, the follower reported it durable and the owner counted it, then the answer to the install's first Fetch
     * (computed for the log as it was, empty or behind) told it to truncate from there, and the finished copy cut
     * everything past the recovery point, epoch 2 included.
     */
    @Test
    void shouldNotCutWhatItFollowedWhenAnInstallOfThatEpochArrivesLate() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 4);
        harness.settle(); // everyone holds 1@0..4
        harness.down.add(NodeId.of("c"));
        for (int i = 4; i < 8; i++) {
            harness.publish("a", 1, 1, i);
        }
        harness.settle(); // a and b hold 1@0..8, c 1@0..4
        harness.down.clear();
        // recovery of epoch 2 at (1, 8): a and b install (they hold the point), c is unreachable meanwhile
        harness.install("a", 2, LogPosition.of(1, 8), "b");
        harness.install("b", 2, LogPosition.of(1, 8), "a");
        harness.settle();
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("a"), NodeId.of("c")), true);
        harness.assign(second, 2, Set.of(NodeId.of("a"), NodeId.of("b")));
        Harness.Node c = harness.node("c");
        // the install request to c was slow: it arrives now that c follows epoch 2 as a learner
        harness.install("c", 2, LogPosition.of(1, 8), "a");
        java.util.function.Predicate<PeerMessage> installTraffic =
                m -> m instanceof PeerMessage.Fetch || m instanceof PeerMessage.FetchReply;
        for (int round = 0; round < 10; round++) {
            harness.deliverAllHolding(installTraffic);
            harness.nodes.values().forEach(Harness.Node::sync);
        }
        harness.publishMany("b", 2, 2, 3);
        for (int round = 0; round < 10; round++) {
            harness.deliverAllHolding(installTraffic);
            harness.nodes.values().forEach(Harness.Node::sync);
        }
        Harness.Node owner = harness.node("b");
        assertThat(c.log).as("c followed the owner into epoch 2").isEqualTo(owner.log);
        long reported = c.durable;
        assertThat(reported).isEqualTo(12);
        harness.settle(); // whatever the install sent travels now
        assertThat(c.effectsOf(ReplicaEffect.Truncate.class))
                .as("nothing c reported durable in epoch 2 is cut")
                .isEmpty();
        assertThat(c.log).isEqualTo(owner.log);
        assertThat(c.durable).isEqualTo(reported);
        assertThat(c.effectsOf(ReplyInstalled.class))
                .as("answered like a catch-up: c durably holds the epoch's start record from its owner")
                .containsExactly(new ReplyInstalled(Harness.CONTROLLER, Epoch.of(2)));
    }

    /**
     * An installer asks a source, hears nothing within {@code installRetryMs}, asks another and copies from it; then
     * the first source's answer arrives, computed for the log as it was when asked. Its {@code truncateFrom} is stale:
     * the installer cuts only where a record truly differs from its own (one epoch has one log: a record is known by
     * its epoch and offset), never records it holds already.
     */
    @Test
    void shouldNotCutRecordsItHoldsWhenAnInstallAnswerIsStale() {
        ReplicationConfig config =
                new ReplicationConfig(256, 1 << 20, 2, 200, 100, 64, 500, 400, 100, Replica.PUBLISH_INDEX_CAPACITY);
        Harness harness = new Harness(config, "a", "b", "c");
        harness.activate(1, 2, "a", "b", "c");
        harness.settle();
        harness.down.add(NodeId.of("c"));
        harness.publishMany("a", 1, 1, 8);
        harness.settle(); // a and b hold 1@0..8, c 1@0
        harness.down.clear();
        Harness.Node c = harness.node("c");
        harness.install("c", 2, LogPosition.of(1, 8), "a", "b");
        harness.deliverOne(); // the Fetch for c's empty log reaches a; its answer travels next
        harness.deliverOne(); // a's answer (records 1..2, fetchRecords = 2) reaches c, which asks a again
        harness.deliverOne(); // a answers 3..4
        harness.deliverOne();
        assertThat(c.log).hasSize(5);
        c.effects.clear();
        // a late answer to a Fetch c sent when its log ended at 0: truncate from 1, records 1..2
        c.on(new ReplicaEvent.Received(
                NodeId.of("a"),
                new PeerMessage.FetchReply(Epoch.of(2), 1, harness.node("a").log.subList(1, 3))));
        assertThat(c.effectsOf(ReplicaEffect.Truncate.class))
                .as("records 1..2 are the ones c holds: nothing to cut")
                .isEmpty();
        harness.settle();
        assertThat(c.log).isEqualTo(harness.node("a").log);
        assertThat(c.effectsOf(ReplicaEffect.Truncate.class)).isEmpty();
        assertThat(c.effectsOf(ReplyInstalled.class))
                .containsExactly(new ReplyInstalled(Harness.CONTROLLER, Epoch.of(2)));
    }

    /**
     * The owner tells a follower with a divergent suffix to truncate, but a second report from before the truncation
     * arrives and the owner tells it again. Meanwhile the follower truncated, took the owner's records, reported them
     * durable, and the owner counted them. The second truncation is stale: the follower never cuts records of the
     * epoch it follows (only the owner writes them, so they are in its log) nor records identical to the ones the
     * message carries.
     */
    @Test
    void shouldIgnoreAStaleTruncationFromTheOwner() {
        Harness harness = new Harness("a", "b");
        Harness.Node a = harness.node("a");
        Harness.Node b = harness.node("b");
        java.nio.ByteBuffer body = java.nio.ByteBuffer.allocate(1);
        a.log.add(new Record.EpochStart(Epoch.of(1), 0));
        a.log.add(new Record.Message(Epoch.of(1), 1, new PublishId(1, 1), body));
        a.log.add(new Record.Message(Epoch.of(1), 2, new PublishId(1, 2), body));
        b.log.addAll(a.log);
        // b also holds 2@3..4, written by an owner of epoch 2 that never confirmed them
        b.log.add(new Record.EpochStart(Epoch.of(2), 3));
        b.log.add(new Record.Message(Epoch.of(2), 4, new PublishId(2, 1), body));
        a.durable = 2;
        b.durable = 4;
        a.replica = Replica.start(
                Harness.OBJECT,
                a.id,
                new Incarnation(1),
                harness.config,
                new RecoveredLog(0, 2, EpochHistory.of(1, 0), Epoch.of(2), java.util.Map.of()));
        b.replica = Replica.start(
                Harness.OBJECT,
                b.id,
                new Incarnation(1),
                harness.config,
                new RecoveredLog(0, 4, EpochHistory.of(1, 0, 2, 3), Epoch.of(2), java.util.Map.of()));
        harness.activate(3, 2, "a", "b"); // a writes 3@3; b reports its log
        a.sync();
        harness.tick(100); // b reports again before it hears from a
        java.util.concurrent.atomic.AtomicInteger truncations = new java.util.concurrent.atomic.AtomicInteger();
        java.util.function.Predicate<PeerMessage> secondTruncation =
                m -> m instanceof PeerMessage.Replicate r && r.truncateFrom() >= 0 && truncations.incrementAndGet() > 1;
        for (int round = 0; round < 10; round++) {
            harness.deliverAllHolding(secondTruncation);
            harness.nodes.values().forEach(Harness.Node::sync);
        }
        harness.publishMany("a", 3, 3, 3);
        for (int round = 0; round < 10; round++) {
            harness.deliverAllHolding(secondTruncation);
            harness.nodes.values().forEach(Harness.Node::sync);
        }
        assertThat(truncations.get()).as("the owner told b to truncate twice").isGreaterThan(1);
        assertThat(b.log).isEqualTo(a.log);
        assertThat(a.replica.commitOffset()).as("b's copy of 3@3..6 counted").isEqualTo(6);
        b.effects.clear();
        harness.settle(); // the second truncation arrives
        assertThat(b.effectsOf(ReplicaEffect.Truncate.class)).isEmpty();
        assertThat(b.durable).isEqualTo(6);
        assertThat(b.log).isEqualTo(a.log);
    }

    /**
     * Seed 458 of the simulator: a deposed owner, not sealed, follows the new owner with a divergent suffix of its own
     * epoch. The Replicate that tells it to truncate is lost, and the owner streams its next records as to a follower
     * that truncated. The follower skips those at offsets it holds and appends the first past its end: a record of the
     * new epoch after its divergent suffix, a second log of that epoch, which it then never cuts (a truncation that
     * would cut records of the epoch it follows is stale). After a truncation the owner sends that follower nothing
     * more until it reports again.
     */
    @Test
    void shouldNotStreamPastATruncationTheFollowerMayNotHaveApplied() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 3);
        harness.settle(); // everyone holds 1@0..3
        Harness.Node a = harness.node("a");
        harness.cut.add(a.id);
        for (int i = 3; i < 7; i++) {
            harness.publish("a", 1, 1, i); // only a holds 1@4..7
        }
        a.sync();
        harness.dropAll();
        harness.cut.clear();
        harness.seal("b", 1);
        harness.seal("c", 1);
        harness.settle();
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("c"), a.id), true);
        harness.assign(second, 2, Set.of(NodeId.of("b"), NodeId.of("c"))); // b writes 2@4; a reports 1@0..7
        harness.node("b").sync();
        for (int round = 0; round < 10; round++) {
            harness.deliverAllDropping(m -> m instanceof PeerMessage.Replicate r && r.truncateFrom() >= 0);
            harness.nodes.values().forEach(Harness.Node::sync);
        }
        assertThat(a.effectsOf(ReplicaEffect.Truncate.class))
                .as("every truncation was lost")
                .isEmpty();
        harness.publishMany("b", 2, 2, 6); // 2@5..10
        harness.settle();
        assertThat(a.log.stream().filter(r -> r.epoch().equals(Epoch.of(2))).toList())
                .as("no record of epoch 2 after a's divergent suffix")
                .isEmpty();
        harness.tick(100); // a reports again
        harness.settle();
        assertThat(a.log).isEqualTo(harness.node("b").log);
        assertThat(harness.node("b").replica.commitOffset()).isEqualTo(10);
    }

    @Test
    void shouldKeepASlowFollowerWithinTheWindowAndFeedItFromTheLog() {
        ReplicationConfig config =
                new ReplicationConfig(4, 1 << 20, 3, 200, 100, 2, 500, 400, 100, Replica.PUBLISH_INDEX_CAPACITY);
        Harness harness = new Harness(config, "a", "b");
        harness.activate(1, 1, "a", "b");
        harness.settle();
        long sendsBefore = harness.sends;
        harness.publishMany("a", 1, 1, 20);
        assertThat(harness.sends - sendsBefore).as("a window of 4 records").isEqualTo(4);
        assertThat(harness.node("a").confirms()).isEmpty();
        harness.node("a").sync();
        assertThat(harness.node("a").confirms())
                .as("W = 1 does not wait for the follower")
                .hasSize(20);
        harness.settle();
        assertThat(harness.node("b").log).isEqualTo(harness.node("a").log);
        assertThat(harness.node("a").effectsOf(ReadLog.class))
                .as("fed by reads of at most 3")
                .isNotEmpty()
                .allMatch(read -> read.to() - read.from() < 3);
    }

    @Test
    void shouldStreamAPublisherWindowOfRecordsLiveWithTheDefaultTuning() {
        // PerfTest -c 1000: 1,000 publishes waiting for their confirms and as many acks, 1 KB bodies: 2,000 records
        Harness harness = new Harness(ReplicationConfig.defaults(), "a", "b", "c");
        harness.activate(1, 2, "a", "b", "c");
        harness.settle();
        long sendsBefore = harness.sends;
        int readsBefore = harness.node("a").effectsOf(ReadLog.class).size(); // the epoch's first record, fed at start
        for (int i = 0; i < 2_000; i++) {
            harness.node("a")
                    .on(new ReplicaEvent.PublishAdmitted(new PublishId(1, i), Epoch.of(1), ByteBuffer.allocate(1_000)));
        }
        assertThat(harness.sends - sendsBefore)
                .as("every record streamed to both followers before either reported")
                .isEqualTo(2 * 2_000);
        harness.settle();
        assertThat(harness.node("a").confirms()).hasSize(2_000);
        assertThat(harness.node("a").effectsOf(ReadLog.class))
                .as("no follower fell behind the window")
                .hasSize(readsBefore);
    }

    @Test
    void shouldBoundBytesInFlightToASlowFollower() {
        ReplicationConfig config =
                new ReplicationConfig(1000, 200, 100, 200, 100, 2, 500, 400, 100, Replica.PUBLISH_INDEX_CAPACITY);
        Harness harness = new Harness(config, "a", "b");
        harness.activate(1, 2, "a", "b");
        harness.settle();
        long sendsBefore = harness.sends;
        harness.publishMany("a", 1, 1, 20); // 42 bytes each
        assertThat(harness.sends - sendsBefore).isEqualTo(4);
        harness.settle();
        assertThat(harness.node("a").confirms()).hasSize(20);
    }

    @Test
    void shouldResumeASameIncarnationFollowerFromWhereItStopped() {
        Harness harness = threeCopies();
        harness.down.add(NodeId.of("c"));
        harness.publishMany("a", 1, 1, 6);
        harness.settle();
        harness.down.clear(); // the network healed; c kept its process
        harness.tick(250);
        harness.settle();
        assertThat(harness.node("c").log).isEqualTo(harness.node("a").log);
        assertThat(harness.node("a").replica.learners()).isEmpty();
    }

    @Test
    void shouldRejoinARestartedFollowerAsALearnerAndPromoteItWhenCaughtUp() {
        ReplicationConfig config =
                new ReplicationConfig(256, 1 << 20, 4, 200, 100, 2, 500, 400, 100, Replica.PUBLISH_INDEX_CAPACITY);
        Harness harness = new Harness(config, "a", "b", "c");
        harness.activate(1, 2, "a", "b", "c");
        harness.settle();
        Harness.Node c = harness.node("c");
        harness.down.add(c.id);
        harness.publishMany("a", 1, 1, 30);
        harness.settle();
        c.restart(99);
        c.on(new ReplicaEvent.Assigned(
                new Assignment(Epoch.of(1), NodeId.of("a"), List.of(NodeId.of("b"), c.id), true),
                2,
                Set.of(NodeId.of("a"), NodeId.of("b"), c.id),
                60_000));
        harness.down.clear();
        harness.deliverAll();
        assertThat(harness.node("a").replica.learners())
                .as("suspended on its new incarnation")
                .containsExactly(c.id);
        harness.settle();
        harness.tick(150);
        harness.settle();
        assertThat(c.log).isEqualTo(harness.node("a").log);
        assertThat(harness.node("a").replica.learners())
                .as("promoted back into its slot")
                .isEmpty();
    }

    @Test
    void shouldNotCountALearnerTowardsWUntilItCaughtUp() {
        Harness harness = threeCopies();
        Harness.Node c = harness.node("c");
        harness.down.add(c.id);
        harness.publishMany("a", 1, 1, 100);
        harness.settle();
        Harness.Node owner = harness.node("a");
        assertThat(owner.confirms()).hasSize(100);
        c.restart(42);
        harness.down.clear();
        harness.down.add(NodeId.of("b"));
        c.on(new ReplicaEvent.Assigned(
                new Assignment(Epoch.of(1), owner.id, List.of(NodeId.of("b"), c.id), true),
                2,
                Set.of(owner.id, NodeId.of("b"), c.id),
                60_000));
        harness.deliverAll();
        assertThat(owner.replica.learners()).containsExactly(c.id);
        harness.publish("a", 1, 1, 100);
        owner.sync();
        assertThat(owner.confirms())
                .as("b is down and the learner c is 100 behind")
                .hasSize(100);
        harness.settle();
        assertThat(owner.replica.learners()).isEmpty();
        assertThat(owner.confirms()).as("c caught up and counts again").hasSize(101);
    }

    /**
     * The owner lost, its queue recovered onto b and c, the old owner back: it joins epoch 2 as a follower
     * (HistoryRecord.FollowerAdded) instead of a third epoch. The owner feeds it from where its log meets ours (its
     * own unconfirmed suffix of epoch 1 cut), counts it only once installed, and it reports installed on the controller's
     * catch-up request.
     */
    @Test
    void shouldFeedAFollowerThatJoinsTheEpochAndCountItOnlyOnceInstalled() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 5);
        harness.settle(); // everyone holds 1@0..5
        NodeId b = NodeId.of("b");
        NodeId c = NodeId.of("c");
        harness.down.addAll(List.of(b, c));
        harness.publish("a", 1, 1, 5);
        harness.publish("a", 1, 1, 6);
        Harness.Node a = harness.node("a");
        a.sync(); // 1@6..7 on a alone, never confirmed
        assertThat(a.confirms()).hasSize(5);

        harness.down.clear();
        harness.down.add(a.id);
        harness.seal("b", 1);
        harness.seal("c", 1);
        harness.settle();
        harness.assign(new Assignment(Epoch.of(2), b, List.of(c), true), 2, Set.of(b, c));
        harness.settle();
        Harness.Node owner = harness.node("b");
        harness.publishMany("b", 2, 2, 3);
        harness.settle();
        assertThat(owner.confirms()).hasSize(3);

        a.restart(77);
        harness.down.clear();
        harness.assign(new Assignment(Epoch.of(2), b, List.of(c, a.id), true), 2, Set.of(b, c));
        harness.settle();
        assertThat(a.log).as("its unconfirmed suffix cut, epoch 2 copied").isEqualTo(owner.log);
        assertThat(owner.replica.learners())
                .as("not counted before it is installed")
                .containsExactly(a.id);

        harness.down.add(c);
        harness.publish("b", 2, 2, 3);
        harness.settle();
        assertThat(owner.confirms())
                .as("c down, a not installed: no second copy counts")
                .hasSize(3);

        a.on(new ReplicaEvent.CatchUpRequested(Harness.CONTROLLER, Epoch.of(2), b));
        assertThat(a.effectsOf(ReplyInstalled.class))
                .containsExactly(new ReplyInstalled(Harness.CONTROLLER, Epoch.of(2)));
        harness.assign(new Assignment(Epoch.of(2), b, List.of(c, a.id), true), 2, Set.of(b, c, a.id));
        harness.settle();
        assertThat(owner.replica.learners()).isEmpty();
        assertThat(owner.confirms()).as("a installed counts for W").hasSize(4);
    }

    @Test
    void shouldRefuseToOwnAnEpochAfterARestart() {
        Harness harness = threeCopies();
        Harness.Node a = harness.node("a");
        a.restart(77);
        assertThat(a.replica.mayOwn(Epoch.of(1))).isFalse();
        assertThat(a.replica.mayOwn(Epoch.of(2))).isTrue();
        harness.activate(1, 2, "a", "b", "c");
        assertThat(a.effectsOf(Append.class)).isEmpty();
        assertThat(a.replica.owning()).isEmpty();
    }

    @Test
    void shouldDiscardOnlyBelowSettledAndProtectedProgress() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 10);
        harness.settle();
        Harness.Node owner = harness.node("a");
        owner.on(new ReplicaEvent.SettledLowWater(6));
        harness.down.add(NodeId.of("c"));
        for (int i = 10; i < 14; i++) {
            harness.publish("a", 1, 1, i);
        }
        harness.settle();
        harness.tick(10);
        assertThat(owner.effectsOf(Discard.class)).containsExactly(new Discard(6));
        owner.on(new ReplicaEvent.SettledLowWater(13));
        harness.tick(10);
        assertThat(owner.effectsOf(Discard.class))
                .as("c reported within the protection at 10")
                .containsExactly(new Discard(6), new Discard(11));
        harness.tick(61_000);
        assertThat(owner.effectsOf(Discard.class)).last().isEqualTo(new Discard(13));

        harness.down.clear();
        harness.tick(100);
        harness.settle();
        Harness.Node c = harness.node("c");
        assertThat(c.start).as("reseeded from a snapshot").isEqualTo(13);
        assertThat(c.end()).isEqualTo(owner.end());
        Harness.Node b = harness.node("b");
        assertThat(b.effectsOf(Discard.class))
                .as("a follower discards below the owner's start, what it holds durably")
                .last()
                .isEqualTo(new Discard(13));
        assertThat(b.replica.start()).isEqualTo(13);
    }

    // ---- the owner lease -----------------------------------------------------------------------------------------

    /** Ticks every 50 ms for {@code ms}, delivering what travels, and returns the times {@code node} could deliver. */
    private static List<Long> tickAndWatch(Harness harness, long ms, String node, long epoch) {
        List<Long> could = new java.util.ArrayList<>();
        for (long t = 0; t < ms; t += 50) {
            harness.tick(50);
            harness.settle();
            if (harness.node(node).replica.mayDeliver(Epoch.of(epoch), harness.now)) {
                could.add(harness.now);
            }
        }
        return could;
    }

    @Test
    void shouldStopDeliveringWhenFollowersGoSilentForTheLeaseAndResumeWhenTheyAnswer() {
        Harness harness = threeCopies();
        Replica owner = harness.node("a").replica;
        assertThat(owner.mayDeliver(Epoch.of(1), harness.now))
                .as("both followers answered epoch 1's start")
                .isTrue();

        harness.down.add(NodeId.of("c"));
        assertThat(tickAndWatch(harness, 1_000, "a", 1))
                .as("one follower of W - 1 = 1 is enough")
                .hasSize(20);

        harness.down.add(NodeId.of("b"));
        long silentFrom = harness.now;
        List<Long> could = tickAndWatch(harness, 1_000, "a", 1);
        assertThat(could).as("delivers a while, then never").isNotEmpty().allMatch(t -> t < silentFrom + 400);
        assertThat(owner.mayDeliver(Epoch.of(1), harness.now)).isFalse();
        assertThat(owner.owning()).as("still owns: confirms need no lease").isPresent();

        harness.down.remove(NodeId.of("b"));
        harness.tick(50);
        harness.settle();
        harness.tick(50); // a renewal goes out at least every lease / 4 = 100 ms and b answers it at once
        harness.settle();
        assertThat(owner.mayDeliver(Epoch.of(1), harness.now)).isTrue();
    }

    /**
     * A follower that took a later epoch from its owner's stream ignores an older assignment its metadata shows after
     * it (seen in the simulator: as the older epoch's owner it wrote that epoch's start where the later owner then
     * streamed its own, and the two logs of the later epoch differed).
     */
    @Test
    void shouldIgnoreAnOlderAssignmentOnceItFollowsALaterEpochFromTheStream() {
        Harness harness = threeCopies();
        ownerLostToB(harness);
        Assignment third = new Assignment(Epoch.of(3), NodeId.of("c"), List.of(NodeId.of("b")), true);
        harness.node("c").on(new ReplicaEvent.Assigned(third, 2, Set.of(NodeId.of("c")), 60_000));
        harness.deliverAll(); // b hears c's epoch 3 before its metadata shows epoch 2 or 3
        Harness.Node b = harness.node("b");
        assertThat(b.replica.following()).as("adopted from the stream").contains(Epoch.of(3));
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("c")), true);
        b.on(new ReplicaEvent.Assigned(second, 2, Set.of(NodeId.of("b"), NodeId.of("c")), 60_000));
        assertThat(b.replica.owning()).as("epoch 2 was superseded").isEmpty();
        assertThat(b.replica.following()).contains(Epoch.of(3));
        harness.publish("c", 3, 1, 1);
        harness.settle();
        harness.tick(10);
        harness.settle();
        assertThat(b.log).as("one log of epoch 3, the publish in it").isEqualTo(harness.node("c").log);
        assertThat(b.log.get(b.log.size() - 1)).isInstanceOf(Record.Message.class);
    }

    /**
     * A follower that holds another epoch's record at an offset its owner streams (its log is not where the owner
     * believed) takes nothing after it and asks to be fed again, instead of skipping the record as one it holds.
     */
    @Test
    void shouldAskToBeFedAgainWhenItHoldsAnotherEpochsRecordWhereTheOwnerStreams() {
        Harness harness = threeCopies();
        ownerLostToB(harness);
        Harness.Node b = harness.node("b");
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("c")), true);
        b.on(new ReplicaEvent.Assigned(second, 2, Set.of(NodeId.of("b")), 60_000));
        long start = b.log.size() - 1; // b wrote epoch 2's start there
        assertThat(b.log.get((int) start)).isEqualTo(new Record.EpochStart(Epoch.of(2), start));
        Assignment third = new Assignment(Epoch.of(3), NodeId.of("c"), List.of(NodeId.of("b")), true);
        b.on(new ReplicaEvent.Assigned(third, 2, Set.of(NodeId.of("c")), 60_000));
        b.effects.clear();
        b.on(new ReplicaEvent.Received(
                NodeId.of("c"),
                new PeerMessage.Replicate(
                        Epoch.of(3),
                        -1,
                        List.of(
                                new Record.EpochStart(Epoch.of(3), start),
                                new Record.Message(
                                        Epoch.of(3), start + 1, new PublishId(1, 1), ByteBuffer.allocate(10))),
                        harness.now,
                        0)));
        assertThat(b.log).as("nothing taken after a record it cannot place").hasSize((int) start + 1);
        assertThat(b.effects)
                .anyMatch(effect -> effect instanceof ReplicaEffect.Send send
                        && send.message() instanceof PeerMessage.Progress progress
                        && progress.resync());
    }

    /** A replica awaits an epoch while it has no role and every epoch assigned to it is sealed here. */
    @Test
    void shouldAwaitAnEpochOnlyWhileItKnowsNoOwnerAfterItsSeal() {
        Harness harness = new Harness("a", "b", "c");
        assertThat(harness.node("b").replica.awaitingEpoch())
                .as("nothing assigned yet")
                .isTrue();
        harness.activate(1, 2, "a", "b", "c");
        harness.settle();
        assertThat(harness.node("a").replica.awaitingEpoch()).as("owns").isFalse();
        assertThat(harness.node("b").replica.awaitingEpoch()).as("follows").isFalse();
        ownerLostToB(harness);
        assertThat(harness.node("b").replica.awaitingEpoch())
                .as("sealed, no next epoch known")
                .isTrue();
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("c"), List.of(), true);
        harness.node("b").on(new ReplicaEvent.Assigned(second, 1, Set.of(NodeId.of("c")), 60_000));
        assertThat(harness.node("b").replica.awaitingEpoch())
                .as("epoch 2 is someone else's")
                .isFalse();
    }

    /**
     * Idle owners renew their leases on the same boundaries, whenever they started, so that a broker's idle queues
     * renew in one tick and their stamps to one peer leave together; stamps stay at most a quarter lease and a tick
     * apart.
     */
    @Test
    void shouldRenewLeasesOnBoundariesSharedByEveryOwner() {
        Harness first = threeCopies();
        first.tick(30);
        first.settle();
        Harness second = new Harness("a", "b", "c");
        second.now = 30;
        second.activate(1, 2, "a", "b", "c");
        second.settle();
        List<Long> firstRenewals = new ArrayList<>();
        List<Long> secondRenewals = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            first.tick(10);
            second.tick(10);
            if (first.inFlight() > 0) {
                firstRenewals.add(first.now);
            }
            if (second.inFlight() > 0) {
                secondRenewals.add(second.now);
            }
            first.settle();
            second.settle();
        }
        long renew = first.config.leaseRenewMs();
        assertThat(firstRenewals).isNotEmpty().isEqualTo(secondRenewals).allMatch(t -> t % renew == 0);
        assertThat(first.node("a").replica.mayDeliver(Epoch.of(1), first.now)).isTrue();
        assertThat(second.node("a").replica.mayDeliver(Epoch.of(1), second.now)).isTrue();
    }

    @Test
    void shouldNotCountAnAnswerToAnOldMessage() {
        Harness harness = threeCopies();
        harness.cut.add(NodeId.of("a"));
        harness.tick(300);
        harness.cut.clear();
        harness.tick(200);
        // b and c still echo the stamp of time 0: the lease ran out at 400 and needs a fresh answer
        Replica owner = harness.node("a").replica;
        assertThat(owner.deliverUntilMs()).isEqualTo(400);
        assertThat(owner.mayDeliver(Epoch.of(1), harness.now)).isFalse();
        harness.settle();
        assertThat(owner.deliverUntilMs()).isEqualTo(500 + 400);
        assertThat(owner.mayDeliver(Epoch.of(1), harness.now)).isTrue();
    }

    @Test
    void shouldNeedNoLeaseWithOneWriteRequirement() {
        Harness harness = new Harness("a", "b", "c");
        harness.activate(1, 1, "a", "b", "c");
        harness.settle();
        harness.down.add(NodeId.of("b"));
        harness.down.add(NodeId.of("c"));
        assertThat(tickAndWatch(harness, 2_000, "a", 1)).hasSize(40);
        assertThat(harness.node("a").replica.deliverUntilMs()).isEqualTo(Long.MAX_VALUE);
        harness.seal("a", 1);
        assertThat(harness.node("a").replica.mayDeliver(Epoch.of(1), harness.now))
                .as("R = |E|: the owner itself is sealed")
                .isFalse();
    }

    @Test
    void shouldLetADeposedOwnersLeaseLapseBeforeTheNewOwnerDelivers() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 5);
        harness.settle();
        harness.tick(50);
        harness.settle();
        // a is cut off from everyone, the controller included: it never hears of epoch 2 and is not sealed
        harness.cut.add(NodeId.of("a"));
        harness.tick(20);
        harness.seal("b", 1);
        harness.seal("c", 1);
        harness.settle();
        long sealedAt = harness.now;
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("c")), true);
        harness.assign(second, 2, Set.copyOf(second.members()));
        harness.settle();
        long activatedAt = harness.now;
        assertThat(harness.node("b").replica.owning()).contains(Epoch.of(2));
        assertThat(harness.node("a").replica.owning())
                .as("the deposed owner still owns epoch 1")
                .contains(Epoch.of(1));

        List<Long> deposed = new java.util.ArrayList<>();
        List<Long> successor = new java.util.ArrayList<>();
        for (long t = 0; t < 2_000; t += 10) {
            harness.now += 10;
            for (Harness.Node node : harness.nodes.values()) {
                node.on(new ReplicaEvent.Tick());
            }
            harness.settle();
            if (harness.node("a").replica.mayDeliver(Epoch.of(1), harness.now)) {
                deposed.add(harness.now);
            }
            if (harness.node("b").replica.mayDeliver(Epoch.of(2), harness.now)) {
                successor.add(harness.now);
            }
        }
        assertThat(deposed).as("the sealed followers no longer answer").allMatch(t -> t < sealedAt + 400);
        assertThat(successor)
                .as("the new owner waits lease + margin")
                .isNotEmpty()
                .allMatch(t -> t >= activatedAt + 500);
        assertThat(successor.get(0)).isLessThanOrEqualTo(activatedAt + 510);
        assertThat(deposed.get(deposed.size() - 1)).isLessThan(successor.get(0));
    }

    /**
     * The follower of a new epoch takes its role (and sends its first progress) before the new owner takes its own, so
     * the owner, with no role yet, drops that report. Without more it would know nothing of the follower until the
     * follower's next periodic report or its own lease renewal, 100 ms later, and confirm nothing meanwhile; so the new
     * owner asks each follower where it stands when it takes the epoch.
     */
    @Test
    void shouldSyncWithAFollowerWhoseFirstReportCameBeforeTheOwnerTookTheEpoch() {
        Harness harness = threeCopies();
        harness.publishMany("a", 1, 1, 3);
        harness.settle();
        Assignment second = ownerLostToB(harness);
        Set<NodeId> installed = Set.copyOf(second.members());
        // the follower first: its report reaches b before b took epoch 2
        harness.node("c").on(new ReplicaEvent.Assigned(second, 2, installed, 60_000));
        harness.deliverAll();
        harness.node("b").on(new ReplicaEvent.Assigned(second, 2, installed, 60_000));
        harness.settle(); // no time passes: no tick, no periodic report, no lease renewal
        harness.publish("b", 2, 2, 1);
        harness.settle();
        assertThat(harness.node("b").confirms())
                .as("confirmed on b and c without waiting for a timer")
                .containsExactly(new ReplicaEffect.Confirm(new PublishId(2, 1), 5));
    }

    /**
     * The new owner's follower learns of the epoch from the owner's stream, ahead of its own metadata (which showed it
     * 13-67 ms after the owner's in the failover bench): the epoch start and a publish are confirmed on both with no
     * assignment delivered to the follower at all.
     */
    @Test
    void shouldFollowANewEpochFromTheOwnersStreamBeforeItsMetadataShowsIt() {
        Harness harness = threeCopies();
        harness.publish("a", 1, 1, 1);
        harness.settle();
        Assignment second = ownerLostToB(harness);
        harness.node("b").on(new ReplicaEvent.Assigned(second, 2, Set.copyOf(second.members()), 60_000));
        harness.settle(); // c hears of epoch 2 only from b; no time passes
        harness.publish("b", 2, 2, 1);
        harness.settle();
        assertThat(harness.node("c").replica.following()).contains(Epoch.of(2));
        assertThat(harness.node("b").confirms())
                .as("confirmed on b and c, c's metadata still on epoch 1")
                .containsExactly(new ReplicaEffect.Confirm(new PublishId(2, 1), 3));
        assertThat(Harness.epochs(harness.node("c").log)).isEqualTo(Harness.epochs(harness.node("b").log));
    }

    /**
     * A stream of an epoch the replica sealed, or of one no later than the metadata assigned it, is not followed: a
     * deposed owner's late messages change nothing.
     */
    @Test
    void shouldNotFollowASealedOrSupersededEpochFromAStream() {
        Harness harness = threeCopies();
        harness.publish("a", 1, 1, 1);
        harness.settle();
        Harness.Node c = harness.node("c");
        c.on(new ReplicaEvent.Unassigned());
        c.on(new ReplicaEvent.Received(
                NodeId.of("a"),
                new PeerMessage.Replicate(
                        Epoch.of(1), -1, List.of(new Record.EpochStart(Epoch.of(1), 2)), harness.now, 0)));
        assertThat(c.replica.following())
                .as("epoch 1 was assigned here by the metadata")
                .isEmpty();
        harness.seal("c", 2);
        harness.settle();
        c.on(new ReplicaEvent.Received(
                NodeId.of("b"),
                new PeerMessage.Replicate(
                        Epoch.of(2), -1, List.of(new Record.EpochStart(Epoch.of(2), 2)), harness.now, 0)));
        assertThat(c.replica.following()).as("epoch 2 is sealed here").isEmpty();
        assertThat(c.log).extracting(Record::offset).containsExactly(0L, 1L);
    }

    /**
     * A follower that took its role from the metadata may have dropped what the owner streamed before (it had no role
     * yet, or another one): its first report asks to be fed again, and it is at once, not after the resend timeout.
     */
    @Test
    void shouldFeedAgainAFollowerThatMissedTheStreamBeforeItsMetadataRole() {
        Harness harness = threeCopies();
        Assignment second = ownerLostToB(harness);
        Set<NodeId> installed = Set.copyOf(second.members());
        harness.node("b").on(new ReplicaEvent.Assigned(second, 2, installed, 60_000));
        harness.deliverAllDropping(message -> message instanceof PeerMessage.Replicate); // lost on the way to c
        harness.node("b").sync();
        harness.publish("b", 2, 2, 1);
        harness.deliverAllDropping(message -> message instanceof PeerMessage.Replicate);
        harness.node("c").on(new ReplicaEvent.Assigned(second, 2, installed, 60_000));
        harness.settle(); // no time passes: no tick, no resend timeout
        assertThat(harness.node("b").confirms())
                .as("c was fed from its end again on its first report")
                .containsExactly(new ReplicaEffect.Confirm(new PublishId(2, 1), 2));
    }

    @Test
    void shouldNotWaitWhenItOwnedTheEpochBefore() {
        Harness harness = threeCopies();
        harness.install("a", 2, LogPosition.of(1, 0), "b");
        harness.install("b", 2, LogPosition.of(1, 0), "a");
        harness.settle();
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("a"), List.of(NodeId.of("b")), true);
        harness.assign(second, 2, Set.copyOf(second.members()));
        harness.settle();
        assertThat(harness.node("a").replica.owning()).contains(Epoch.of(2));
        assertThat(harness.node("a").replica.mayDeliver(Epoch.of(2), harness.now))
                .as("the deposed owner of epoch 1 was this very process")
                .isTrue();
    }

    @Test
    void shouldKeepWhatIsLeftOfTheWaitOfTheEpochItOwnedBefore() {
        Harness harness = threeCopies();
        harness.seal("a", 1);
        harness.seal("b", 1);
        harness.settle();
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("b"), List.of(NodeId.of("c")), true);
        harness.assign(second, 2, Set.copyOf(second.members()));
        harness.settle();
        long secondAt = harness.now;
        harness.tick(100);
        harness.settle();
        harness.install("b", 3, LogPosition.of(2, 1), "c");
        harness.install("c", 3, LogPosition.of(2, 1), "b");
        harness.settle();
        Assignment third = new Assignment(Epoch.of(3), NodeId.of("b"), List.of(NodeId.of("c")), true);
        harness.assign(third, 2, Set.copyOf(third.members()));
        harness.settle();
        assertThat(harness.node("b").replica.owning()).contains(Epoch.of(3));
        assertThat(tickAndWatch(harness, 1_000, "b", 3))
                .as("the owner of epoch 1 may deliver until 500 ms after epoch 2 began")
                .first()
                .isEqualTo(secondAt + 500);
    }

    @Test
    void shouldWaitAfterARestartEvenWhenItOwnedTheEpochBefore() {
        Harness harness = threeCopies();
        harness.node("a").restart(9);
        harness.install("a", 2, LogPosition.of(1, 0), "b");
        harness.install("b", 2, LogPosition.of(1, 0), "a");
        harness.settle();
        Assignment second = new Assignment(Epoch.of(2), NodeId.of("a"), List.of(NodeId.of("b")), true);
        harness.assign(second, 2, Set.copyOf(second.members()));
        harness.settle();
        long activatedAt = harness.now;
        assertThat(harness.node("a").replica.mayDeliver(Epoch.of(2), harness.now))
                .isFalse();
        assertThat(tickAndWatch(harness, 1_000, "a", 2)).first().isEqualTo(activatedAt + 500);
    }
}
