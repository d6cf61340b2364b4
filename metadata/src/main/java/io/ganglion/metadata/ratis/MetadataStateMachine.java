package io.ganglion.metadata.ratis;

import io.ganglion.metadata.MetadataCodec;
import io.ganglion.metadata.MetadataCodecException;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataImageCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metadata image as a Ratis state machine: every committed entry (a {@link MetadataCodec} command) is applied to
 * the {@link MetadataImage}, each new image is published as a value, and snapshots are the {@link MetadataImageCodec}
 * bytes of the image in Ratis's state machine directory.
 *
 * <p>Implementation notes.
 *
 * <ul>
 *   <li>Threads. {@link #applyTransaction}, {@link #notifyTermIndexUpdated}, {@link #takeSnapshot}, {@link
 *       #reinitialize} and {@link #notifyLeaderReady} run on Ratis's state machine updater thread, one per server: the
 *       apply thread. {@link #initialize} runs on the thread that starts the server, before any apply. {@link
 *       #notifyLeaderChanged} and {@link #notifyNotLeader} run on Ratis server threads; {@link #imageAt} on the
 *       client's reply threads.
 *   <li>{@code image} is volatile, written under {@code this} by the apply thread only, read from anywhere. The Ratis
 *       index it reflects ({@code appliedIndex}), the waiters and the unclaimed images are guarded by {@code this}, so
 *       a snapshot always pairs an image with the index it reflects.
 *   <li>Proposals. The proposer learns the index of its entry from the Ratis reply, which may arrive before or after
 *       this server applied the entry. Entries of this broker's own client are therefore kept as {@code unclaimed}
 *       (index to the image they produced) until the proposer claims them, and a proposer that comes first leaves a
 *       waiter. An index applied without an image kept (installed by a snapshot, or evicted) is answered with the
 *       latest image, which includes the command.
 *   <li>Subscribers and the proposers' futures run on the apply thread, outside the lock; they must not block.
 *   <li>Leadership is "leader and ready": set by {@link #notifyLeaderReady} (the new leader applied its first entry of
 *       the term, so its image holds everything committed before), cleared by {@link #notifyNotLeader}, by a leader
 *       change to another peer, and on close. Listeners run under {@code leadership}, in order.
 * </ul>
 */
final class MetadataStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataStateMachine.class);

    /** Images of our own entries the proposer has not claimed; more means replies were lost, so old ones go. */
    private static final int MAX_UNCLAIMED = 1024;

    private final String nodeId;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final List<Consumer<MetadataImage>> subscribers = new CopyOnWriteArrayList<>();

    private volatile MetadataImage image = MetadataImage.empty();
    private final java.util.Set<ByteString> ownClientIds = java.util.concurrent.ConcurrentHashMap.newKeySet();

    // guarded by this
    private long appliedIndex = RaftLog.INVALID_LOG_INDEX;
    /** The last index whose image the subscribers were given: a proposal's future waits for it, not for the apply. */
    private long notifiedIndex = RaftLog.INVALID_LOG_INDEX;

    private final NavigableMap<Long, MetadataImage> unclaimed = new TreeMap<>();
    private final NavigableMap<Long, CompletableFuture<MetadataImage>> waiters = new TreeMap<>();
    private final NavigableMap<Long, CompletableFuture<Void>> appliedWaiters = new TreeMap<>();
    private boolean closed;

    private final Object leadership = new Object();
    /** No leadership: {@link #leaderTerm} when this server does not lead. */
    private static final long NOT_LEADER = -1;

    // guarded by leadership; leaderTermView mirrors it for lock-free reads
    private long leaderTerm = NOT_LEADER;
    private final List<Consumer<Boolean>> leaderListeners = new CopyOnWriteArrayList<>();
    private volatile long leaderTermView = NOT_LEADER;

    MetadataStateMachine(String nodeId) {
        this.nodeId = nodeId;
    }

    /** Entries proposed by this client are kept for their proposer. Call before the server starts. */
    void ownClient(ClientId clientId) {
        ownClientIds.add(clientId.toByteString());
    }

    MetadataImage image() {
        return image;
    }

    void subscribe(Consumer<MetadataImage> listener) {
        subscribers.add(listener);
    }

    boolean isLeader() {
        return leaderTermView != NOT_LEADER;
    }

    /** The term this server leads in (and is ready in), if it leads. */
    java.util.OptionalLong leaderTerm() {
        long term = leaderTermView;
        return term == NOT_LEADER ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(term);
    }

    void onLeaderChange(Consumer<Boolean> listener) {
        synchronized (leadership) {
            leaderListeners.add(listener);
            listener.accept(leaderTerm != NOT_LEADER);
        }
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        getLifeCycle().startAndTransition(() -> load(storage.getLatestSnapshot(), false), IOException.class);
    }

    @Override
    public void pause() {
        if (getLifeCycleState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    /** After a snapshot was installed from the leader: load it and go on from there. */
    @Override
    public void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot(), true);
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    // on apply thread
    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        StateMachineLogEntryProto data = entry.getStateMachineLogEntry();
        MetadataImage before = image;
        MetadataImage after = before;
        ProposalReply reply;
        try {
            MetadataImage.Applied applied =
                    before.apply(MetadataCodec.decode(data.getLogData().toByteArray()), entry.getTerm());
            applied.rejection()
                    .filter(ignored -> LOG.isDebugEnabled())
                    .ifPresent(rejection -> LOG.debug(
                            "event=metadata_entry_rejected node={} index={} term={} reason={}",
                            nodeId,
                            entry.getIndex(),
                            entry.getTerm(),
                            rejection.message()));
            after = applied.image();
            reply = applied.rejection()
                    .<ProposalReply>map(ProposalReply.Rejected::new)
                    .orElseGet(ProposalReply.Accepted::new);
        } catch (MetadataCodecException | RuntimeException e) {
            // Every server holds the same bytes and code, so every server skips this entry alike.
            LOG.error("event=metadata_entry_not_applied node={} index={} reason={}", nodeId, entry.getIndex(), e, e);
            reply = new ProposalReply.NotApplied(String.valueOf(e.getMessage()));
        }
        publish(after, TermIndex.valueOf(entry), ownClientIds.contains(data.getClientId()));
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(ProposalReply.encode(reply))));
    }

    /**
     * A read (see {@link RatisMetadataLog#sync}), served by the leader once it applied up to the read index: its
     * applied index, which the asking broker then waits to apply itself.
     */
    @Override
    public CompletableFuture<Message> query(Message request) {
        long applied;
        synchronized (this) {
            applied = appliedIndex;
        }
        return CompletableFuture.completedFuture(Message.valueOf(Long.toString(applied)));
    }

    // on apply thread: configuration and leader start-up entries move the applied index too
    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        List<CompletableFuture<Void>> applied;
        List<CompletableFuture<MetadataImage>> ready;
        MetadataImage current;
        synchronized (this) {
            appliedIndex = Math.max(appliedIndex, index);
            // the image is unchanged, and the subscribers saw it: earlier entries were published on this thread
            notifiedIndex = Math.max(notifiedIndex, index);
            super.notifyTermIndexUpdated(term, index);
            applied = drainUpTo(appliedWaiters, appliedIndex);
            ready = drainUpTo(waiters, notifiedIndex);
            current = image;
        }
        applied.forEach(future -> future.complete(null));
        ready.forEach(future -> future.complete(current));
    }

    /**
     * Completes once this server has applied every entry up to Ratis {@code index} (a read's index, see {@link
     * RatisMetadataLog#sync}). Unlike {@link #imageAt} it never takes the image a proposal of this server produced.
     * Fails if the state machine closes first.
     */
    CompletableFuture<Void> appliedUpTo(long index) {
        synchronized (this) {
            if (appliedIndex >= index) {
                return CompletableFuture.completedFuture(null);
            }
            if (closed) {
                return CompletableFuture.failedFuture(new IOException("metadata log of " + nodeId + " is closed"));
            }
            return appliedWaiters.computeIfAbsent(index, i -> new CompletableFuture<>());
        }
    }

    private void publish(MetadataImage next, TermIndex termIndex, boolean own) {
        List<CompletableFuture<MetadataImage>> ready;
        List<CompletableFuture<Void>> applied;
        CompletableFuture<MetadataImage> exact;
        long index = termIndex.getIndex();
        synchronized (this) {
            image = next;
            appliedIndex = index;
            updateLastAppliedTermIndex(termIndex);
            applied = drainUpTo(appliedWaiters, appliedIndex);
            if (own) {
                unclaimed.put(index, next);
                while (unclaimed.size() > MAX_UNCLAIMED) {
                    unclaimed.pollFirstEntry();
                }
            }
        }
        // the subscribers first: what they build from the image (a queue's replica) exists once a proposal completes;
        // until they return, imageAt(index) waits (notifiedIndex)
        notifySubscribers(next);
        synchronized (this) {
            notifiedIndex = Math.max(notifiedIndex, index);
            exact = waiters.remove(index);
            if (exact != null) {
                unclaimed.remove(index);
            }
            ready = drainUpTo(waiters, index);
        }
        if (exact != null) {
            exact.complete(next);
        }
        ready.forEach(future -> future.complete(next));
        applied.forEach(future -> future.complete(null));
    }

    private void notifySubscribers(MetadataImage next) {
        for (Consumer<MetadataImage> subscriber : subscribers) {
            try {
                subscriber.accept(next);
            } catch (RuntimeException e) {
                LOG.error("event=metadata_subscriber_failed node={} appliedIndex={}", nodeId, next.appliedIndex(), e);
            }
        }
    }

    /** Removes and returns the waiters of {@code map} for entries up to {@code index}. Guarded by this. */
    private static <T> List<CompletableFuture<T>> drainUpTo(NavigableMap<Long, CompletableFuture<T>> map, long index) {
        Map<Long, CompletableFuture<T>> head = map.headMap(index, true);
        List<CompletableFuture<T>> drained = new ArrayList<>(head.values());
        head.clear();
        return drained;
    }

    /**
     * The image this server holds once it has applied the entry at Ratis {@code index}: the one that entry produced
     * when this server's own client proposed it and the image is still kept, otherwise the latest. Fails if the state
     * machine closes first.
     */
    CompletableFuture<MetadataImage> imageAt(long index) {
        synchronized (this) {
            if (notifiedIndex >= index) {
                MetadataImage produced = unclaimed.remove(index);
                return CompletableFuture.completedFuture(produced != null ? produced : image);
            }
            if (closed) {
                return CompletableFuture.failedFuture(new IOException("metadata log of " + nodeId + " is closed"));
            }
            return waiters.computeIfAbsent(index, i -> new CompletableFuture<>());
        }
    }

    // on apply thread, when Ratis decides (every snapshotThreshold entries, and at shutdown)
    @Override
    public long takeSnapshot() throws IOException {
        MetadataImage snapshotImage;
        TermIndex last;
        synchronized (this) {
            snapshotImage = image;
            last = getLastAppliedTermIndex();
        }
        if (last == null || last.getIndex() < 0) {
            return RaftLog.INVALID_LOG_INDEX;
        }
        Path file = storage.getSnapshotFile(last.getTerm(), last.getIndex()).toPath();
        byte[] bytes = MetadataImageCodec.encode(snapshotImage);
        Path temporary = file.resolveSibling(file.getFileName() + ".writing");
        try (FileChannel channel = FileChannel.open(
                temporary, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file.toFile());
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file, md5), last));
        LOG.info(
                "event=metadata_snapshot_taken node={} term={} index={} appliedCommands={} bytes={}",
                nodeId,
                last.getTerm(),
                last.getIndex(),
                snapshotImage.appliedIndex(),
                bytes.length);
        return last.getIndex();
    }

    private void load(SingleFileSnapshotInfo snapshot, boolean publish) throws IOException {
        if (snapshot == null) {
            return;
        }
        Path file = snapshot.getFile().getPath();
        MD5Hash md5 = snapshot.getFile().getFileDigest();
        if (md5 != null) {
            MD5FileUtil.verifySavedMD5(file.toFile(), md5);
        }
        MetadataImage loaded;
        try {
            loaded = MetadataImageCodec.decode(Files.readAllBytes(file));
        } catch (MetadataCodecException e) {
            throw new IOException("metadata snapshot " + file + " does not decode", e);
        }
        TermIndex termIndex = snapshot.getTermIndex();
        List<CompletableFuture<MetadataImage>> ready;
        List<CompletableFuture<Void>> applied;
        synchronized (this) {
            image = loaded;
            appliedIndex = termIndex.getIndex();
            notifiedIndex = Math.max(notifiedIndex, appliedIndex);
            setLastAppliedTermIndex(termIndex);
            ready = drainUpTo(waiters, appliedIndex);
            applied = drainUpTo(appliedWaiters, appliedIndex);
            unclaimed.headMap(appliedIndex, true).clear();
        }
        LOG.info(
                "event=metadata_snapshot_loaded node={} term={} index={} appliedCommands={}",
                nodeId,
                termIndex.getTerm(),
                termIndex.getIndex(),
                loaded.appliedIndex());
        ready.forEach(future -> future.complete(loaded));
        applied.forEach(future -> future.complete(null));
        if (publish) {
            notifySubscribers(loaded);
        }
    }

    @Override
    public void notifyLeaderReady() {
        try {
            setLeader(getServer().join().getDivision(getGroupId()).getInfo().getCurrentTerm(), "ready");
        } catch (IOException | RuntimeException e) {
            // the division is gone (the server is closing): there is no leadership to take up
            LOG.warn("event=metadata_leader_term_unknown node={} reason={}", nodeId, e.toString());
        }
    }

    @Override
    public void notifyNotLeader(Collection<TransactionContext> pendingEntries) {
        setLeader(NOT_LEADER, "stepped_down");
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeaderId) {
        LOG.debug("event=metadata_leader_known node={} leader={}", nodeId, newLeaderId);
        if (!member.getPeerId().equals(newLeaderId)) {
            setLeader(NOT_LEADER, "other_leader");
        }
    }

    /**
     * Leadership in {@code term}, or none ({@link #NOT_LEADER}). A new term while leading ends the old leadership
     * first: the listeners hear {@code false} then {@code true}, and what a controller built in the old term goes.
     */
    private void setLeader(long term, String why) {
        synchronized (leadership) {
            if (leaderTerm == term) {
                return;
            }
            if (leaderTerm != NOT_LEADER && term != NOT_LEADER) {
                changeLeadership(NOT_LEADER, "new_term");
            }
            changeLeadership(term, why);
        }
    }

    /** Under {@code leadership}. */
    private void changeLeadership(long term, String why) {
        boolean now = term != NOT_LEADER;
        leaderTerm = term;
        leaderTermView = term;
        LOG.info("event=metadata_leadership node={} leader={} term={} why={}", nodeId, now, term, why);
        for (Consumer<Boolean> listener : leaderListeners) {
            try {
                listener.accept(now);
            } catch (RuntimeException e) {
                LOG.error("event=metadata_leader_listener_failed node={}", nodeId, e);
            }
        }
    }

    @Override
    public void close() throws IOException {
        setLeader(NOT_LEADER, "closed");
        List<CompletableFuture<MetadataImage>> pending;
        List<CompletableFuture<Void>> applied;
        synchronized (this) {
            closed = true;
            pending = new ArrayList<>(waiters.values());
            waiters.clear();
            applied = new ArrayList<>(appliedWaiters.values());
            appliedWaiters.clear();
            unclaimed.clear();
        }
        IOException failure = new IOException("metadata log of " + nodeId + " closed before the entry was applied");
        pending.forEach(future -> future.completeExceptionally(failure));
        applied.forEach(future -> future.completeExceptionally(failure));
        super.close();
    }
}
