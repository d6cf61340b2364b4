package io.ganglion.broker;

import io.ganglion.broker.replication.PeerSender;
import io.ganglion.broker.replication.RecoveryReplySink;
import io.ganglion.broker.replication.ReplicaHost;
import io.ganglion.broker.replication.ReplicationContext;
import io.ganglion.broker.replication.ReplicationRouter;
import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.Vhost;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.storage.Storage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queues this broker serves or holds a copy of, following the metadata image: single-copy queues homed here
 * (a {@link ReplicatedQueue} over the only copy of its log) and this broker's copies of replicated queues ({@link ReplicatedQueue}, driven by the hosts of
 * the {@link ReplicationRouter}), each on its shard.
 *
 * <p>Implementation notes. {@link #reconcile} runs on every applied image (on the metadata log's thread, in order)
 * and creates or closes replicas. A replica is created before the proposal that declared it completes, so a consume
 * right after declare-ok finds it; its log opens on its shard before any later task there. The maps are concurrent:
 * the data path reads them from any thread without a lock; {@link #reconcile} and {@link #attach} change the views
 * under this object's monitor.
 */
final class QueueRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(QueueRegistry.class);

    private final QueueDirectory directory;
    private final Storage storage;
    private final List<Shard> shards;
    private final Map<Long, ReplicatedQueue> replicas = new ConcurrentHashMap<>();
    /** Counts the queues placed on shards in turn: see {@link #shardOf}. */
    private final AtomicInteger nextShard = new AtomicInteger();
    /** The shard each queue of the image was placed on; a deleted queue's entry goes at the next reconcile. */
    private final Map<Long, Shard> placed = new ConcurrentHashMap<>();
    /** Replicated queues with a copy on this broker, by storage object id; their hosts come from the router. */
    private final Map<Long, ReplicatedQueue> replicated = new ConcurrentHashMap<>();
    /** The view each replicated queue's host was last given (assignment, installed, retention), to send changes only. */
    private final Map<ObjectId, String> views = new ConcurrentHashMap<>();

    private final ReplicationContext soloContext;
    private volatile ReplicationRouter router;
    /** Where queues' owners publish what they dead-letter ({@link #deadLetterTo}). */
    private volatile DeadLettering.Sink deadLetters = DeadLettering.Sink.NONE;

    private volatile ReplicationContext replicationContext;
    /** Told the object ids of the replicated queues the image holds, so that the lanes of deleted ones go. */
    private volatile Consumer<Set<Long>> liveReplicated = live -> {};

    /**
     * @param soloContext the replication context of the classic queues' hosts: this broker's node id (or a stand-in on
     *     a single broker), its incarnation and clock
     */
    QueueRegistry(QueueDirectory directory, Storage storage, List<Shard> shards, ReplicationContext soloContext) {
        this.soloContext = soloContext;
        this.directory = directory;
        this.storage = storage;
        this.shards = List.copyOf(shards);
    }

    /** Where the queues' owners publish what they dead-letter; set once, before the first queue opens. */
    void deadLetterTo(DeadLettering.Sink sink) {
        this.deadLetters = sink;
    }

    /**
     * Wires replicated queues to the replication layer: {@code router} creates hosts on demand (for recovery commands
     * and frames); {@link #hostFactory} builds them. Called once, before the peer link delivers anything.
     */
    synchronized void attach(ReplicationRouter router, ReplicationContext context, Consumer<Set<Long>> liveReplicated) {
        this.liveReplicated = liveReplicated;
        this.replicationContext = context;
        this.router = router;
        refreshReplicatedViews(directory.image());
    }

    /** Opens the queues homed here that the image holds and closes those it no longer holds. */
    synchronized void reconcile(MetadataImage image) {
        Map<Long, QueueDef> wanted = new HashMap<>();
        Map<Long, String> vhostOf = new HashMap<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (queue.replicated() || !directory.isHomeOf(queue)) {
                    continue;
                }
                wanted.put(queue.objectId(), queue);
                vhostOf.put(queue.objectId(), vhost.name());
            }
        }
        for (Map.Entry<Long, QueueDef> entry : wanted.entrySet()) {
            replicas.computeIfAbsent(entry.getKey(), id -> open(vhostOf.get(id), entry.getValue()));
        }
        Set<Long> held = new HashSet<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                held.add(queue.objectId());
            }
        }
        placed.keySet().retainAll(held);
        for (Long id : List.copyOf(replicas.keySet())) {
            if (!wanted.containsKey(id)) {
                ReplicatedQueue queue = replicas.remove(id);
                closeAndDelete(queue, queue.host().close());
            }
        }
        refreshReplicatedViews(image);
    }

    /**
     * Opens a classic queue homed here: the same {@link ReplicatedQueue} a replicated queue's owner runs, over a host
     * that is the only copy of its log ({@link ReplicaHost#startAlone}).
     */
    private ReplicatedQueue open(String vhost, QueueDef def) {
        long id = def.objectId();
        Shard shard = shardOf(id);
        ReplicatedQueue queue = newQueue(vhost, def, shard, soloContext);
        ReplicaHost host = new ReplicaHost(
                ObjectId.of(vhost, def.name()),
                id,
                shard,
                storage,
                soloContext,
                NO_PEERS,
                RecoveryReplySink.NONE,
                queue);
        queue.attach(host, true);
        host.startAlone().whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOG.error("event=queue_open_failed queue={} object={}", def.name(), id, failure);
            }
        });
        return queue;
    }

    private ReplicatedQueue newQueue(String vhost, QueueDef def, Shard shard, ReplicationContext context) {
        ReplicatedQueue queue = new ReplicatedQueue(
                vhost,
                def,
                shard,
                publisherId(context, context.self().value(), false),
                () -> directory.image().coordination().settings().value(RuntimeSettings.RESEND_WINDOW_MS),
                (inVhost, message, mustRoute) -> deadLetters.publish(inVhost, message, mustRoute));
        queue.onUnused(() ->
                directory.log().propose(new MetadataCommand.DeleteUnusedQueue(vhost, def.name(), def.objectId())));
        return queue;
    }

    /** A classic queue has no other copies: its replica never sends to a peer and never answers a controller. */
    private static final PeerSender NO_PEERS = (to, message) -> false;

    /**
     * Ends a queue's copy here and deletes its log: the queue closes (consumers cancelled, waiting publishes failed),
     * then its host, then the log goes from storage.
     */
    private void closeAndDelete(ReplicatedQueue queue, CompletableFuture<Void> hostClosed) {
        long id = queue.def.objectId();
        hostClosed.whenComplete((ignored, failure) -> queue.shard().execute(() -> {
            queue.close();
            try {
                storage.deleteReplica(id);
                LOG.info("event=queue_log_deleted vhost={} queue={} object={}", queue.vhost, queue.def.name(), id);
            } catch (IOException | RuntimeException e) {
                LOG.error("event=queue_log_delete_failed queue={} object={}", queue.def.name(), id, e);
            }
        }));
    }

    /**
     * Deletes the logs in storage of queues the image does not hold: queues deleted while this broker was down, whose
     * deletion it never acted on (the metadata log hands over the image at the end of its replay, and a snapshot may
     * skip the entries anyway). Judged against a linearizable image ({@link io.ganglion.metadata.MetadataLog#sync}),
     * never the local one: a restarted broker's own log may know fewer entries committed than it had applied before (a
     * follower persists the commit index behind the one it acts on), and the queue of a log it created then would look
     * deleted. The store's ids are read before that image: a log created since was created for a queue of an image at
     * least as new, which this one holds unless the queue was deleted since, and then its deletion removes it. Without
     * an answer (no leader) nothing is deleted; the next start tries again.
     */
    void deleteOrphanLogs() {
        Set<Long> stored = storage.objectIds();
        directory
                .log()
                .sync()
                .whenCompleteAsync(
                        (image, failure) -> {
                            if (failure != null) {
                                LOG.info("event=orphan_logs_not_checked cause={}", failure.toString());
                                return;
                            }
                            deleteLogsNotIn(image, stored);
                        },
                        shards.get(0));
    }

    private void deleteLogsNotIn(MetadataImage image, Set<Long> stored) {
        Set<Long> known = new HashSet<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                known.add(queue.objectId());
            }
        }
        for (Long id : stored) {
            if (known.contains(id)) {
                continue;
            }
            try {
                storage.deleteReplica(id);
                LOG.info("event=orphan_log_deleted object={}", id);
            } catch (IOException | RuntimeException e) {
                LOG.error("event=orphan_log_delete_failed object={}", id, e);
            }
        }
    }

    /**
     * This broker's publisher id in replicated queues' logs, where (publisher, sequence) identifies a publish and a
     * second one with the same pair is taken for a re-send: unique per process (incarnation), per broker (its id's
     * hash) and per role (publishes admitted here, or forwarded from here, count their sequences apart).
     */
    static long publisherId(ReplicationContext context, String self, boolean forwarded) {
        return (context.incarnation().value() << 31)
                | ((long) (self.hashCode() & 0x3FFFFFFF) << 1)
                | (forwarded ? 1 : 0);
    }

    /**
     * The shard that runs a queue: the one its queue object of this process runs on (a replicated queue's host is
     * closed and opened again as its roles change, and the close may still be running on that shard: the two must not
     * run at once), else the one it was placed on, else the next shard in turn. Taken in turn rather than by object
     * id modulo the shard count, which can put all of a broker's queues on one shard while another stands idle. The
     * same for a queue's whole life in this process: its publishing lane ({@link ForwardingClient}) lives on it too,
     * and a queue's own publishes pass the lane in the task that hands them to its copy. Any thread.
     */
    Shard shardOf(long objectId) {
        ReplicatedQueue local = replicas.get(objectId);
        if (local != null) {
            return local.shard();
        }
        ReplicatedQueue copy = replicated.get(objectId);
        if (copy != null) {
            return copy.shard();
        }
        return placed.computeIfAbsent(
                objectId, id -> shards.get(Math.floorMod(nextShard.getAndIncrement(), shards.size())));
    }

    /** Opens this broker's copy of a replicated queue: its {@link ReplicatedQueue} and the host that drives it. */
    Optional<ReplicaHost> hostFactory(ObjectId object, PeerSender sender, RecoveryReplySink replies) {
        ReplicationContext context = replicationContext;
        if (context == null) {
            return Optional.empty();
        }
        Optional<QueueDef> found = directory.image().vhost(object.vhost()).flatMap(v -> v.queue(object.name()));
        if (found.isEmpty() || !found.get().replicated()) {
            return Optional.empty();
        }
        QueueDef def = found.get();
        Shard shard = shardOf(def.objectId());
        ReplicatedQueue queue = newQueue(object.vhost(), def, shard, context);
        ReplicaHost host = new ReplicaHost(object, def.objectId(), shard, storage, context, sender, replies, queue);
        queue.attach(host, false);
        replicated.put(def.objectId(), queue);
        return Optional.of(host);
    }

    /**
     * Gives every replicated queue's host the assignment it is a member of (or none), from the committed image, as
     * the simulator's broker does; closes the hosts of deleted queues.
     */
    private void refreshReplicatedViews(MetadataImage image) {
        ReplicationRouter current = router;
        if (current == null) {
            return; // a single broker, or replication not attached yet
        }
        NodeId me = new NodeId(directory.self());
        long protect = image.coordination().settings().value(RuntimeSettings.RETENTION_PROTECT_MS);
        Set<Long> live = new HashSet<>();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef def : vhost.queues().values()) {
                if (def.replicated()) {
                    live.add(def.objectId());
                    refreshView(current, image, me, protect, ObjectId.of(vhost.name(), def.name()), def);
                }
            }
        }
        liveReplicated.accept(live);
        closeDeleted(current, live);
    }

    /** Delivers to the host of {@code object} its view in {@code image}, if it changed since the last one. */
    private void refreshView(
            ReplicationRouter current, MetadataImage image, NodeId me, long protect, ObjectId object, QueueDef def) {
        Optional<AcceptedHistory> history = image.coordination().object(object);
        Optional<Assignment> active = history.flatMap(AcceptedHistory::validate);
        ReplicaEvent event;
        String key;
        if (active.isPresent() && active.get().hasMember(me)) {
            Assignment assignment = active.get();
            event = new ReplicaEvent.Assigned(
                    assignment,
                    history.get().spec().writeRequirement(),
                    history.get().installedInCommitted(),
                    history.get().leavingInCommitted(),
                    protect);
            key = assignment + "|" + history.get().installedInCommitted() + "|"
                    + history.get().leavingInCommitted() + "|" + protect;
        } else {
            if (current.existingHost(object).isEmpty()) {
                return;
            }
            event = new ReplicaEvent.Unassigned();
            key = "none";
        }
        if (key.equals(views.get(object))) {
            return;
        }
        views.put(object, key);
        // when this broker learned of a role: with the controller's history_committed lines, where a recovery's time
        // went (a metadata follower learns of a commit after the leader)
        LOG.info("event=replica_assignment object={} assignment={}", object, key);
        Optional<ReplicaHost> host = current.host(object);
        if (host.isEmpty()) {
            return;
        }
        host.get().deliver(event);
        ReplicatedQueue queue = replicated.get(def.objectId());
        boolean owner = active.isPresent() && active.get().owner().equals(me);
        if (queue != null && !owner) {
            queue.shard().execute(queue::ownershipLost);
        }
    }

    /** Closes the copies of replicated queues the image no longer holds and deletes their logs. */
    private void closeDeleted(ReplicationRouter current, Set<Long> live) {
        for (Long id : List.copyOf(replicated.keySet())) {
            if (live.contains(id)) {
                continue;
            }
            ReplicatedQueue queue = replicated.remove(id);
            ObjectId object = ObjectId.of(queue.vhost, queue.def.name());
            views.remove(object);
            closeAndDelete(queue, current.remove(object));
        }
    }

    /** The queue this broker serves itself for {@code objectId}, if any (null otherwise). Any thread. */
    LocalQueue localQueue(long objectId) {
        ReplicatedQueue single = replicas.get(objectId);
        return single != null ? single : replicated.get(objectId);
    }

    /** The status of every copy of a replicated queue this broker holds, by "vhost/name". */
    Map<String, CompletableFuture<Map<String, Object>>> localReplicaStatuses() {
        Map<String, CompletableFuture<Map<String, Object>>> statuses = new TreeMap<>();
        replicated.values().forEach(queue -> statuses.put(queue.vhost + "/" + queue.name(), ReplicaStatus.of(queue)));
        return statuses;
    }

    /**
     * Before a clean stop, while the peer links are still up: every queue here writes the settlements it gathered
     * ({@link ReplicatedQueue#writeSettles}), so that the acks of its last milliseconds are not redelivered after a
     * restart.
     */
    void writeSettlesBeforeStop(long timeoutMs) {
        List<CompletableFuture<Void>> written = new ArrayList<>();
        for (Map<Long, ReplicatedQueue> queues : List.of(replicas, replicated)) {
            for (ReplicatedQueue queue : queues.values()) {
                try {
                    written.add(CompletableFuture.runAsync(queue::writeSettles, queue.shard()));
                } catch (RejectedExecutionException e) {
                    LOG.debug("event=settles_before_stop_skipped reason=shard_stopped");
                }
            }
        }
        awaitBeforeStop(written, timeoutMs, "settles_before_stop_incomplete");
    }

    /**
     * Before a clean stop, with the clients gone: the hosts of the classic queues close, each on its shard, so that
     * what they appended is in the journal before it stops; waits at most {@code timeoutMs}. Replicated queues' hosts
     * are the router's.
     */
    void closeClassicQueues(long timeoutMs) {
        List<CompletableFuture<Void>> closed = new ArrayList<>();
        for (ReplicatedQueue queue : replicas.values()) {
            closed.add(queue.host().close());
        }
        awaitBeforeStop(closed, timeoutMs, "classic_queues_close_incomplete");
    }

    /** Waits at most {@code timeoutMs} for {@code tasks}; a stop goes on after logging {@code event} if they fail. */
    private static void awaitBeforeStop(List<CompletableFuture<Void>> tasks, long timeoutMs, String event) {
        try {
            CompletableFuture.allOf(tasks.toArray(CompletableFuture[]::new)).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("event={} reason={}", event, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
