package io.ganglion.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.ganglion.broker.FileMetadataLogs;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DownReason;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.testing.Poll;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The controller runtime over a one-node metadata log (which always leads): liveness reaches the image. */
class ControllerTest {
    private static final NodeId A = new NodeId("a");
    private static final NodeId B = new NodeId("b");

    @TempDir
    Path dir;

    @Test
    void shouldCommitHeartbeatsAndTakeDownANodeWhoseConnectionClosed() throws Exception {
        try (MetadataLog log = FileMetadataLogs.open(dir);
                Controller controller = new Controller(A, log, Clock.systemUTC(), request -> {})) {
            controller.heartbeat(A, new Incarnation(1), false);
            controller.heartbeat(B, new Incarnation(4), true);
            awaitImage(log, states -> states.stream().filter(NodeState::live).count() == 2);
            NodeState b = state(log, B);
            assertThat(b.incarnation()).isEqualTo(new Incarnation(4));
            assertThat(b.draining()).isTrue();

            controller.connectionClosed(B);
            awaitImage(log, states -> states.stream().anyMatch(s -> s.node().equals(B) && !s.live()));
            assertThat(state(log, B).reason()).contains(DownReason.EAGER_FAILOVER);
            assertThat(state(log, A).live()).isTrue();

            controller.heartbeat(B, new Incarnation(5), false);
            awaitImage(
                    log,
                    states -> states.stream()
                            .anyMatch(s -> s.node().equals(B)
                                    && s.live()
                                    && s.incarnation().value() == 5));
            assertThat(controller.snapshot().active()).isTrue();
        }
    }

    /** A stopping broker's links close and its leadership ends after its controller closed: nothing may throw. */
    @Test
    void shouldDropWhatArrivesAfterItClosed() throws Exception {
        try (MetadataLog log = FileMetadataLogs.open(dir)) {
            Controller controller = new Controller(A, log, Clock.systemUTC(), request -> {});
            controller.heartbeat(A, new Incarnation(1), false);
            awaitImage(log, states -> states.stream().anyMatch(NodeState::live));
            controller.close();

            assertThatCode(() -> {
                        controller.connectionClosed(B);
                        controller.connectionRefused(B);
                        controller.heartbeat(B, new Incarnation(2), false);
                        controller.recoveryReply(new CoordinationCommand.CommitLiveSet(List.of()));
                    })
                    .doesNotThrowAnyException();
        }
    }

    /**
     * A controller that stood still (a long pause, SIGSTOP) past the expiry period ticks before it handles the
     * heartbeats that waited meanwhile: the silence is its own, and it takes no one down for it (it took down every
     * broker, itself included). A broker that stays silent for an expiry period after that still goes.
     */
    @Test
    void shouldNotExpireBrokersForTheTimeItStoodStill() throws Exception {
        java.util.concurrent.atomic.AtomicLong skewMs = new java.util.concurrent.atomic.AtomicLong();
        Clock clock = new SkewedClock(skewMs);
        java.util.concurrent.atomic.AtomicBoolean beating = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicBoolean bBeats = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.ScheduledExecutorService beats =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try (MetadataLog log = FileMetadataLogs.open(dir);
                Controller controller = new Controller(A, log, clock, request -> {})) {
            log.propose(new MetadataCommand.Coordination(
                            new CoordinationCommand.SetSettings(java.util.Map.of("liveness.expiry_ms", "1000"))))
                    .get(10, TimeUnit.SECONDS);
            beats.scheduleAtFixedRate(
                    () -> {
                        if (beating.get()) {
                            controller.heartbeat(A, new Incarnation(1), false);
                            if (bBeats.get()) {
                                controller.heartbeat(B, new Incarnation(1), false);
                            }
                        }
                    },
                    0,
                    50,
                    TimeUnit.MILLISECONDS);
            awaitImage(log, states -> states.stream().filter(NodeState::live).count() == 2);
            Thread.sleep(1_300); // the controller has watched for one expiry period: expiry is armed

            beating.set(false);
            skewMs.addAndGet(5_000); // its next tick comes 5 s after the one before, as after a freeze
            List<Boolean> seen = new ArrayList<>();
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
            while (System.nanoTime() < until) {
                seen.add(state(log, A).live() && state(log, B).live());
                Thread.sleep(20);
            }
            beating.set(true); // the heartbeats that waited behind the tick
            until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
            while (System.nanoTime() < until) {
                seen.add(state(log, A).live() && state(log, B).live());
                Thread.sleep(20);
            }
            assertThat(seen).as("both live after the standstill").doesNotContain(false);

            bBeats.set(false);
            awaitImage(log, states -> states.stream().anyMatch(s -> s.node().equals(B) && !s.live()));
            assertThat(state(log, B).reason()).contains(DownReason.LIVENESS_EXPIRY);
            assertThat(state(log, A).live()).isTrue();
        } finally {
            beats.shutdownNow();
        }
    }

