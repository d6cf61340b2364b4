package io.ganglion.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.broker.FileMetadataLogs;
import io.ganglion.coordination.DownReason;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.metadata.MetadataLog;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

    @Test
    void shouldRunTheTickOnStandbyWithoutProposingAnything() throws Exception {
        try (MetadataLog file = FileMetadataLogs.open(dir)) {
            List<NodeState> live = new ArrayList<>();
            for (NodeId node : List.of(A, B, new NodeId("c"))) {
                live.add(new NodeState(node, true, 0, null, new Incarnation(1), false));
            }
            file.propose(new io.ganglion.metadata.MetadataCommand.Coordination(
                            new io.ganglion.coordination.CoordinationCommand.CommitLiveSet(live)))
                    .get(10, TimeUnit.SECONDS);
            long appliedBefore = file.image().appliedIndex();
            MetadataLog follower = new NotLeading(file);
            try (Controller controller = new Controller(A, follower, Clock.systemUTC(), request -> {})) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (controller.standbyTicks() < 3 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(controller.standbyTicks()).isGreaterThanOrEqualTo(3);
                assertThat(controller.snapshot().active()).isFalse();
            }
            assertThat(file.image().appliedIndex())
                    .as("nothing proposed: B and c stay live")
                    .isEqualTo(appliedBefore);
            assertThat(state(file, B).live()).isTrue();
        }
    }

    /** A metadata log that some other broker leads: reads pass through, leadership never comes. */
    private record NotLeading(MetadataLog log) implements MetadataLog {
        @Override
        public java.util.concurrent.CompletableFuture<io.ganglion.metadata.MetadataImage.Applied> propose(
                io.ganglion.metadata.MetadataCommand command) {
            return log.propose(command);
        }

        @Override
        public io.ganglion.metadata.MetadataImage image() {
            return log.image();
        }

        @Override
        public void subscribe(java.util.function.Consumer<io.ganglion.metadata.MetadataImage> listener) {
            log.subscribe(listener);
        }

        @Override
        public boolean isLeader() {
            return false;
        }

        @Override
        public void onLeaderChange(java.util.function.Consumer<Boolean> listener) {}

        @Override
        public void close() {}
    }

    private static NodeState state(MetadataLog log, NodeId node) {
        return log.image().coordination().liveSet().node(node).orElseThrow();
    }

    private static void awaitImage(MetadataLog log, Predicate<List<NodeState>> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.test(
                List.copyOf(log.image().coordination().liveSet().nodes().values()))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "live set never matched: " + log.image().coordination().liveSet());
            }
            Thread.sleep(10);
        }
    }
}
