package io.ganglion.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.broker.Shard;
import io.ganglion.broker.peer.PeerCodec;
import io.ganglion.broker.peer.PeerFrameDescriptor;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryOutcome;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.coordination.PendingRecovery;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.replication.Replica;
import io.ganglion.replication.ReplicaEvent;
import io.ganglion.replication.ReplicationConfig;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import io.ganglion.storage.StorageCrash;
import io.ganglion.testing.Poll;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Three brokers' replication in one JVM: for each, a real {@link Storage} in its own directory, a real {@link Shard}
 * and a {@link ReplicationRouter} with one {@link ReplicaHost} of {@link #Q}. Frames between them go through the
 * {@link PeerCodec} (encoded, then decoded from the bytes) and are delivered at once on the sending thread, so each
 * link keeps its order. A node that is {@link #cut} neither sends nor receives; a {@link #crash} halts its store like a
 * crash after the last force, and {@link #start} opens it again from its directory with a new incarnation.
 *
 * <p>The controller is the test thread, with the coordination module's real {@link AcceptedHistory}: recovery requests
 * go out as {@code RecoveryCommand} frames, the replies come back as frames and are turned into history records by
 * {@link RecoveryReplies}, and each must be accepted by the history.
 */
final class ReplicationCluster implements AutoCloseable {
    static final ObjectId Q = ObjectId.of("/", "orders");
    static final long STORAGE_ID = 42;
    static final NodeId CONTROLLER = NodeId.of("controller");
    static final NodeId N1 = NodeId.of("ganglion-1");
    static final NodeId N2 = NodeId.of("ganglion-2");
    static final NodeId N3 = NodeId.of("ganglion-3");
    static final List<NodeId> NODES = List.of(N1, N2, N3);
    static final int W = 2;
    /** Short timers so the tests run in well under a second per step. */
    static final ReplicationConfig CONFIG =
            new ReplicationConfig(32, 1 << 20, 32, 50, 20, 8, 200, 200, 50, Replica.PUBLISH_INDEX_CAPACITY);

    static final long TIMEOUT_MS = 10_000;

    private final Path root;
    private final Map<NodeId, Node> nodes = new ConcurrentHashMap<>();
    private final Set<NodeId> cut = ConcurrentHashMap.newKeySet();
    private final LinkedBlockingQueue<CoordinationCommand> controllerInbox = new LinkedBlockingQueue<>();
    private final SplittableRandom random = new SplittableRandom(7);
    final AtomicLong frames = new AtomicLong();
    /** Replicate frames that carried records, from N1 to N2. */
    final AtomicLong replicatesToN2 = new AtomicLong();

    private int shards;

    /** Test thread only: the controller's view of the object's accepted history. */
    private AcceptedHistory history =
            AcceptedHistory.created(new ObjectSpec(Q, ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE));

    /** One broker's replication: storage, shard, router, and what its host told the queue layer. */
    final class Node {
        final NodeId id;
        final Incarnation incarnation;
        final Storage storage;
        final Shard shard;
        final ReplicationRouter router;
        final Recorder listener = new Recorder();
        volatile boolean stopped;

        Node(NodeId id, Incarnation incarnation, Storage storage, Shard shard) {
            this.id = id;
            this.incarnation = incarnation;
            this.storage = storage;
            this.shard = shard;
            ReplicationContext context = new ReplicationContext(id, incarnation, CONFIG, 10, System::currentTimeMillis);
            this.router = new ReplicationRouter(
                    id,
                    (to, message) -> transmit(id, to, message),
                    (object, sender, replies) -> stopped
                            ? Optional.empty()
                            : Optional.of(new ReplicaHost(
                                    object, STORAGE_ID, shard, storage, context, sender, replies, listener)),
                    controllerInbox::add);
        }

        ReplicaHost host() {
            return router.host(Q).orElseThrow();
        }

        ReplicaHost.Status status() {
            return host().status().join();
        }

        /** Every record of the object's log, read on the host's shard (the log's owning thread). */
        List<Record> records() {
            CompletableFuture<List<Record>> read = new CompletableFuture<>();
            shard.execute(() -> {
                try {
                    ReplicaLog log = storage.replica(STORAGE_ID);
                    List<Record> records = new ArrayList<>();
                    long next = log.startOffset();
                    while (next <= log.lastOffset()) {
                        for (LogRecord stored : log.read(next, 1 << 20)) {
                            records.add(ReplicatedRecords.decode(stored));
                            next = stored.offset() + 1;
                        }
                    }
                    read.complete(records);
                } catch (IOException | RuntimeException e) {
                    read.completeExceptionally(e);
                }
            });
            return read.join();
        }

        /** The publish ids in the log, in log order (a duplicate shows twice). */
        List<PublishId> publishedIds() {
            return records().stream()
                    .filter(Record.Message.class::isInstance)
                    .map(record -> ((Record.Message) record).id())
                    .toList();
        }
    }

    ReplicationCluster(Path root) {
        this(root, config -> config);
    }

    /** A cluster whose stores take {@code storageConfig} of the default test configuration. */
    ReplicationCluster(Path root, java.util.function.UnaryOperator<StorageConfig> storageConfig) {
        this.root = root;
        this.storageConfig = storageConfig;
    }

    private final java.util.function.UnaryOperator<StorageConfig> storageConfig;

    // ---------------------------------------------------------------------------------------------- brokers

    /** Opens {@code id}'s store from its directory (new or left by a crash) with a new incarnation. */
    Node start(NodeId id) throws IOException {
        Storage storage = Storage.open(
                root.resolve(id.value()),
                storageConfig.apply(
                        StorageConfig.defaults(System::currentTimeMillis).withJournalFileBytes(1 << 20)));
        Node node = new Node(id, new Incarnation(random.nextLong()), storage, new Shard(shards++));
        nodes.put(id, node);
        cut.remove(id);
        node.host().start().join();
        return node;
    }

    Node node(NodeId id) {
        return nodes.get(id);
    }

    /** The links to and from {@code id} go down: nothing reaches it or leaves it. Its process keeps running. */
    void cut(NodeId id) {
        cut.add(id);
    }

    void heal(NodeId id) {
        cut.remove(id);
    }

    /** {@code id} crashes: cut off, its host stopped, its store halted after the last force (no checkpoint). */
    void crash(NodeId id) throws IOException {
        Node node = nodes.remove(id);
        cut.add(id);
        node.stopped = true;
        node.router.close();
        StorageCrash.halt(node.storage);
        node.shard.close();
    }

    @Override
    public void close() throws IOException {
        for (NodeId id : List.copyOf(nodes.keySet())) {
            Node node = nodes.remove(id);
            node.stopped = true;
            node.router.close();
            node.storage.close();
            node.shard.close();
        }
    }

    // ---------------------------------------------------------------------------------------------- the wire

    private boolean transmit(NodeId from, NodeId to, PeerMessage message) {
        if (cut.contains(from) || cut.contains(to)) {
            return false;
        }
        PeerMessage decoded = throughCodec(message);
        frames.incrementAndGet();
        if (from.equals(N1)
                && to.equals(N2)
                && decoded instanceof PeerMessage.Replication replication
                && replication.message() instanceof io.ganglion.replication.PeerMessage.Replicate replicate
                && !replicate.records().isEmpty()) {
            replicatesToN2.incrementAndGet();
        }
        if (to.equals(CONTROLLER)) {
            switch (decoded) {
                case PeerMessage.SealReply reply ->
                    RecoveryReplies.toCommand(from, reply).ifPresent(controllerInbox::add);
                case PeerMessage.InstallReply reply ->
                    RecoveryReplies.toCommand(from, reply).ifPresent(controllerInbox::add);
                default -> throw new AssertionError("the controller got " + decoded);
            }
            return true;
        }
        Node target = nodes.get(to);
        if (target == null || target.stopped) {
            return false;
        }
        assertThat(target.router.onMessage(from, decoded)).isTrue();
        return true;
    }

    /** Encodes {@code message} to a frame and decodes it back from the bytes. */
    static PeerMessage throughCodec(PeerMessage message) {
        ByteBuf frame = Unpooled.buffer(PeerFrameDescriptor.frameSize(PeerCodec.encodedLength(message)));
        try {
            PeerCodec.encode(message, frame);
            int length = (int) PeerFrameDescriptor.length(frame, 0);
            assertThat(frame.readableBytes()).isEqualTo(PeerFrameDescriptor.frameSize(length));
            return PeerCodec.decodeBody(
                    PeerFrameDescriptor.type(frame, 0),
                    frame.slice(PeerFrameDescriptor.BODY_OFFSET, length - PeerFrameDescriptor.TYPE_LENGTH));
        } finally {
            frame.release();
        }
    }

    // ---------------------------------------------------------------------------------------------- the controller

    AcceptedHistory history() {
        return history;
    }

    private void accept(HistoryRecord record) {
        HistoryOutcome outcome = history.append(record);
        assertThat(outcome).as("history takes %s", record).isInstanceOf(HistoryOutcome.Accepted.class);
        history = ((HistoryOutcome.Accepted) outcome).history();
    }

    private void request(RecoveryRequest request) {
        transmit(CONTROLLER, request.node(), new PeerMessage.RecoveryCommand(request));
    }

    /** Takes the replies that arrived into the history until {@code done}, or fails after the timeout. */
    private void awaitReplies(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (!done.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            assertThat(left).as("waiting for %s; history %s", what, history).isPositive();
            CoordinationCommand command = controllerInbox.poll(Math.min(left, 50_000_000), TimeUnit.NANOSECONDS);
            if (command instanceof CoordinationCommand.AppendHistory append) {
                assertThat(append.id()).isEqualTo(Q);
                accept(append.record());
            } else if (command != null) {
                throw new AssertionError("unexpected command " + command);
            }
        }
    }

    /**
     * Recovery to the next epoch, as the controller's driver runs it: pending, seals from {@code sealFrom} (none before
     * the first epoch), the recovery point, installs on {@code installOn}, activation; then the new assignment to every
     * running member. Returns the activated assignment.
     */
    Assignment recover(NodeId owner, List<NodeId> followers, List<NodeId> sealFrom, List<NodeId> installOn)
            throws InterruptedException {
        Epoch committed = history.committedEpoch();
        Epoch epoch = committed.next();
        accept(new HistoryRecord.RecoveryPending(epoch, owner, followers));
        if (!committed.equals(Epoch.NONE)) {
            for (NodeId node : sealFrom) {
                request(new RecoveryRequest.Seal(Q, committed, node));
            }
            awaitReplies(() -> pending().seals().keySet().containsAll(sealFrom), "seals from " + sealFrom);
        }
        LogPosition point = pending().highestSealedEnd();
        accept(new HistoryRecord.RecoveryPointChosen(epoch, point));
        List<NodeId> sources = pending().sourcesOf(point);
        for (NodeId node : installOn) {
            request(new RecoveryRequest.Install(Q, epoch, node, point, sources));
        }
        awaitReplies(() -> pending().installed().containsAll(installOn), "installs on " + installOn);
        accept(new HistoryRecord.Activated(epoch));
        assignAll();
        return history.validate().orElseThrow();
    }

    /** A member of the activated epoch not installed yet catches up with the owner; then everyone hears of it. */
    void catchUp(NodeId node) throws InterruptedException {
        Assignment active = history.validate().orElseThrow();
        request(new RecoveryRequest.CatchUp(Q, active.epoch(), node, active.owner()));
        awaitReplies(() -> history.installedInCommitted().contains(node), "catch-up of " + node);
        assignAll();
    }

    /** The validated assignment, with who is installed, to every running member (the brokers' projected view). */
    void assignAll() {
        Assignment active = history.validate().orElseThrow();
        for (NodeId member : active.members()) {
            Node node = nodes.get(member);
            if (node != null) {
                node.host().deliver(new ReplicaEvent.Assigned(active, W, history.installedInCommitted(), 60_000));
            }
        }
    }

    private PendingRecovery pending() {
        return history.pending().orElseThrow();
    }

    // ---------------------------------------------------------------------------------------------- publishing

    /** Publishes {@code count} messages through {@code owner} under the active epoch; returns their ids. */
    List<PublishId> publish(NodeId owner, long publisher, long firstSequence, int count) {
        Epoch epoch = history.validate().orElseThrow().epoch();
        List<PublishId> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            PublishId id = new PublishId(publisher, firstSequence + i);
            ids.add(id);
            ByteBuffer body = ByteBuffer.wrap(("message " + id).getBytes(StandardCharsets.UTF_8));
            nodes.get(owner).host().deliver(new ReplicaEvent.PublishAdmitted(id, epoch, body));
        }
        return ids;
    }

    /** The consumer of {@code owner}'s queue acknowledged the message at {@code offset}. */
    void settle(NodeId owner, long offset) {
        nodes.get(owner).host().deliver(new ReplicaEvent.SettleAdmitted(offset));
    }

    /** Polls {@code condition} until it holds, or fails with {@code what} after the timeout. */
    static void await(BooleanSupplier condition, String what) {
        Poll.until(
                Duration.ofMillis(TIMEOUT_MS),
                Duration.ofMillis(5),
                condition::getAsBoolean,
                () -> "waiting for " + what);
    }

    /** What a host told the queue layer; written on the shard, read by the test thread. */
    static final class Recorder implements ReplicaListener {
        final Map<PublishId, Long> confirmed = new ConcurrentHashMap<>();
        final Map<PublishId, String> refused = new ConcurrentHashMap<>();
        final AtomicLong deliverable = new AtomicLong(-1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        @Override
        public void confirmed(PublishId id, long offset) {
            confirmed.put(id, offset);
        }

        @Override
        public void refused(PublishId id, String reason) {
            refused.put(id, reason);
        }

        @Override
        public void deliverable(Epoch epoch, long upTo) {
            deliverable.accumulateAndGet(upTo, Math::max);
        }

        @Override
        public void failed(Throwable cause) {
            failure.set(cause);
        }

        boolean allConfirmed(List<PublishId> ids) {
            return confirmed.keySet().containsAll(ids);
        }
    }
}