    /** A tick period longer than half the expiry period is no standstill: expiry still takes a silent broker down. */
    @Test
    void shouldStillExpireASilentBrokerWithATickSlowerThanHalfTheExpiry() throws Exception {
        try (MetadataLog log = FileMetadataLogs.open(dir);
                Controller controller = new Controller(A, log, Clock.systemUTC(), request -> {})) {
            log.propose(new MetadataCommand.Coordination(new CoordinationCommand.SetSettings(
                            java.util.Map.of("liveness.expiry_ms", "400", "controller.tick_ms", "300"))))
                    .get(10, TimeUnit.SECONDS);
            controller.heartbeat(A, new Incarnation(1), false);
            controller.heartbeat(B, new Incarnation(1), false);
            awaitImage(log, states -> states.stream().filter(NodeState::live).count() == 2);
            awaitImage(log, states -> states.stream().noneMatch(NodeState::live)); // neither heartbeats again
            assertThat(state(log, B).reason()).contains(DownReason.LIVENESS_EXPIRY);
        }
    }

    /** The system clock, {@code skewMs} ahead, in {@code zone}. */
    private static final class SkewedClock extends Clock {
        private final java.util.concurrent.atomic.AtomicLong skewMs;
        private final java.time.ZoneId zone;

        SkewedClock(java.util.concurrent.atomic.AtomicLong skewMs) {
            this(skewMs, java.time.ZoneOffset.UTC);
        }

        private SkewedClock(java.util.concurrent.atomic.AtomicLong skewMs, java.time.ZoneId zone) {
            this.skewMs = skewMs;
            this.zone = zone;
        }

        @Override
        public java.time.ZoneId getZone() {
            return zone;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return new SkewedClock(skewMs, zone);
        }

        @Override
        public java.time.Instant instant() {
            return java.time.Instant.ofEpochMilli(millis());
        }

        @Override
        public long millis() {
            return System.currentTimeMillis() + skewMs.get();
        }
    }

    /**
     * Every entry the controller proposes is fenced with the term it leads in: the log rejects it from an entry of any
     * other term (a controller deposed while it ticked; see RatisMetadataLogIT).
     */
    @Test
    void shouldFenceEveryProposalWithTheTermItLeadsIn() throws Exception {
        try (MetadataLog file = FileMetadataLogs.open(dir)) {
            List<MetadataCommand> proposed = java.util.Collections.synchronizedList(new ArrayList<>());
            MetadataLog termSeven = new Passing(file, true, proposed, 7);
            try (Controller controller = new Controller(A, termSeven, Clock.systemUTC(), r -> {})) {
                controller.heartbeat(A, new Incarnation(1), false);
                controller.heartbeat(B, new Incarnation(1), false);
                awaitImage(
                        file, states -> states.stream().filter(NodeState::live).count() == 2);
                controller.connectionClosed(B);
                awaitImage(
                        file, states -> states.stream().anyMatch(s -> s.node().equals(B) && !s.live()));
            }
            synchronized (proposed) {
                assertThat(proposed)
                        .isNotEmpty()
                        .allSatisfy(command -> assertThat(command)
                                .isInstanceOfSatisfying(
                                        MetadataCommand.Fenced.class,
                                        fenced ->
                                                assertThat(fenced.leaderTerm()).isEqualTo(7)));
            }
        }
    }

