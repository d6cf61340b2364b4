package io.ganglion.broker.replication;

import static io.ganglion.broker.replication.ReplicationCluster.N1;
import static io.ganglion.broker.replication.ReplicationCluster.N2;
import static io.ganglion.broker.replication.ReplicationCluster.N3;
import static io.ganglion.broker.replication.ReplicationCluster.NODES;
import static io.ganglion.broker.replication.ReplicationCluster.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.broker.replication.ReplicationCluster.Node;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.storage.StorageConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@link ReplicaHost}s of one queue (W = 2 of 3) on real storage and real shards, wired by frames through the
 * peer codec, driven by a controller that keeps the real accepted history (see {@link ReplicationCluster}).
 */
class ReplicaHostTest {
    @TempDir
    Path dir;

    private ReplicationCluster cluster;

    @BeforeEach
    void startThreeBrokers() throws Exception {
        cluster = new ReplicationCluster(dir);
        for (var id : NODES) {
            cluster.start(id);
        }
    }

    @AfterEach
    void stop() throws Exception {
        cluster.close();
    }

    private Node node(io.ganglion.coordination.NodeId id) {
        return cluster.node(id);
    }

    private Assignment activateEpochOne() throws InterruptedException {
        Assignment active = cluster.recover(N1, List.of(N2, N3), List.of(), NODES);
        await(() -> node(N1).status().owning().equals(Optional.of(Epoch.of(1))), "the owner's epoch start durable");
        return active;
    }

    private static void quietFor(long ms) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Test
    void shouldActivateEpochOneThroughInstallRequestsAndConfirmEveryPublishAtTwoDurableCopies() throws Exception {
        Assignment active = activateEpochOne();

        assertThat(active.epoch()).isEqualTo(Epoch.of(1));
        assertThat(active.activated()).isTrue();
        assertThat(cluster.history().installedInCommitted()).containsExactlyInAnyOrder(N1, N2, N3);
        assertThat(node(N2).status().following()).contains(Epoch.of(1));
        assertThat(node(N3).status().following()).contains(Epoch.of(1));

        List<PublishId> ids = cluster.publish(N1, 1, 0, 50);
        await(() -> node(N1).listener.allConfirmed(ids), "50 confirms");

        // offset 0 is the epoch start; the publishes follow it in order
        for (int i = 0; i < ids.size(); i++) {
            assertThat(node(N1).listener.confirmed.get(ids.get(i))).isEqualTo(i + 1L);
        }
        assertThat(node(N1).listener.refused).isEmpty();
        assertThat(node(N1).listener.deliverable.get()).isEqualTo(50);
        await(
                () -> node(N2).publishedIds().equals(ids)
                        && node(N3).publishedIds().equals(ids),
                "copies on both");
        assertThat(node(N1).publishedIds()).isEqualTo(ids);
        assertThat(cluster.frames.get()).isPositive();
    }

    /**
     * A consumer acknowledges about as often as publishers publish. Its Settles wait for the next publish to the same
     * follower and go out in its Replicate, instead of one Replicate each: half the frames, the followers' appends
     * and their replies. A Settle with no publish after it goes at the replica's next tick.
     */
    @Test
    void shouldSendAnAcknowledgementWithTheNextPublishOrAtTheTick() throws Exception {
        activateEpochOne();
        List<PublishId> ids = cluster.publish(N1, 1, 0, 20);
        await(() -> node(N1).listener.allConfirmed(ids), "20 confirms");
        await(() -> node(N2).status().end() == 20, "N2 holds them");

        long before = cluster.replicatesToN2.get();
        for (int i = 0; i < 20; i++) {
            cluster.settle(N1, i + 1); // each in its own task: an idle point between the settle and the publish
            quietFor(1);
            cluster.publish(N1, 2, i, 1);
            quietFor(1);
        }
        await(() -> node(N2).status().end() == 60, "N2 holds the 20 settles and the 20 publishes");
        long replicates = cluster.replicatesToN2.get() - before;
        // one Replicate per publish, its settle with it; a tick (every 10 ms here) now and then takes a settle alone
        assertThat(replicates)
                .as("Replicates to N2 for 20 settles and 20 publishes")
                .isLessThan(30);
        List<Record> records = node(N2).records();
        assertThat(records.subList(21, 61))
                .allSatisfy(record -> assertThat(record).isInstanceOfAny(Record.Settle.class, Record.Message.class));

        // the last acknowledgement, nothing after it: it reaches the followers at the tick
        cluster.settle(N1, 21);
        await(() -> node(N2).status().end() == 61 && node(N3).status().end() == 61, "a lone settle replicated");
        await(() -> node(N1).status().commit() == 61, "and committed");
    }

