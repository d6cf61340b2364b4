package io.ganglion.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataCommand.Coordination;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataImageCodec;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.metadata.Rejection;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three Ratis metadata logs in one JVM on loopback ports. */
class RatisMetadataLogIT {
    @TempDir
    Path root;

    private RatisTestCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static MetadataImage.Applied commit(RatisMetadataLog log, MetadataCommand command) throws Exception {
        return log.propose(command).get(RatisTestCluster.DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }

    private static MetadataCommand queue(String name) {
        return new MetadataCommand.DeclareQueue(
                "/", new QueueDef(name, Math.abs(name.hashCode()) + 1L, QueueType.QUORUM, true, "", false, Map.of()));
    }

    @Test
    void shouldReplicateCommandsProposedThroughLeaderAndFollowers() throws Exception {
        cluster = RatisTestCluster.create(root, 3, config -> config);
        cluster.startAll();
        RatisMetadataLog leader = cluster.awaitLeader();
        RatisMetadataLog follower = cluster.aFollower();

        MetadataImage.Applied viaFollower = commit(follower, new MetadataCommand.PutVhost("/"));
        assertThat(viaFollower.accepted()).isTrue();
        assertThat(viaFollower.image().vhost("/"))
                .as("the image the command produced")
                .isPresent();

        MetadataImage.Applied viaLeader = commit(leader, queue("orders"));
        assertThat(viaLeader.accepted()).isTrue();
        assertThat(viaLeader.image().vhost("/").orElseThrow().queue("orders")).isPresent();
        assertThat(viaLeader.image().appliedIndex())
                .isEqualTo(viaFollower.image().appliedIndex() + 1);

        ObjectSpec spec =
                new ObjectSpec(ObjectId.of("/", "orders"), ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE);
        assertThat(commit(follower, new Coordination(new CoordinationCommand.CreateObject(spec)))
                        .accepted())
                .isTrue();
        assertThat(commit(
                                leader,
                                new Coordination(new CoordinationCommand.SetSettings(
                                        Map.of("replication.follower_loss_hold_ms", "5000"))))
                        .accepted())
                .isTrue();

        MetadataImage image = cluster.awaitConverged();
        assertThat(image.appliedIndex()).isEqualTo(4);
        assertThat(image.coordination().object(spec.id())).isPresent();
        assertThat(image.coordination().settings().overrides())
                .containsEntry("replication.follower_loss_hold_ms", 5000L);
        String agreed = RatisTestCluster.await("every server to know the same leader", () -> {
            List<Optional<String>> known =
                    cluster.running().stream().map(RatisMetadataLog::leaderId).toList();
            return known.stream().distinct().count() == 1 ? known.get(0) : Optional.empty();
        });
        assertThat(cluster.ids()).contains(agreed);
    }

    /**
     * A sync on a follower reads through the leader: a follower's own read-index request to the leader needs Ratis's
     * asynchronous server protocol, which the Netty transport lacks, so it never got an answer and every sync there
     * waited out its 2 s timeout.
     */
    @Test
    void shouldCompleteAProposalOnlyAfterTheProposersSubscribersSawItsImage() throws Exception {
        cluster = RatisTestCluster.create(root, 3, config -> config);
        cluster.startAll();
        cluster.awaitLeader();
        RatisMetadataLog follower = cluster.aFollower();
        List<Long> seen = new CopyOnWriteArrayList<>();
        follower.subscribe(image -> {
            sleepQuietly(20); // a slow subscriber: the proposer's future must still wait for it
            seen.add(image.appliedIndex());
        });

        for (int i = 0; i < 5; i++) {
            MetadataImage.Applied applied =
                    commit(follower, i == 0 ? new MetadataCommand.PutVhost("/") : queue("q" + i));
            assertThat(seen)
                    .as("subscriber saw index %d", applied.image().appliedIndex())
                    .contains(applied.image().appliedIndex());
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void shouldSyncAFollowerThroughTheLeaderReadIndex() throws Exception {
        cluster = RatisTestCluster.create(root, 3, config -> config);
        cluster.startAll();
        RatisMetadataLog leader = cluster.awaitLeader();
        RatisMetadataLog follower = cluster.aFollower();
        commit(leader, new MetadataCommand.PutVhost("/"));
        commit(leader, queue("declared-on-the-leader"));

        long index = follower.readIndex().get(10, TimeUnit.SECONDS);
        assertThat(index).as("the leader's applied index").isPositive();
        assertThat(leader.readIndex().get(10, TimeUnit.SECONDS)).isGreaterThanOrEqualTo(index);
        MetadataImage synced = follower.sync().get(10, TimeUnit.SECONDS);
        assertThat(synced.vhost("/").flatMap(vhost -> vhost.queue("declared-on-the-leader")))
                .isPresent();
    }

    @Test
    void shouldCompleteRejectedCommandsWithTheirRejection() throws Exception {
        cluster = RatisTestCluster.create(root, 3, config -> config);
        cluster.startAll();
        cluster.awaitLeader();
        RatisMetadataLog follower = cluster.aFollower();
        commit(follower, new MetadataCommand.PutVhost("/"));

        MetadataImage.Applied missingQueue = commit(
                follower,
                new MetadataCommand.Bind("/", new Binding("amq.direct", Destination.queue("missing"), "k", Map.of())));
        assertThat(missingQueue.rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Rejection.Kind.NOT_FOUND))
                .hasValueSatisfying(r -> assertThat(r.message()).contains("no queue 'missing'"));

        MetadataImage.Applied missingObject =
                commit(follower, new Coordination(new CoordinationCommand.DeleteObject(ObjectId.of("/", "missing"))));
        assertThat(missingObject.rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Rejection.Kind.PRECONDITION_FAILED))
                .hasValueSatisfying(r -> assertThat(r.message()).contains("does not exist"));

        MetadataImage.Applied badSetting = commit(
                follower,
                new Coordination(new CoordinationCommand.SetSettings(Map.of("liveness.heartbeat_ms", "99999999"))));
        assertThat(badSetting.rejection())
                .hasValueSatisfying(r -> assertThat(r.message()).contains("liveness.heartbeat_ms"));

        // a rejected command is still an entry: it moves every image's applied index, and changes nothing else
        MetadataImage image = cluster.awaitConverged();
        assertThat(image.appliedIndex()).isEqualTo(4);
        assertThat(image.vhost("/")).isPresent();
    }

    @Test
    void shouldElectANewLeaderWhenTheLeaderStopsAndCatchUpWhenItReturns() throws Exception {
        cluster = RatisTestCluster.create(root, 3, config -> config);
        cluster.startAll();
        Map<String, List<Boolean>> leadership = Map.of(
                "n1", new CopyOnWriteArrayList<>(),
                "n2", new CopyOnWriteArrayList<>(),
                "n3", new CopyOnWriteArrayList<>());
        cluster.running().forEach(log -> log.onLeaderChange(leadership.get(log.nodeId())::add));
        RatisMetadataLog first = cluster.awaitLeader();
        commit(first, new MetadataCommand.PutVhost("/"));
        commit(cluster.aFollower(), queue("before"));
        cluster.awaitConverged();
        awaitLastLeadership(leadership, first.nodeId(), true);

        String stopped = first.nodeId();
        cluster.stop(stopped);
        RatisMetadataLog second = cluster.awaitLeader();
        assertThat(second.nodeId()).isNotEqualTo(stopped);
        awaitLastLeadership(leadership, second.nodeId(), true);
        assertThat(leadership.get(stopped)).as("told when its server closed").endsWith(false);

        MetadataImage.Applied after = commit(cluster.aFollower(), queue("after"));
        assertThat(after.accepted()).isTrue();
        MetadataImage survivors = cluster.awaitConverged();
        assertThat(survivors.vhost("/").orElseThrow().queues()).containsKeys("before", "after");

        // the old leader comes back as a follower and catches up from the log
        RatisMetadataLog returned = cluster.start(stopped);
        commit(second, queue("back"));
        MetadataImage all = cluster.awaitConverged();
        assertThat(all.vhost("/").orElseThrow().queues()).containsKeys("before", "after", "back");
        assertThat(returned.image().appliedIndex()).isEqualTo(4);
        assertThat(returned.isLeader()).isFalse();
    }

    /**
     * A command fenced with the term its leader led in is applied only from an entry of that term: once that leader
     * stopped and another was elected, the same command proposed through a follower (as the log's client takes a
     * proposal the old leader refuses to the new one) reaches the new leader and is rejected there. Fenced with the new
     * leader's term, it is applied. A controller deposed while it ticked can commit nothing.
     */
    @Test
    void shouldApplyAFencedCommandOnlyInTheTermItNames() throws Exception {
        cluster = RatisTestCluster.create(root, 3, config -> config);
        cluster.startAll();
        RatisMetadataLog first = cluster.awaitLeader();
        long firstTerm = leaderTerm(first);
        assertThat(commit(first, new MetadataCommand.Fenced(firstTerm, new MetadataCommand.PutVhost("/")))
                        .accepted())
                .isTrue();
        assertThat(cluster.aFollower().leaderTerm())
                .as("a follower leads in no term")
                .isEmpty();

        cluster.stop(first.nodeId());
        RatisMetadataLog second = cluster.awaitLeader();
        long secondTerm = leaderTerm(second);
        assertThat(secondTerm).isGreaterThan(firstTerm);

        MetadataImage.Applied stale =
                commit(cluster.aFollower(), new MetadataCommand.Fenced(firstTerm, queue("stale")));
        assertThat(stale.rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Rejection.Kind.PRECONDITION_FAILED))
                .hasValueSatisfying(r ->
                        assertThat(r.message()).contains("term " + firstTerm).contains("term " + secondTerm));
        assertThat(stale.image().vhost("/").orElseThrow().queue("stale")).isEmpty();

        MetadataImage.Applied current = commit(second, new MetadataCommand.Fenced(secondTerm, queue("current")));
        assertThat(current.accepted()).isTrue();
        assertThat(cluster.awaitConverged().vhost("/").orElseThrow().queues()).containsOnlyKeys("current");
    }

