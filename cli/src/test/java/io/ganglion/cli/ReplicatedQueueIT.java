package io.ganglion.cli;

import static io.ganglion.cli.TestCluster.awaitLive;
import static io.ganglion.cli.TestCluster.awaitQueue;
import static io.ganglion.cli.TestCluster.ctl;
import static io.ganglion.cli.TestCluster.get;
import static io.ganglion.cli.TestCluster.printBrokerEvents;
import static io.ganglion.cli.TestCluster.queue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.ganglion.testing.ClusterTest;
import io.ganglion.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicated queues on three broker processes, with the real RabbitMQ client: publishers with confirms and consumers
 * with acks on brokers that survive ({@link QueueTraffic}), and a total-queue check at the end of each case: nothing
 * confirmed lost, nothing unexpected, a message delivered twice only as a redelivery. The cases of the replication
 * issue: follower loss under the hold, owner loss, hold 0, a follower's return, owner and follower lost together, a
 * draining broker, an owner_durable queue.
 */
@ClusterTest
class ReplicatedQueueIT {
    private static final Duration SETTLE = Duration.ofSeconds(40);
    private static final Duration CONSUME = Duration.ofSeconds(30);

    /** Kept when a case fails, so that its brokers' whole logs can be read when it ran on this machine. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    private List<BrokerChild> brokers = new ArrayList<>();

    /**
     * A failed case prints the brokers' event lines before its temporary folder, and the logs in it, are deleted: a CI
     * run keeps only its output (case 4b failed once in a CI run with nothing left to read).
     */
    @RegisterExtension
    final TestExecutionExceptionHandler printBrokerEventsOnFailure = (context, failure) -> {
        printBrokerEvents(dir);
        throw failure;
    };

    private final AtomicReference<CompletableFuture<Void>> killing =
            new AtomicReference<>(CompletableFuture.completedFuture(null));

    private void startCluster(int size, String... settings) throws Exception {
        brokers = TestCluster.start(dir, size, settings);
    }

    @AfterEach
    void stopCluster() throws Exception {
        BrokerChild.stopTogether(brokers);
    }