    @Test
    void shouldConfirmWithOneFollowerDownAndStopConfirmingWithTwoDown() throws Exception {
        activateEpochOne();

        cluster.cut(N3);
        List<PublishId> first = cluster.publish(N1, 1, 0, 20);
        await(() -> node(N1).listener.allConfirmed(first), "confirms with N3 down");
        assertThat(node(N2).publishedIds()).isEqualTo(first);

        cluster.cut(N2);
        List<PublishId> second = cluster.publish(N1, 1, 20, 10);
        await(() -> node(N1).status().durable() == 30, "the owner's own copy durable");
        quietFor(500); // ten resend periods: the owner keeps trying, nobody answers
        assertThat(node(N1).listener.confirmed.keySet()).doesNotContainAnyElementsOf(second);
        assertThat(node(N1).status().commit()).isEqualTo(20);
        assertThat(node(N1).listener.deliverable.get()).isEqualTo(20);

        cluster.heal(N2);
        await(() -> node(N1).listener.allConfirmed(second), "confirms once N2 is back");
        assertThat(node(N1).listener.refused).isEmpty();
        assertThat(node(N2).publishedIds()).containsExactlyElementsOf(concat(first, second));
    }

    @Test
    void shouldLoseNoConfirmedPublishWhenTheOwnerCrashesAndReopensFromDisk() throws Exception {
        activateEpochOne();
        List<PublishId> sent = cluster.publish(N1, 1, 0, 200);
        await(() -> node(N1).listener.confirmed.size() >= 20, "some confirms");

        Node crashed = node(N1);
        cluster.crash(N1);
        Set<PublishId> confirmed = Set.copyOf(crashed.listener.confirmed.keySet());
        assertThat(confirmed).hasSizeGreaterThanOrEqualTo(20);

        Node reopened = cluster.start(N1);
        assertThat(reopened.incarnation).isNotEqualTo(crashed.incarnation);
        Assignment second = cluster.recover(N1, List.of(N2, N3), NODES, NODES);
        assertThat(second.epoch()).isEqualTo(Epoch.of(2));
        await(() -> node(N1).status().owning().equals(Optional.of(Epoch.of(2))), "epoch 2 started");

        for (var id : NODES) {
            assertThat(node(id).publishedIds()).as("log of %s", id).containsAll(confirmed);
        }

        // every publish of epoch 1 is re-sent with its id (their outcome was unknown); none is appended twice
        cluster.publish(N1, 1, 0, 200);
        List<PublishId> fresh = cluster.publish(N1, 2, 0, 10);
        await(() -> node(N1).listener.allConfirmed(sent) && node(N1).listener.allConfirmed(fresh), "all confirmed");
        List<PublishId> log = node(N1).publishedIds();
        assertThat(new HashSet<>(log)).hasSize(log.size()).containsAll(sent).containsAll(fresh);
        await(
                () -> node(N2).publishedIds().equals(log)
                        && node(N3).publishedIds().equals(log),
                "same on copies");
    }

    @Test
    void shouldCatchUpAFollowerThatRestartsAndCountItAgain() throws Exception {
        activateEpochOne();
        List<PublishId> before = cluster.publish(N1, 1, 0, 20);
        await(() -> node(N1).listener.allConfirmed(before), "confirms with all up");

        cluster.crash(N3);
        List<PublishId> during = cluster.publish(N1, 1, 20, 100);
        await(() -> node(N1).listener.allConfirmed(during), "confirms with N3 down");

        Node restarted = cluster.start(N3);
        cluster.assignAll(); // its broker's view: still a follower of epoch 1
        await(() -> restarted.status().durable() == node(N1).status().end(), "N3 caught up");
        assertThat(restarted.publishedIds())
                .isEqualTo(node(N1).publishedIds())
                .containsAll(before)
                .containsAll(during);

        // N3 is counted again: with N2 gone, the owner confirms with N3
        cluster.cut(N2);
        List<PublishId> after = cluster.publish(N1, 1, 120, 10);
        await(() -> node(N1).listener.allConfirmed(after), "confirms with N2 down and N3 back");
        assertThat(node(N1).listener.refused).isEmpty();
    }