    private static long leaderTerm(RatisMetadataLog log) {
        return RatisTestCluster.await(
                log.nodeId() + "'s leader term",
                () -> log.leaderTerm().isPresent()
                        ? Optional.of(log.leaderTerm().getAsLong())
                        : Optional.empty());
    }

    /** Listeners run just after the leadership flag changes, so a test that saw the flag waits for the listener. */
    private static void awaitLastLeadership(Map<String, List<Boolean>> leadership, String node, boolean expected) {
        RatisTestCluster.await(node + "'s listener to hear leader=" + expected, () -> {
            List<Boolean> events = leadership.get(node);
            return !events.isEmpty() && events.get(events.size() - 1) == expected
                    ? Optional.of(true)
                    : Optional.empty();
        });
    }

    @Test
    void shouldCatchUpFromASnapshotAndRestoreTheImageFromDisk() throws Exception {
        cluster = RatisTestCluster.create(
                root, 3, config -> config.withSnapshots(5, true).withLogSegmentBytes(1024));
        cluster.startAll();
        RatisMetadataLog leader = cluster.awaitLeader();
        commit(leader, new MetadataCommand.PutVhost("/"));
        cluster.awaitConverged();

        String lagging = cluster.aFollower().nodeId();
        cluster.stop(lagging);
        for (int i = 0; i < 30; i++) {
            commit(i % 2 == 0 ? leader : cluster.aFollower(), queue("q" + i));
        }
        RatisMetadataLog current = cluster.awaitLeader();
        assertThat(snapshots(cluster.storage(current.nodeId())))
                .as("the leader took snapshots")
                .isNotEmpty();
        assertThat(segments(cluster.storage(current.nodeId())))
                .as("the leader purged the log segments the lagging follower would need")
                .noneMatch(name -> name.startsWith("log_0-") || name.equals("log_inprogress_0"));

        // the leader purged its log up to its snapshot, so the lagging follower can only catch up from the snapshot
        cluster.start(lagging);
        MetadataImage caughtUp = cluster.awaitConverged();
        assertThat(caughtUp.vhost("/").orElseThrow().queues()).hasSize(30);
        assertThat(snapshots(cluster.storage(lagging)))
                .as("the follower holds the installed snapshot")
                .isNotEmpty();

        // every server down; one restarted alone (no quorum, so no new entries) rebuilds the image from its own disk
        byte[] expected = MetadataImageCodec.encode(caughtUp);
        cluster.close();
        RatisMetadataLog alone = cluster.start(lagging);
        RatisTestCluster.await(
                "the restarted server to restore the image",
                () -> Arrays.equals(MetadataImageCodec.encode(alone.image()), expected)
                        ? Optional.of(true)
                        : Optional.empty());
        assertThat(alone.isLeader()).isFalse();
    }