    /** Case 1: kill -9 a broker that is only a follower: the queue never stops confirming, the follower is held. */
    @Test
    void shouldConfirmThroughAFollowerLossWithoutANewEpoch() throws Exception {
        startCluster(3);
        JsonNode queue = declare("orders", Map.of("x-queue-type", "quorum"));
        assertThat(queue.path("active").asBoolean())
                .as("activated before declare-ok: %s", queue)
                .isTrue();
        assertThat(queue.path("copies").asInt()).isEqualTo(3);
        String owner = queue.path("owner").asText();
        // x-queue-leader-locator: client-local by default (owned by the broker it was declared through), balanced
        // on request (the least loaded broker), anything else refused with 406
        assertThat(owner).isEqualTo(brokers.get(0).nodeId());
        assertThat(declare("spread", Map.of("x-queue-type", "quorum", "x-queue-leader-locator", "balanced"))
                        .path("owner")
                        .asText())
                .isNotEqualTo(owner);
        assertThatThrownBy(() -> declare("nowhere", Map.of("x-queue-type", "quorum", "x-queue-leader-locator", "near")))
                .hasStackTraceContaining("PRECONDITION_FAILED - invalid arg 'x-queue-leader-locator'");
        long epoch = queue.path("epoch").asLong();
        BrokerChild victim = byId(followers(queue).get(0));
        BrokerChild client = other(victim, byId(owner));

        try (QueueTraffic traffic = new QueueTraffic(client, client, "orders", "m").consume()) {
            traffic.publish(600, i -> {
                if (i == 200) {
                    // a follower only: the queue keeps confirming, no new epoch (the hold); killed beside the
                    // publisher, which keeps publishing while the process dies (a gap then is the queue's, not the
                    // test's)
                    traffic.mark();
                    killing.set(CompletableFuture.runAsync(victim::killQuietly));
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            killing.get().join();
            // the live set commits the death after the eager failover, or after a new controller's takeover when the
            // victim was the controller too
            awaitQueue(client, "orders", q -> q.path("held").toString().contains(victim.nodeId()));
            assertThat(ctl(client, 0, "queues"))
                    .contains("orders\tquorum\ttrue\t" + owner + "\t3 majority_durable\t" + epoch + "\t")
                    .contains("\tactive\t" + victim.nodeId() + "(since ");
            totalQueueCheck(traffic, true);
            System.out.println("case 1 (follower killed): " + traffic.summary());
        }
        JsonNode after = queue(client, "orders");
        assertThat(after.path("epoch").asLong())
                .as("the hold kept the epoch: %s", after)
                .isEqualTo(epoch);
        assertThat(after.path("owner").asText()).isEqualTo(owner);
        assertThat(after.path("held").toString()).contains(victim.nodeId());
    }

    /**
     * Case 2: kill -9 the owner while a publisher and a consumer on surviving brokers run: a new epoch, every publish
     * confirmed (re-sent to the new owner), none nacked, the consumer (cancelled, subscribing again) gets them all.
     */
    @Test
    void shouldRecoverToANewEpochWhenTheOwnerIsKilled() throws Exception {
        startCluster(3);
        JsonNode queue = declare("payments", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        BrokerChild victim = byId(queue.path("owner").asText());
        List<BrokerChild> survivors = others(victim);

        try (QueueTraffic traffic = new QueueTraffic(survivors.get(0), survivors.get(1), "payments", "p").consume()) {
            traffic.publish(500, i -> {
                if (i == 200) {
                    traffic.mark();
                    killing.set(CompletableFuture.runAsync(victim::killQuietly));
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            killing.get().join();
            totalQueueCheck(traffic, true);
            assertThat(traffic.subscriptions())
                    .as("subscribed again after the owner died")
                    .isGreaterThan(1);
            System.out.println("case 2 (owner killed): " + traffic.summary());
        }
        JsonNode after = awaitQueue(
                survivors.get(0),
                "payments",
                q -> q.path("active").asBoolean() && q.path("epoch").asLong() > epoch);
        assertThat(after.path("owner").asText()).isNotEqualTo(victim.nodeId());
    }

    /**
     * Case 2, the owner's return: the killed owner, restarted, joins the recovered epoch as a follower (no third epoch,
     * so no fence of the healthy queue), catches up as a learner and counts: the other follower then dies and the
     * queue keeps confirming, which needs the returned broker's copy.
     */
    @Test
    void shouldTakeAKilledOwnerBackAsAFollowerOfTheRecoveredEpoch() throws Exception {
        startCluster(3);
        JsonNode queue = declare("refunds", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        BrokerChild victim = byId(queue.path("owner").asText());
        // placement replaces a lost owner by the kept follower owning the fewest queues, ties in follower order
        BrokerChild successor = byId(followers(queue).get(0));
        BrokerChild other = byId(followers(queue).get(1));

        try (QueueTraffic traffic = new QueueTraffic(successor, successor, "refunds", "r").consume()) {
            traffic.publish(300, i -> {
                if (i == 100) {
                    killing.set(CompletableFuture.runAsync(victim::killQuietly));
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            killing.get().join();
            JsonNode recovered = awaitQueue(
                    successor,
                    "refunds",
                    q -> q.path("active").asBoolean() && q.path("epoch").asLong() > epoch);
            assertThat(recovered.path("owner").asText()).isEqualTo(successor.nodeId());

            victim.launch().awaitListening();
            awaitLive(successor, 3);
            JsonNode rejoined = awaitQueue(successor, "refunds", q -> countsAgain(q, victim));
            assertThat(rejoined.path("epoch").asLong())
                    .as("the old owner joined the recovered epoch: %s", rejoined)
                    .isEqualTo(recovered.path("epoch").asLong());
            traffic.publish(100, i -> {
                if (i == 20) {
                    other.kill(); // now only the returned broker can make W = 2
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 2 (owner returned): " + traffic.summary());
            assertThat(queue(successor, "refunds").path("epoch").asLong())
                    .isEqualTo(recovered.path("epoch").asLong());
        }
    }

    /**
     * Case 3: with the hold set to 0, a lost follower leaves the queue's epoch at once without a new epoch (leaving, then
     * dropped on the owner's proof): the queue confirms throughout, nothing nacked, and the broker back takes its copy
     * again as a learner, still in the same epoch.
     */
    @Test
    void shouldDropALostFollowerAtOnceWithoutANewEpochWhenTheHoldIsZero() throws Exception {
        startCluster(3);
        ctl(brokers.get(0), 0, "settings", "set", "replication.follower_loss_hold_ms", "0");
        JsonNode queue = declare("audit", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        String owner = queue.path("owner").asText();
        BrokerChild victim = byId(followers(queue).get(0));
        BrokerChild client = other(victim, byId(owner));

        try (QueueTraffic traffic = new QueueTraffic(client, client, "audit", "a").consume()) {
            traffic.publish(200);
            long killed = System.nanoTime();
            victim.kill();
            traffic.publish(400); // while the follower leaves
            JsonNode dropped = awaitQueue(
                    client,
                    "audit",
                    q -> q.path("active").asBoolean() && !followers(q).contains(victim.nodeId()));
            long droppedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            assertThat(dropped.path("epoch").asLong())
                    .as("no new epoch: %s", dropped)
                    .isEqualTo(epoch);
            assertThat(dropped.path("owner").asText()).isEqualTo(owner);
            assertThat(dropped.path("held").size()).as("nobody held").isZero();
            traffic.publish(200);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);

            victim.launch().awaitListening();
            awaitLive(client, 3);
            JsonNode rejoined = awaitQueue(client, "audit", q -> countsAgain(q, victim));
            assertThat(rejoined.path("epoch").asLong())
                    .as("back in the same epoch: %s", rejoined)
                    .isEqualTo(epoch);
            System.out.println("case 3 (hold 0): dropped from epoch " + epoch + ", seen " + droppedMs
                    + " ms after the kill, and back; " + traffic.summary());
        }
    }

    /**
     * Case 4: a killed follower restarted within the hold rejoins as a learner and is promoted back, in the same
     * epoch; then the other follower dies and the queue keeps confirming, which needs the returned one to count.
     */
    @Test
    void shouldTakeARestartedFollowerBackWithoutANewEpoch() throws Exception {
        startCluster(3);
        JsonNode queue = declare("ledger", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild returning = byId(followers(queue).get(0));
        BrokerChild other = byId(followers(queue).get(1));

        try (QueueTraffic traffic = new QueueTraffic(owner, owner, "ledger", "l").consume()) {
            traffic.publish(200, i -> {
                if (i == 50) {
                    returning.kill();
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            returning.launch().awaitListening();
            awaitLive(owner, 3);
            JsonNode rejoined = awaitQueue(owner, "ledger", q -> countsAgain(q, returning));
            assertThat(rejoined.path("epoch").asLong())
                    .as("no new epoch for its return: %s", rejoined)
                    .isEqualTo(epoch);
            assertThat(rejoined.path("held").size()).isZero();
            traffic.publish(100, i -> {
                if (i == 20) {
                    other.kill(); // now only the returned follower can make W = 2
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 4 (follower returned): " + traffic.summary());
        }
        assertThat(queue(owner, "ledger").path("epoch").asLong()).isEqualTo(epoch);
    }

    /**
     * Case 4, same process: a follower that stops answering (SIGSTOP: heartbeats and the stream stop, its connections
     * stay open) is held, and when it runs again (SIGCONT, the same incarnation) it resumes streaming where it stopped
     * and counts again, in the same epoch.
     */
    @Test
    void shouldResumeStreamingToAFollowerThatComesBackAsTheSameProcess() throws Exception {
        startCluster(3);
        JsonNode queue = declare("resume", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild paused = byId(followers(queue).get(0));
        BrokerChild other = byId(followers(queue).get(1));

        try (QueueTraffic traffic = new QueueTraffic(owner, owner, "resume", "r").consume()) {
            JsonNode resumed = freezeUntilHeld(traffic, owner, "resume", paused);
            assertThat(resumed.path("epoch").asLong()).isEqualTo(epoch);
            traffic.publish(100, i -> {
                if (i == 20) {
                    other.kill(); // the resumed follower must count now
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 4b (same process back): " + traffic.summary());
        }
        assertThat(queue(owner, "resume").path("epoch").asLong()).isEqualTo(epoch);
    }

    /**
     * Case 4c: the controller stops (SIGSTOP) past the expiry period while a queue it follows takes traffic. The others
     * elect a controller that holds it; when it runs again, it ticks once more as the controller on what it saw before
     * it stopped: every broker silent for seconds, itself included. Nothing of that may take effect (it did: CI once
     * saw the frozen controller's proposal commit through the new leader, the healthy owner taken down and the frozen
     * broker made owner in a new epoch). It counts again as a follower; no other broker was ever taken down; the queue
     * keeps its owner and epoch and every confirmed message is consumed.
     */
    @Test
    void shouldTakeNothingFromAControllerThatWakesUpFromAFreeze() throws Exception {
        startCluster(3);
        awaitLive(brokers.get(0), 3);
        BrokerChild frozen =
                byId(get(brokers.get(0), "/api/nodes").path("controller").asText());
        BrokerChild owner = other(frozen);
        JsonNode queue = enrolled(declare(owner, "frozen", Map.of("x-queue-type", "quorum")));
        assertThat(queue.path("owner").asText())
                .as("the declaring broker owns the queue")
                .isEqualTo(owner.nodeId());
        long epoch = queue.path("epoch").asLong();

        try (QueueTraffic traffic = new QueueTraffic(owner, owner, "frozen", "f").consume()) {
            // held while frozen: a new controller saw the frozen one silent for the expiry period
            JsonNode back = freezeUntilHeld(traffic, owner, "frozen", frozen);
            assertThat(back.path("epoch").asLong()).as("%s", back).isEqualTo(epoch);
            assertThat(back.path("owner").asText()).isEqualTo(owner.nodeId());
            traffic.publish(100);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 4c (frozen controller back): " + traffic.summary());
        }
        assertThat(queue(owner, "frozen").path("epoch").asLong()).isEqualTo(epoch);
        for (BrokerChild broker : brokers) {
            List<String> downs =
                    Files.readAllLines(broker.dataDir.resolve("broker.out"), StandardCharsets.UTF_8).stream()
                            .filter(line -> line.contains("event=live_set_committed") && line.contains("live=false"))
                            .filter(line -> !line.contains("node=" + frozen.nodeId() + " "))
                            .toList();
            assertThat(downs)
                    .as("healthy brokers taken down, in %s's log", broker.nodeId())
                    .isEmpty();
        }
    }

    /**
     * Publishes 100 messages, stops {@code follower} (SIGSTOP), publishes 300 more that must all settle while the
     * owner holds it, then lets it run again (SIGCONT) and returns the queue once it is no longer held and the follower
     * counts again.
     */
    private static JsonNode freezeUntilHeld(QueueTraffic traffic, BrokerChild owner, String name, BrokerChild follower)
            throws Exception {
        traffic.publish(100);
        signal(follower, "STOP");
        try {
            traffic.publish(300);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            awaitQueue(owner, name, q -> q.path("held").toString().contains(follower.nodeId()));
        } finally {
            signal(follower, "CONT");
        }
        return awaitQueue(owner, name, q -> q.path("held").isEmpty() && countsAgain(q, follower));
    }

    private static void signal(BrokerChild broker, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(broker.pid())).start();
        assertThat(kill.waitFor()).as("kill -%s", signal).isZero();
    }

    /**
     * Case 5: a follower kept away past the retention protection while the owner consumes and discards: on return (a
     * new incarnation, so a learner) it needs records the owner no longer has, reseeds from the owner's snapshot and
     * catches up; it counts again (the other follower then dies and the queue keeps confirming), same epoch.
     */
    @Test
    void shouldReseedAFollowerThatNeedsDiscardedRecords() throws Exception {
        startCluster(
                3,
                "storage.segment_bytes",
                "8192",
                "replication.retention_protect_ms",
                "1000",
                "replication.resend_window_ms",
                "1000");
        JsonNode queue = declare("journal", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild away = byId(followers(queue).get(0));
        BrokerChild other = byId(followers(queue).get(1));

        try (QueueTraffic traffic = new QueueTraffic(owner, owner, "journal", "j").consume()) {
            traffic.publish(300);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            long awayHad = queue(owner, "journal")
                    .path("owner_status")
                    .path("follower_durable")
                    .path(away.nodeId())
                    .asLong();
            away.kill();
            traffic.publish(1500);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            assertThat(traffic.awaitConsumed(CONSUME)).isEmpty();
            // consumed and settled: the owner discards below its lowest unsettled message, past what the away one had
            JsonNode discarded = awaitQueue(
                    owner, "journal", q -> q.path("owner_status").path("start").asLong() > awayHad + 1);
            away.launch().awaitListening();
            JsonNode caughtUp = awaitQueue(owner, "journal", q -> countsAgain(q, away));
            assertThat(caughtUp.path("epoch").asLong()).isEqualTo(epoch);
            JsonNode copy = null;
            for (JsonNode replica : get(away, "/api/replicas")) {
                if (replica.path("queue").asText().equals("//journal")) {
                    copy = replica;
                }
            }
            assertThat(copy).as("the returned copy").isNotNull();
            assertThat(copy.path("start").asLong())
                    .as("reseeded: its log starts where the owner's snapshot did (%s), not at 0", discarded)
                    .isGreaterThan(awayHad + 1);
            traffic.publish(200, i -> {
                if (i == 20) {
                    other.kill(); // the reseeded follower must count now
                }
            });
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 5 (reseed): owner log start "
                    + discarded.path("owner_status").path("start") + ", returned copy " + copy + "; "
                    + traffic.summary());
        }
    }

    /**
     * Case 6: owner and one follower killed together (3 copies): the queue never activates on the one copy left; when
     * one of them comes back it recovers with nothing confirmed lost.
     */
    @Test
    void shouldWaitRatherThanActivateOnOneCopy() throws Exception {
        startCluster(3);
        JsonNode queue = declare("vault", Map.of("x-queue-type", "quorum"));
        long epoch = queue.path("epoch").asLong();
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild follower = byId(followers(queue).get(0));
        BrokerChild survivor = other(owner, follower);

        try (QueueTraffic traffic = new QueueTraffic(survivor, survivor, "vault", "v")) {
            traffic.publish(300);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            assertThat(traffic.nacked()).isZero();
            BrokerChild.killTogether(owner, follower);
            // for three seconds: never active in a new epoch with one copy
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < until) {
                JsonNode now = queue(survivor, "vault");
                assertThat(now.path("active").asBoolean() && now.path("epoch").asLong() > epoch)
                        .as("activated on one copy: %s", now)
                        .isFalse();
                Thread.sleep(100);
            }
            follower.launch().awaitListening();
            JsonNode recovered = awaitQueue(
                    survivor,
                    "vault",
                    q -> q.path("active").asBoolean() && q.path("epoch").asLong() > epoch);
            traffic.consume();
            totalQueueCheck(traffic, false);
            System.out.println(
                    "case 6 (owner and follower killed): recovered to " + recovered + "; " + traffic.summary());
        }
    }

    /** Case 7: draining a broker moves its copies away through recovery, nothing lost. */
    @Test
    void shouldMoveCopiesOffADrainingBroker() throws Exception {
        startCluster(3);
        JsonNode queue = declare("drained", Map.of("x-queue-type", "quorum", "x-copies", 2));
        long epoch = queue.path("epoch").asLong();
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild follower = byId(followers(queue).get(0));
        BrokerChild outsider = other(owner, follower);

        try (QueueTraffic traffic = new QueueTraffic(outsider, outsider, "drained", "d").consume()) {
            traffic.publish(300, i -> {
                if (i == 100) {
                    ctl(outsider, 0, "node", "drain", owner.nodeId());
                }
            });
            JsonNode moved = awaitQueue(
                    outsider,
                    "drained",
                    q -> q.path("active").asBoolean()
                            && q.path("epoch").asLong() > epoch
                            && !q.path("owner").asText().equals(owner.nodeId())
                            && !followers(q).contains(owner.nodeId()));
            traffic.publish(100);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 7 (drain): moved to " + moved + "; " + traffic.summary());
        }
    }

    /**
     * Case 8: an owner_durable queue (W = 1) has no hold: a lost follower starts a recovery at once. With 3 copies it
     * needs R = |E| - W + 1 = 3 seals, so it completes when the follower is back (a confirm may rest on any one copy);
     * then nothing confirmed is lost and the queue serves in the new epoch.
     */
    @Test
    void shouldRecoverAnOwnerDurableQueueOnFollowerLoss() throws Exception {
        startCluster(3);
        JsonNode queue = declare("fast", Map.of("x-queue-type", "quorum", "x-durability", "owner_durable"));
        assertThat(queue.path("durability").asText()).isEqualTo("owner_durable");
        long epoch = queue.path("epoch").asLong();
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild victim = byId(followers(queue).get(0));
        BrokerChild client = other(owner, victim);

        try (QueueTraffic traffic = new QueueTraffic(client, client, "fast", "f")) {
            traffic.publish(300);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            victim.kill();
            JsonNode recovering =
                    awaitQueue(client, "fast", q -> !q.path("recovery").isMissingNode());
            assertThat(recovering.path("recovery").path("seals_needed").asInt()).isEqualTo(3);
            assertThat(recovering.path("held").size()).as("W = 1: nobody held").isZero();
            assertThat(ctl(client, 0, "queues")).contains("\trecovering(epoch " + (epoch + 1) + ", sealing ");
            victim.launch().awaitListening();
            JsonNode recovered = awaitQueue(
                    client,
                    "fast",
                    q -> q.path("active").asBoolean() && q.path("epoch").asLong() > epoch);
            traffic.consume();
            traffic.publish(100);
            assertThat(traffic.awaitSettled(SETTLE)).as(traffic.summary()).isTrue();
            totalQueueCheck(traffic, true);
            System.out.println("case 8 (owner_durable follower loss): recovered to epoch " + recovered.path("epoch")
                    + "; " + traffic.summary());
        }
    }

    /**
     * Whether {@code follower} counts for the queue again, as its owner shows it: a follower, no learner left, and its
     * durable offset at the commit.
     */
    /**
     * Message TTL across a kill -9 of the owner: the new owner expires each message at the time it was first admitted
     * (the owner's time kept in every copy), not later and not earlier, and nothing confirmed is gone before its time.
     */
    @Test
    void shouldExpireMessagesAtTheirFirstAdmissionTimeAfterTheOwnerIsKilled() throws Exception {
        startCluster(3);
        JsonNode queue = declare("expiring", Map.of("x-queue-type", "quorum", "x-message-ttl", 8_000));
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild client = other(owner);
        long published;
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            published = System.currentTimeMillis();
            for (int i = 0; i < 100; i++) {
                channel.basicPublish("", "expiring", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.basicPublish(
                    "",
                    "expiring",
                    new AMQP.BasicProperties.Builder().expiration("1").build(),
                    "short".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(10_000);
        }
        owner.kill();
        JsonNode recovered = awaitQueue(
                client,
                "expiring",
                q -> q.path("active").asBoolean() && !q.path("owner").asText().equals(owner.nodeId()));
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            Poll.until(
                    Duration.ofSeconds(20),
                    () -> channel.queueDeclarePassive("expiring").getMessageCount() == 100,
                    () -> "the short one expired, the others kept");
            assertThat(System.currentTimeMillis() - published)
                    .as("all 100 still there, before their time")
                    .isLessThan(7_900);
            Poll.until(
                    Duration.ofSeconds(20),
                    () -> channel.queueDeclarePassive("expiring").getMessageCount() == 0,
                    () -> "expired on the new owner");
            long gone = System.currentTimeMillis() - published;
            assertThat(gone)
                    .as("from the first admission, not the new owner's start")
                    .isBetween(7_900L, 10_000L);
            assertThat(channel.basicGet("expiring", true)).isNull();
            System.out.println("TTL across an owner kill: recovered in epoch "
                    + recovered.path("epoch").asLong() + ", 100 messages of TTL 8 s gone " + gone
                    + " ms after their publish");
        }
    }

    /**
     * The delivery limit across a kill -9 of the owner: each message's returns are in the log, so the new owner goes on
     * counting from them; past the limit every message reaches the dead-letter queue, none lost.
     */
    @Test
    void shouldKeepDeliveryCountsWhenTheOwnerIsKilled() throws Exception {
        startCluster(3);
        declare("poison.dlq", Map.of("x-queue-type", "quorum"));
        JsonNode queue = declare(
                "poison",
                Map.of(
                        "x-queue-type",
                        "quorum",
                        "x-delivery-limit",
                        3,
                        "x-dead-letter-exchange",
                        "",
                        "x-dead-letter-routing-key",
                        "poison.dlq"));
        BrokerChild owner = byId(queue.path("owner").asText());
        BrokerChild client = other(owner);
        int messages = 20;
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            for (int i = 0; i < messages; i++) {
                channel.basicPublish("", "poison", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(10_000);
            for (int round = 0; round < 2; round++) {
                returnEach(channel, "poison", messages, round);
            }
            Thread.sleep(500); // the returned records are written within 10 ms and replicated
        }
        owner.kill();
        awaitQueue(
                client,
                "poison",
                q -> q.path("active").asBoolean() && !q.path("owner").asText().equals(owner.nodeId()));
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            returnEach(channel, "poison", messages, 2); // the third return: at the limit, still kept
            for (int i = 0; i < messages; i++) {
                GetResponse got = awaitGet(channel, "poison");
                assertThat(got.getProps().getHeaders().get("x-delivery-count")).isEqualTo(3L);
                channel.basicNack(got.getEnvelope().getDeliveryTag(), false, true); // past it: dead-lettered
            }
            Poll.until(
                    Duration.ofSeconds(20),
                    () -> channel.queueDeclarePassive("poison.dlq").getMessageCount() == messages,
                    () -> "every message dead-lettered");
            assertThat(channel.queueDeclarePassive("poison").getMessageCount()).isZero();
            Set<String> dead = new HashSet<>();
            for (GetResponse got; (got = channel.basicGet("poison.dlq", true)) != null; ) {
                dead.add(new String(got.getBody(), StandardCharsets.UTF_8));
                assertThat(got.getProps()
                                .getHeaders()
                                .get("x-first-death-reason")
                                .toString())
                        .isEqualTo("delivery_limit");
            }
            assertThat(dead).hasSize(messages);
        }
    }

    /**
     * At-least-once dead-lettering across a kill -9 of the source queue's owner: 50 expired messages wait for a route
     * when the owner is killed; the new owner dead-letters every one of them once a queue is bound, none lost.
     */
    @Test
    void shouldDeadLetterAtLeastOnceAfterTheSourceOwnerIsKilled() throws Exception {
        startCluster(3);
        JsonNode source = declare("alo.src", atLeastOnce("alo.x", 200));
        BrokerChild owner = byId(source.path("owner").asText());
        BrokerChild client = other(owner);
        int messages = 50;
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("alo.x", "fanout", true);
            channel.queueDeclare("alo.dst", true, false, false, Map.of("x-queue-type", "quorum"));
            publishConfirmed(channel, "alo.src", messages);
            Poll.until(
                    Duration.ofSeconds(20),
                    () -> channel.queueDeclarePassive("alo.src").getMessageCount() == 0,
                    () -> "expired, waiting for a route");
            Thread.sleep(500); // the dead-lettered records are written within 10 ms and replicated
        }
        owner.kill();
        awaitQueue(
                client,
                "alo.src",
                q -> q.path("active").asBoolean() && !q.path("owner").asText().equals(owner.nodeId()));
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            channel.queueBind("alo.dst", "alo.x", "");
            assertThat(drainDistinct(channel, "alo.dst", messages)).hasSize(messages);
            assertThat(channel.queueDeclarePassive("alo.src").getMessageCount()).isZero();
        }
    }

    /**
     * At-least-once dead-lettering across a kill -9 of the target queue's owner: 300 messages expire from a source owned
     * by one broker into a dead-letter queue owned by another, killed while they flow; each is settled in the source
     * only once the target confirmed it, so every one reaches the target's new owner.
     */
    @Test
    void shouldDeadLetterAtLeastOnceWhenTheTargetOwnerIsKilled() throws Exception {
        startCluster(3);
        JsonNode target = declare("alo.dst", Map.of("x-queue-type", "quorum"));
        BrokerChild targetOwner = byId(target.path("owner").asText());
        BrokerChild sourceHome = other(targetOwner);
        JsonNode source = enrolled(declare(sourceHome, "alo.src", atLeastOnce("", 1_000)));
        assertThat(source.path("owner").asText()).isNotEqualTo(targetOwner.nodeId());
        BrokerChild client = other(targetOwner, sourceHome);
        int messages = 300;
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            publishConfirmed(channel, "alo.src", messages);
            Poll.until(
                    Duration.ofSeconds(10),
                    Duration.ofMillis(1),
                    () -> channel.queueDeclarePassive("alo.src").getMessageCount() < messages,
                    () -> "expiring");
        }
        targetOwner.kill();
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            assertThat(drainDistinct(channel, "alo.dst", messages)).hasSize(messages);
            assertThat(channel.queueDeclarePassive("alo.src").getMessageCount()).isZero();
        }
    }

    /** A quorum queue's arguments dead-lettering at least once to {@code exchange} after a TTL of {@code ttlMs}. */
    private static Map<String, Object> atLeastOnce(String exchange, int ttlMs) {
        Map<String, Object> args = new HashMap<>(Map.of(
                "x-queue-type", "quorum",
                "x-message-ttl", ttlMs,
                "x-overflow", "reject-publish",
                "x-dead-letter-strategy", "at-least-once",
                "x-dead-letter-exchange", exchange));
        if (exchange.isEmpty()) {
            args.put("x-dead-letter-routing-key", "alo.dst");
        }
        return args;
    }

    private static void publishConfirmed(Channel channel, String queue, int count) throws Exception {
        channel.confirmSelect();
        for (int i = 0; i < count; i++) {
            channel.basicPublish("", queue, null, ("m" + i).getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(10_000);
    }

    /** Takes what arrives in {@code queue} until {@code count} distinct bodies were seen (at least once: repeats too). */
    private static Set<String> drainDistinct(Channel channel, String queue, int count) {
        Set<String> bodies = new HashSet<>();
        Poll.until(
                Duration.ofSeconds(60),
                () -> {
                    try {
                        for (GetResponse got; (got = channel.basicGet(queue, true)) != null; ) {
                            bodies.add(new String(got.getBody(), StandardCharsets.UTF_8));
                        }
                    } catch (java.io.IOException e) {
                        return false; // the queue's owner is moving: asked again
                    }
                    return bodies.size() >= count;
                },
                () -> bodies.size() + " of " + count + " in " + queue);
        return bodies;
    }

    /**
     * Takes all {@code count} messages of {@code queue}, each returned {@code returned} times so far, then returns them
     * (a requeued message goes back to its place at the head).
     */
    private static void returnEach(Channel channel, String queue, int count, int returned) throws Exception {
        List<Long> tags = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            GetResponse got = awaitGet(channel, queue);
            Object header = got.getProps().getHeaders() == null
                    ? null
                    : got.getProps().getHeaders().get("x-delivery-count");
            assertThat(header).as("x-delivery-count").isEqualTo(returned == 0 ? null : (long) returned);
            tags.add(got.getEnvelope().getDeliveryTag());
        }
        for (long tag : tags) {
            channel.basicNack(tag, false, true);
        }
    }

    private static GetResponse awaitGet(Channel channel, String queue) {
        return Poll.untilPresent(
                Duration.ofSeconds(20),
                () -> java.util.Optional.ofNullable(channel.basicGet(queue, false)),
                () -> "a message in " + queue);
    }

    /**
     * Dead-lettering between brokers: the retry pattern with the work queue and the retry queue owned by different
     * brokers and the client on a third, each of 50 messages rejected five times and expired back five times; every
     * one comes back with both counts at 5, none lost, none twice.
     */
    @Test
    void shouldRunTheRetryPatternBetweenQueuesOwnedByDifferentBrokers() throws Exception {
        startCluster(3);
        JsonNode work = declare("dl.work", Map.of("x-queue-type", "quorum", "x-dead-letter-exchange", "dl.retry"));
        // the first owner is the broker declared through (x-queue-leader-locator client-local)
        BrokerChild elsewhere = other(byId(work.path("owner").asText()));
        String wait = "dl.wait";
        JsonNode waiting = enrolled(declare(
                elsewhere,
                wait,
                Map.of(
                        "x-queue-type", "quorum",
                        "x-message-ttl", 100,
                        "x-dead-letter-exchange", "",
                        "x-dead-letter-routing-key", "dl.work")));
        assertThat(waiting.path("owner").asText())
                .isNotEqualTo(work.path("owner").asText());
        BrokerChild client = other(byId(work.path("owner").asText()), elsewhere);
        int messages = 50;
        Map<String, Integer> done = new HashMap<>();
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("dl.retry", "direct", true);
            channel.queueBind(wait, "dl.retry", "dl.work");
            channel.confirmSelect();
            for (int i = 0; i < messages; i++) {
                channel.basicPublish("", "dl.work", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(10_000);
            String retried = wait;
            Poll.until(
                    Duration.ofSeconds(60),
                    Duration.ofMillis(5),
                    () -> {
                        com.rabbitmq.client.GetResponse got = channel.basicGet("dl.work", false);
                        if (got == null) {
                            return done.size() == messages;
                        }
                        long rejected = deathCount(got, "dl.work", "rejected");
                        if (rejected < 5) {
                            channel.basicReject(got.getEnvelope().getDeliveryTag(), false);
                            return false;
                        }
                        assertThat(deathCount(got, retried, "expired")).isEqualTo(5);
                        done.merge(new String(got.getBody(), StandardCharsets.UTF_8), 1, Integer::sum);
                        channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
                        return done.size() == messages;
                    },
                    () -> done.size() + " of " + messages + " came back five times");
            assertThat(done.values()).as("each once").containsOnly(1);
            assertThat(channel.queueDeclarePassive(wait).getMessageCount()).isZero();
        }
    }

    /**
     * {@code x-expires} on a replicated queue: kept while a client on another broker consumes from it, deleted on
     * every broker (one metadata command) once unused for its time.
     */
    @Test
    void shouldDeleteAnUnusedReplicatedQueueOnEveryBroker() throws Exception {
        startCluster(3);
        JsonNode queue = declare("expiring.queue", Map.of("x-queue-type", "quorum", "x-expires", 1_500));
        BrokerChild client = other(byId(queue.path("owner").asText()));
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            String tag = channel.basicConsume("expiring.queue", true, (t, d) -> {}, t -> {});
            Thread.sleep(3_000);
            for (BrokerChild broker : brokers) {
                assertThat(queue(broker, "expiring.queue").path("name").asText())
                        .as("consumed from: kept on %s", broker.nodeId())
                        .isEqualTo("expiring.queue");
            }
            channel.basicCancel(tag);
        }
        long cancelled = System.currentTimeMillis();
        for (BrokerChild broker : brokers) {
            Poll.until(
                    Duration.ofSeconds(15),
                    () -> !get(broker, "/api/queues").toString().contains("\"expiring.queue\""),
                    () -> "expiring.queue still listed on " + broker.nodeId());
        }
        assertThat(System.currentTimeMillis() - cancelled)
                .as("not before its time")
                .isGreaterThanOrEqualTo(1_500);
    }

    /**
     * {@code x-overflow} reject-publish on a replicated queue, published to through a broker that is not its owner:
     * the publishes over the limit are nacked (never re-sent, never appended), the others confirmed.
     */
    @Test
    void shouldNackPublishesForwardedToAFullReplicatedQueue() throws Exception {
        startCluster(3);
        JsonNode queue = declare(
                "full.queue", Map.of("x-queue-type", "quorum", "x-max-length", 5, "x-overflow", "reject-publish"));
        BrokerChild client = other(byId(queue.path("owner").asText()));
        try (Connection connection = QueueTraffic.connect(client)) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            int acked = 0;
            int nacked = 0;
            for (int i = 0; i < 10; i++) {
                channel.basicPublish("", "full.queue", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
                if (channel.waitForConfirms(10_000)) {
                    acked++;
                } else {
                    nacked++;
                }
            }
            assertThat(acked).isEqualTo(5);
            assertThat(nacked).isEqualTo(5);
            assertThat(channel.queueDeclarePassive("full.queue").getMessageCount())
                    .isEqualTo(5);
            assertThat(new String(channel.basicGet("full.queue", true).getBody(), StandardCharsets.UTF_8))
                    .isEqualTo("m0");
        }
    }

    /** The count of a message's {@code x-death} entry for {@code queue} and {@code reason}, 0 without one. */
    @SuppressWarnings("unchecked")
    private static long deathCount(com.rabbitmq.client.GetResponse got, String queue, String reason) {
        Map<String, Object> headers = got.getProps().getHeaders();
        if (headers == null || !(headers.get("x-death") instanceof List<?> deaths)) {
            return 0;
        }
        for (Object death : deaths) {
            Map<String, Object> entry = (Map<String, Object>) death;
            if (queue.equals(String.valueOf(entry.get("queue")))
                    && reason.equals(String.valueOf(entry.get("reason")))) {
                return (Long) entry.get("count");
            }
        }
        return 0;
    }

    private static boolean countsAgain(JsonNode queue, BrokerChild follower) {
        JsonNode status = queue.path("owner_status");
        return followers(queue).contains(follower.nodeId())
                && status.path("learners").isArray()
                && status.path("learners").isEmpty()
                && status.path("follower_durable").path(follower.nodeId()).asLong(-1)
                        >= status.path("commit").asLong();
    }

    /** Every confirmed message consumed, nothing unexpected, duplicates only as redeliveries; no nack if asked. */
    private static void totalQueueCheck(QueueTraffic traffic, boolean noNacks) {
        assertThat(traffic.awaitConsumed(CONSUME))
                .as("confirmed but never consumed: %s", traffic.summary())
                .isEmpty();
        assertThat(traffic.unexpected()).as(traffic.summary()).isZero();
        assertThat(traffic.duplicatesNotRedelivered()).as(traffic.summary()).isZero();
        if (noNacks) {
            assertThat(traffic.nacked()).as(traffic.summary()).isZero();
            assertThat(traffic.confirmed()).as(traffic.summary()).isEqualTo(traffic.published());
        }
    }

    private JsonNode declare(String name, Map<String, Object> arguments) throws Exception {
        return enrolled(declare(brokers.get(0), name, arguments));
    }

    /**
     * The queue once every follower counts: a member still catching up (not installed) keeps a new queue from being
     * enrolled for its first tens of milliseconds, and the hold and the drop apply only to an enrolled queue (a
     * follower killed before then is replaced through a recovery), so every failover case starts from one.
     */
    private JsonNode enrolled(JsonNode declared) throws Exception {
        BrokerChild owner = byId(declared.path("owner").asText());
        return awaitQueue(
                owner,
                declared.path("name").asText(),
                q -> followers(q).stream().allMatch(follower -> countsAgain(q, byId(follower))));
    }

    private static JsonNode declare(BrokerChild on, String name, Map<String, Object> arguments) throws Exception {
        try (Connection declaring = QueueTraffic.connect(on)) {
            declaring.createChannel().queueDeclare(name, true, false, false, new HashMap<>(arguments));
        }
        return queue(on, name);
    }

    private static List<String> followers(JsonNode queue) {
        List<String> followers = new ArrayList<>();
        queue.path("followers").forEach(f -> followers.add(f.asText()));
        return followers;
    }

    private BrokerChild byId(String id) {
        return brokers.stream().filter(b -> b.nodeId().equals(id)).findFirst().orElseThrow();
    }

    private List<BrokerChild> others(BrokerChild... excluded) {
        List<BrokerChild> others = new ArrayList<>(brokers);
        others.removeAll(List.of(excluded));
        return others;
    }

    private BrokerChild other(BrokerChild... excluded) {
        return others(excluded).get(0);
    }
}