    @Test
    void shouldCatchUpAMemberNotInstalledAtActivationThroughACatchUpRequest() throws Exception {
        cluster.cut(N3);
        cluster.recover(N1, List.of(N2, N3), List.of(), List.of(N1, N2));
        await(() -> node(N1).status().owning().isPresent(), "owner started");
        List<PublishId> ids = cluster.publish(N1, 1, 0, 30);
        await(() -> node(N1).listener.allConfirmed(ids), "confirms with N1 and N2");
        assertThat(cluster.history().installedInCommitted()).containsExactlyInAnyOrder(N1, N2);

        cluster.heal(N3);
        cluster.catchUp(N3);

        assertThat(cluster.history().installedInCommitted()).containsExactlyInAnyOrder(N1, N2, N3);
        await(() -> node(N3).publishedIds().equals(ids), "N3 holds the log");
    }

    @Test
    void shouldRefuseAndNeverConfirmWhenTheOwnersStorageFails() throws Exception {
        activateEpochOne();
        List<PublishId> before = cluster.publish(N1, 1, 0, 5);
        await(() -> node(N1).listener.allConfirmed(before), "confirms");

        node(N1).storage.close(); // appends are refused from now on (CLOSED)
        List<PublishId> after = cluster.publish(N1, 1, 5, 5);
        await(() -> node(N1).listener.refused.keySet().containsAll(after), "refusals");

        assertThat(node(N1).listener.confirmed.keySet()).doesNotContainAnyElementsOf(after);
        assertThat(node(N1).listener.failure.get()).isNotNull();
        assertThat(node(N1).listener.refused.get(after.get(0))).startsWith("storage failed");
        assertThat(node(N1).status().failed()).isTrue();
        quietFor(200);
        assertThat(node(N1).listener.confirmed.keySet()).doesNotContainAnyElementsOf(after);
    }

    @Test
    void shouldHoldAppendsTheLogRefusesForBacklogAndConfirmThemLater() throws Exception {
        cluster.close();
        // 4 KiB of records waiting for their segments is a backlog: a burst of publishes runs into it
        cluster = new ReplicationCluster(
                dir.resolve("backlog"),
                config -> new StorageConfig(
                        config.segmentBytes(),
                        config.journalFileBytes(),
                        config.checkpointJournalBytes(),
                        config.maxBatchBytes(),
                        4096,
                        config.preallocateJournal(),
                        config.epochMillis(),
                        1 << 20,
                        1024,
                        4096,
                        config.groupCommitNanos()));
        for (var id : NODES) {
            cluster.start(id);
        }
        activateEpochOne();
        List<PublishId> ids = cluster.publish(N1, 1, 0, 3000);
        try {
            await(() -> node(N1).listener.allConfirmed(ids), "every publish confirmed");
        } catch (AssertionError e) {
            throw new AssertionError(
                    node(N1).listener.confirmed.size() + " confirmed, refused "
                            + node(N1).listener.refused.size() + ", stalls "
                            + node(N1).host().backlogStalls() + ", "
                            + node(N1).status() + " / " + node(N2).status() + " stalls "
                            + node(N2).host().backlogStalls()
                            + " / " + node(N3).status() + " stalls "
                            + node(N3).host().backlogStalls(),
                    e);
        }

        assertThat(node(N1).host().backlogStalls()).as("the log said BACKLOG").isPositive();
        assertThat(node(N1).listener.refused).isEmpty();
        assertThat(node(N1).status().failed()).isFalse();
        await(() -> node(N2).publishedIds().equals(ids), "N2 holds the whole log, in order");
    }

    private static List<PublishId> concat(List<PublishId> a, List<PublishId> b) {
        List<PublishId> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