    @Test
    void shouldReturnFromStartOnlyOnceTheLocalLogIsReplayed() throws Exception {
        cluster = RatisTestCluster.create(root, 1, config -> config);
        cluster.startAll();
        RatisMetadataLog only = cluster.awaitLeader();
        commit(only, new MetadataCommand.PutVhost("/"));
        for (int i = 0; i < 300; i++) {
            commit(only, queue("q" + i));
        }
        String node = only.nodeId();
        cluster.stop(node);
        // as after a kill -9: no snapshot taken at the stop, the restart replays the whole log
        try (Stream<Path> files = Files.walk(cluster.storage(node))) {
            for (Path snapshot : files.filter(
                            path -> path.getFileName().toString().matches("snapshot\\.\\d+_\\d+(\\.md5)?"))
                    .toList()) {
                Files.delete(snapshot);
            }
        }
        assertThat(snapshots(cluster.storage(node))).isEmpty();

        // the replay runs on Ratis's applier thread; start hands the broker the image at its end, not one on the way
        RatisMetadataLog restarted = cluster.start(node);
        assertThat(restarted.image().vhost("/").orElseThrow().queues()).hasSize(300);
    }

    private static List<String> segments(Path storage) throws IOException {
        return walk(storage).stream()
                .map(path -> path.getFileName().toString())
                .filter(name -> name.startsWith("log_"))
                .toList();
    }

    private static List<Path> snapshots(Path storage) throws IOException {
        return walk(storage).stream()
                .filter(path -> path.getFileName().toString().matches("snapshot\\.\\d+_\\d+"))
                .toList();
    }

    /** Every path below {@code storage}, walked again when Ratis removed a file during the walk (an old snapshot). */
    private static List<Path> walk(Path storage) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try (Stream<Path> files = Files.walk(storage)) {
                return files.toList();
            } catch (java.io.UncheckedIOException e) {
                if (!(e.getCause() instanceof java.nio.file.NoSuchFileException) || attempt == 5) {
                    throw e;
                }
            }
        }
    }
}