    @Test
    void shouldNotTakeDownANodeThatHeartbeatsAgainWithinTheEagerFailoverDelay() throws Exception {
        try (MetadataLog log = FileMetadataLogs.open(dir);
                Controller controller = new Controller(A, log, Clock.systemUTC(), request -> {})) {
            controller.heartbeat(A, new Incarnation(1), false);
            controller.heartbeat(B, new Incarnation(1), false);
            awaitImage(log, states -> states.stream().filter(NodeState::live).count() == 2);
            controller.connectionClosed(B);
            controller.heartbeat(B, new Incarnation(1), false); // reconnected at once
            List<Boolean> seen = new ArrayList<>();
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400); // 16 x liveness.eager_failover_ms
            while (System.nanoTime() < until) {
                seen.add(state(log, B).live());
                Thread.sleep(20);
            }
            assertThat(seen).doesNotContain(false);
        }
    }

    /**
     * A killed broker's peer port refuses connections as soon as its links close: the controller need not wait
     * {@code liveness.eager_failover_ms} to tell it from a live broker whose link dropped.
     */
    @Test
    void shouldTakeDownAtOnceANodeWhosePortRefusesAfterItsConnectionClosed() throws Exception {
        try (MetadataLog log = FileMetadataLogs.open(dir);
                Controller controller = new Controller(A, log, Clock.systemUTC(), request -> {})) {
            log.propose(new MetadataCommand.Coordination(new io.ganglion.coordination.CoordinationCommand.SetSettings(
                            java.util.Map.of("liveness.eager_failover_ms", "600000"))))
                    .get(10, TimeUnit.SECONDS);
            controller.heartbeat(A, new Incarnation(1), false);
            controller.heartbeat(B, new Incarnation(1), false);
            awaitImage(log, states -> states.stream().filter(NodeState::live).count() == 2);

            controller.connectionRefused(B); // no closed connection: a stray refusal means nothing
            controller.connectionClosed(B);
            Thread.sleep(200);
            assertThat(state(log, B).live())
                    .as("waits for the eager failover delay")
                    .isTrue();

            controller.connectionRefused(B);
            awaitImage(log, states -> states.stream().anyMatch(s -> s.node().equals(B) && !s.live()));
            assertThat(state(log, B).reason()).contains(DownReason.EAGER_FAILOVER);
        }
    }

    @Test
    void shouldRunTheTickOnStandbyWithoutProposingAnything() throws Exception {
        try (MetadataLog file = FileMetadataLogs.open(dir)) {
            List<NodeState> live = new ArrayList<>();
            for (NodeId node : List.of(A, B, new NodeId("c"))) {
                live.add(new NodeState(node, true, 0, null, new Incarnation(1), false));
            }
            file.propose(new MetadataCommand.Coordination(
                            new io.ganglion.coordination.CoordinationCommand.CommitLiveSet(live)))
                    .get(10, TimeUnit.SECONDS);
            long appliedBefore = file.image().appliedIndex();
            MetadataLog follower = new Passing(file, false, new ArrayList<>());
            try (Controller controller = new Controller(A, follower, Clock.systemUTC(), request -> {})) {
                Poll.within(Duration.ofSeconds(10), Duration.ofMillis(20), () -> controller.rehearsalTicks() >= 3);
                assertThat(controller.rehearsalTicks()).isGreaterThanOrEqualTo(3);
                assertThat(controller.snapshot().active()).isFalse();
            }
            assertThat(file.image().appliedIndex())
                    .as("nothing proposed: B and c stay live")
                    .isEqualTo(appliedBefore);
            assertThat(state(file, B).live()).isTrue();
        }
    }

    /**
     * The controller that runs all along rehearses a failover tick too (its first real one took 20-32 ms cold in the
     * failover bench, 1 ms warm); the rehearsal proposes nothing and sends nothing.
     */
    @Test
    void shouldRehearseAFailoverTickOnTheActiveControllerWithoutActingOnIt() throws Exception {
        try (MetadataLog file = FileMetadataLogs.open(dir)) {
            List<MetadataCommand> proposed = java.util.Collections.synchronizedList(new ArrayList<>());
            List<io.ganglion.coordination.RecoveryRequest> sent =
                    java.util.Collections.synchronizedList(new ArrayList<>());
            MetadataLog leader = new Passing(file, true, proposed);
            try (Controller controller = new Controller(A, leader, Clock.systemUTC(), sent::add)) {
                for (NodeId node : List.of(A, B, new NodeId("c"))) {
                    controller.heartbeat(node, new Incarnation(1), false);
                }
                awaitImage(
                        file, states -> states.stream().filter(NodeState::live).count() == 3);
                int proposedBefore = proposed.size();
                long ticksBefore = controller.rehearsalTicks();
                Poll.within(
                        Duration.ofSeconds(10),
                        Duration.ofMillis(20),
                        () -> controller.rehearsalTicks() >= ticksBefore + 3);
                assertThat(controller.rehearsalTicks()).isGreaterThanOrEqualTo(ticksBefore + 3);
                assertThat(controller.snapshot().active()).isTrue();
                assertThat(proposed).as("nothing proposed after the live set").hasSize(proposedBefore);
                assertThat(sent).isEmpty();
            }
            assertThat(state(file, B).live()).isTrue();
        }
    }

    /**
     * Every step of a recovery sends the requests still unanswered again, and brokers answer each: the failover bench's
     * logs showed one seal reply committed up to four times, each copy a metadata commit ahead of the recovery's next
     * step. A reply the image (with what is in flight) already holds is not proposed again.
     */
    @Test
    void shouldNotProposeARecoveryReplyTheImageHoldsAlready() throws Exception {
        List<MetadataCommand> proposed = java.util.Collections.synchronizedList(new ArrayList<>());
        ownerLost(proposed, (controller, request) -> {
            io.ganglion.coordination.CoordinationCommand reply = switch (request) {
                case io.ganglion.coordination.RecoveryRequest.Install install -> installed(install);
                case io.ganglion.coordination.RecoveryRequest.Seal seal -> sealedAt(seal, 10);
                default -> null;
            };
            if (reply != null) {
                controller.recoveryReply(reply); // a broker answers...
                controller.recoveryReply(reply); // ...and answers the request sent again
            }
        });
        List<io.ganglion.coordination.HistoryRecord> replies = new ArrayList<>();
        for (List<io.ganglion.coordination.HistoryRecord> entry : historyRecords(proposed)) {
            for (io.ganglion.coordination.HistoryRecord record : entry) {
                if (record instanceof io.ganglion.coordination.HistoryRecord.SealReceived
                        || record instanceof io.ganglion.coordination.HistoryRecord.MemberInstalled) {
                    replies.add(record);
                }
            }
        }
        assertThat(replies)
                .as("each reply proposed once though each came twice")
                .doesNotHaveDuplicates()
                // installs of epoch 1 and the seals of epoch 2; both seals end at the point (1, 10), so they are
                // the installs of epoch 2 (proposed by the tick, not by a reply)
                .hasSizeGreaterThanOrEqualTo(3 + 2);
    }

    /**
     * The owner dies and the two survivors' seals come 30 ms apart: the first one, which moves nothing on alone (R =
     * 2), is held for the second, and both go to the log in one entry with the point, the installs their seals show
     * and the activation. Proposed alone, the first held the log's one round in flight and the second waited for it.
     */
    @Test
    void shouldProposeAHeldSealWithTheOneThatCompletesRAndTheActivationInOneEntry() throws Exception {
        List<MetadataCommand> proposed = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.ScheduledExecutorService later =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        java.util.concurrent.atomic.AtomicInteger sealsAnswered = new java.util.concurrent.atomic.AtomicInteger();
        try {
            ownerLost(proposed, (controller, request) -> {
                switch (request) {
                    case io.ganglion.coordination.RecoveryRequest.Install install ->
                        controller.recoveryReply(installed(install));
                    case io.ganglion.coordination.RecoveryRequest.Seal seal ->
                        // the first seal asked for now, the next 30 ms later (less than controller.tick_ms)
                        later.schedule(
                                () -> controller.recoveryReply(sealedAt(seal, 10)),
                                sealsAnswered.getAndIncrement() == 0 ? 0 : 30,
                                TimeUnit.MILLISECONDS);
                    default -> {}
                }
            });
        } finally {
            later.shutdownNow();
        }
        List<io.ganglion.coordination.HistoryRecord> activating = historyRecords(proposed).stream()
                .filter(entry -> entry.contains(
                        new io.ganglion.coordination.HistoryRecord.Activated(io.ganglion.coordination.Epoch.of(2))))
                .findFirst()
                .orElseThrow();
        assertThat(activating)
                .as("both seals, the point, the installs they show and the activation in one entry")
                .filteredOn(record -> record instanceof io.ganglion.coordination.HistoryRecord.SealReceived)
                .hasSize(2);
        assertThat(activating)
                .anyMatch(record -> record instanceof io.ganglion.coordination.HistoryRecord.RecoveryPointChosen);
    }

    /**
     * A controller on a with b and c live, a queue of 3 copies activated in epoch 1, then its owner's link closes;
     * returns once epoch 2 is active. The controller's requests go to {@code answer}, with the controller; every
     * proposal is noted in {@code proposed}.
     */
    private void ownerLost(
            List<MetadataCommand> proposed,
            java.util.function.BiConsumer<Controller, io.ganglion.coordination.RecoveryRequest> answer)
            throws Exception {
        try (MetadataLog file = FileMetadataLogs.open(dir)) {
            MetadataLog counting = new Passing(file, true, proposed);
            java.util.concurrent.atomic.AtomicReference<Controller> self =
                    new java.util.concurrent.atomic.AtomicReference<>();
            try (Controller controller =
                    new Controller(A, counting, Clock.systemUTC(), request -> answer.accept(self.get(), request))) {
                self.set(controller);
                for (NodeId node : List.of(A, B, new NodeId("c"))) {
                    controller.heartbeat(node, new Incarnation(1), false);
                }
                awaitImage(
                        file, states -> states.stream().filter(NodeState::live).count() == 3);
                io.ganglion.coordination.ObjectId queue = io.ganglion.coordination.ObjectId.of("/", "q");
                counting.propose(new MetadataCommand.Coordination(
                                new io.ganglion.coordination.CoordinationCommand.CreateObject(
                                        new io.ganglion.coordination.ObjectSpec(
                                                queue,
                                                io.ganglion.coordination.ObjectKind.QUEUE,
                                                3,
                                                io.ganglion.coordination.DurabilityMode.MAJORITY_DURABLE))))
                        .get(10, TimeUnit.SECONDS);
                NodeId owner = awaitActive(file, queue, 1);
                // the owner dies: epoch 2 needs seals from the two others
                controller.connectionClosed(owner);
                awaitActive(file, queue, 2);
            }
        }
    }

    /** A broker's answer to {@code install}, as the controller's broker hands it over. */
    private static io.ganglion.coordination.CoordinationCommand installed(
            io.ganglion.coordination.RecoveryRequest.Install install) {
        return new io.ganglion.coordination.CoordinationCommand.AppendHistory(
                install.object(),
                new io.ganglion.coordination.HistoryRecord.MemberInstalled(install.epoch(), install.node()));
    }

    /** A broker's answer to {@code seal}: its log durably ends at {@code offset} of the sealed epoch. */
    private static io.ganglion.coordination.CoordinationCommand sealedAt(
            io.ganglion.coordination.RecoveryRequest.Seal seal, long offset) {
        return new io.ganglion.coordination.CoordinationCommand.AppendHistory(
                seal.object(),
                new io.ganglion.coordination.HistoryRecord.SealReceived(
                        seal.epoch(),
                        new io.ganglion.coordination.SealReply(
                                seal.node(),
                                io.ganglion.coordination.LogPosition.of(
                                        seal.epoch().value(), offset),
                                offset)));
    }

    /** The history records of each proposal, a batch's in its order; an entry without any gives an empty list. */
    private static List<List<io.ganglion.coordination.HistoryRecord>> historyRecords(List<MetadataCommand> proposed) {
        List<List<io.ganglion.coordination.HistoryRecord>> entries = new ArrayList<>();
        synchronized (proposed) {
            for (MetadataCommand proposal : proposed) {
                MetadataCommand command =
                        proposal instanceof MetadataCommand.Fenced fenced ? fenced.command() : proposal;
                List<io.ganglion.coordination.CoordinationCommand> commands = switch (command) {
                    case MetadataCommand.Coordination(io.ganglion.coordination.CoordinationCommand.Batch batch) ->
                        batch.commands();
                    case MetadataCommand.Coordination(io.ganglion.coordination.CoordinationCommand one) -> List.of(one);
                    default -> List.of();
                };
                entries.add(commands.stream()
                        .filter(each -> each instanceof io.ganglion.coordination.CoordinationCommand.AppendHistory)
                        .map(each -> ((io.ganglion.coordination.CoordinationCommand.AppendHistory) each).record())
                        .toList());
            }
        }
        return entries;
    }

    private static io.ganglion.coordination.NodeId awaitActive(
            MetadataLog log, io.ganglion.coordination.ObjectId queue, long epoch) {
        return Poll.untilPresent(
                Duration.ofSeconds(10),
                () -> active(log, queue)
                        .filter(active -> active.epoch().value() == epoch)
                        .map(io.ganglion.coordination.Assignment::owner),
                () -> "epoch " + epoch + " never activated: " + active(log, queue));
    }

    private static java.util.Optional<io.ganglion.coordination.Assignment> active(
            MetadataLog log, io.ganglion.coordination.ObjectId queue) {
        return log.image().coordination().object(queue).flatMap(io.ganglion.coordination.AcceptedHistory::validate);
    }

    /**
     * The metadata log as a broker sees it: reads and proposals pass through, each proposal is noted in {@code
     * proposed}; with {@code leads} false some other broker leads and leadership never comes; it leads in {@code term}.
     */
    private record Passing(MetadataLog log, boolean leads, List<MetadataCommand> proposed, long term)
            implements MetadataLog {
        Passing(MetadataLog log, boolean leads, List<MetadataCommand> proposed) {
            this(log, leads, proposed, 0);
        }

        @Override
        public java.util.OptionalLong leaderTerm() {
            return isLeader() ? java.util.OptionalLong.of(term) : java.util.OptionalLong.empty();
        }

        @Override
        public CompletableFuture<MetadataImage.Applied> propose(MetadataCommand command) {
            proposed.add(command);
            return log.propose(command);
        }

        @Override
        public MetadataImage image() {
            return log.image();
        }

        @Override
        public void subscribe(Consumer<MetadataImage> listener) {
            log.subscribe(listener);
        }

        @Override
        public boolean isLeader() {
            return leads && log.isLeader();
        }

        @Override
        public void onLeaderChange(Consumer<Boolean> listener) {
            if (leads) {
                log.onLeaderChange(listener);
            }
        }

        @Override
        public void close() {}
    }

    private static NodeState state(MetadataLog log, NodeId node) {
        return log.image().coordination().liveSet().node(node).orElseThrow();
    }

    private static void awaitImage(MetadataLog log, Predicate<List<NodeState>> condition) {
        Poll.until(
                Duration.ofSeconds(10),
                () -> condition.test(
                        List.copyOf(log.image().coordination().liveSet().nodes().values())),
                () -> "live set never matched: " + log.image().coordination().liveSet());
    }
}
