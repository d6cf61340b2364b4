package io.ganglion.metadata.ratis;

import io.ganglion.metadata.MetadataCodec;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replicated metadata log: each broker of the voter set runs a Ratis server (Netty transport) with a {@link
 * MetadataStateMachine}, and proposes through a Ratis client that finds the leader itself.
 *
 * <pre>
 *   propose(command) ── RaftClient ──> leader ── append, replicate to a majority, commit
 *        │                                          │
 *        │  reply: log index + accepted/rejection   ▼ every server applies the entry to its image
 *        └──────────── waits until this server applied that index, completes with its image
 * </pre>
 *
 * <p>Every broker runs the same state machine over the same entries, so every broker holds the same image at the same
 * index. {@link #isLeader()} is true on the broker whose server leads and has applied every entry committed before its
 * term: that broker runs the controller.
 *
 * <p>Thread-safety: every method may be called from any thread. Subscribers, leader listeners and the completions of
 * {@link #propose} run on Ratis threads (see {@link MetadataStateMachine}) and must not block.
 */
public final class RatisMetadataLog implements MetadataLog {
    private static final Logger LOG = LoggerFactory.getLogger(RatisMetadataLog.class);

    /**
     * The metadata group of cluster {@code clusterName}: a broker configured with another cluster name runs another
     * group, and the servers of this one refuse its requests.
     */
    static RaftGroupId groupId(String clusterName) {
        return RaftGroupId.valueOf(
                UUID.nameUUIDFromBytes(("ganglion-metadata:" + clusterName).getBytes(StandardCharsets.UTF_8)));
    }

    private static final String DEFAULT_CLUSTER = "ganglion";

    /** How long {@link #sync} waits for a read index before it answers with the image it has. */
    static final long SYNC_TIMEOUT_MS = 2_000;

    /** How long {@link #start} waits for the local log's replay ({@link #awaitLocalReplay}). */
    static final long REPLAY_TIMEOUT_MS = 60_000;

    /** How long a failed propose attempt waits before the client tries again (another peer, or the same leader). */
    private static final TimeDuration RETRY_SLEEP = TimeDuration.valueOf(25, TimeUnit.MILLISECONDS);

    /** Proposals one broker may have in flight; {@link #propose} blocks its caller beyond (Ratis default 100). */
    static final int MAX_IN_FLIGHT = 1000;

    private final RatisLogConfig config;
    private final RaftServer server;
    private final RaftClient client;
    private final MetadataStateMachine stateMachine;

    private final RaftGroupId groupId;

    private RatisMetadataLog(
            RatisLogConfig config,
            RaftGroupId groupId,
            RaftServer server,
            RaftClient client,
            MetadataStateMachine stateMachine) {
        this.config = config;
        this.groupId = groupId;
        this.server = server;
        this.client = client;
        this.stateMachine = stateMachine;
        // While this broker leads, its proposals go to its own server in process: the client may still believe the old
        // (dead) leader leads and would find the new one only after failed attempts and redirects, one network hop
        // each. Requests carry a client id of their own, with their own call ids, for Ratis's retry cache.
        stateMachine.ownClient(localClientId);
    }

    private final ClientId localClientId = ClientId.randomId();

    private final java.util.concurrent.atomic.AtomicLong localCallIds = new java.util.concurrent.atomic.AtomicLong();

    /**
     * {@inheritDoc}
     *
     * <p>Ratis keeps one Netty connection per peer and finds a dead one only by a request failing on it: after the
     * controller was killed and restarted, the first vote request of the next election to that peer failed, the
     * candidate's pre-vote was rejected, and the election waited for another timeout (seen in the controller-failover
     * bench). The proxy is reset off the caller's thread; the next request connects anew.
     */
    @Override
    public void peerReconnected(String node) {
        if (node.equals(config.nodeId())) {
            return;
        }
        CompletableFuture.runAsync(() -> {
            try {
                server.getServerRpc()
                        .handleException(
                                RaftPeerId.valueOf(node), new IOException("peer " + node + " connected again"), true);
                LOG.debug("event=metadata_peer_reset node={} peer={}", config.nodeId(), node);
            } catch (RuntimeException e) {
                LOG.debug("event=metadata_peer_reset_failed node={} peer={} cause={}", config.nodeId(), node, e);
            }
        });
    }

    /**
     * Submits {@code message} to this broker's own server, which leads; a reply saying it does not lead (any more)
     * sends the message through the client instead, as nothing was appended.
     */
    private CompletableFuture<RaftClientReply> submitLocally(Message message) {
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(localClientId)
                .setServerId(RaftPeerId.valueOf(config.nodeId()))
                .setGroupId(groupId)
                .setCallId(localCallIds.incrementAndGet())
                .setMessage(message)
                .setType(RaftClientRequest.writeRequestType())
                .build();
        CompletableFuture<RaftClientReply> submitted;
        try {
            submitted = server.submitClientRequestAsync(request);
        } catch (IOException e) {
            return client.async().send(message);
        }
        return submitted.thenCompose(reply -> reply.getNotLeaderException() != null
                        || reply.getException() instanceof org.apache.ratis.protocol.exceptions.LeaderNotReadyException
                ? client.async().send(message)
                : CompletableFuture.completedFuture(reply));
    }

    /**
     * Starts this broker's Ratis server on its voter port and its client. An empty storage directory is formatted; an
     * existing one is recovered (the latest snapshot loaded, then the log after it replayed). Returns once the server
     * listens; the group elects a leader once a majority of voters run.
     *
     * @throws IOException if the storage directory cannot be used or the port cannot be bound
     */
    public static RatisMetadataLog start(RatisLogConfig config) throws IOException {
        return start(config, DEFAULT_CLUSTER);
    }

    /** {@link #start(RatisLogConfig)} for the metadata group of cluster {@code clusterName}. */
    public static RatisMetadataLog start(RatisLogConfig config, String clusterName) throws IOException {
        Files.createDirectories(config.storageDirectory());
        RaftGroup group = group(config, groupId(clusterName));
        MetadataStateMachine stateMachine = new MetadataStateMachine(config.nodeId());
        RaftServer server = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf(config.nodeId()))
                .setGroup(group)
                .setProperties(serverProperties(config))
                .setStateMachine(stateMachine)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        RaftClient client = client(config, group);
        stateMachine.ownClient(client.getId());
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            closeQuietly(client, server);
            throw e;
        }
        LOG.info(
                "event=metadata_log_started node={} address={} voters={} storage={}",
                config.nodeId(),
                config.self().address(),
                config.voters().stream().map(Voter::id).toList(),
                config.storageDirectory());
        try {
            awaitLocalReplay(server, group.getGroupId(), stateMachine, config.nodeId());
        } catch (IOException | RuntimeException e) {
            closeQuietly(client, server);
            throw e;
        }
        return new RatisMetadataLog(config, group.getGroupId(), server, client, stateMachine);
    }

    /**
     * Waits until the state machine has applied every entry this server's own log knew to be committed when it started:
     * a restarted broker's log replays, from its latest snapshot, the whole history since, on Ratis's applier thread.
     * Returning before that would hand the broker every intermediate image to act on (queues of long ago opened,
     * owners started, replicas deleted again: CPU and forces taken from the other brokers on a busy machine), where the
     * image at the end is all it needs. What the leader committed after this server stopped arrives
     * later, as new entries. A replay slower than {@link #REPLAY_TIMEOUT_MS} is logged and start goes on.
     */
    private static void awaitLocalReplay(
            RaftServer server, RaftGroupId groupId, MetadataStateMachine stateMachine, String nodeId)
            throws IOException {
        long started = System.nanoTime();
        org.apache.ratis.server.raftlog.RaftLog log =
                server.getDivision(groupId).getRaftLog();
        // a new log has nothing to replay (and no entry until a leader writes one)
        long committed = Math.min(log.getLastCommittedIndex(), log.getNextIndex() - 1);
        try {
            stateMachine.appliedUpTo(committed).get(REPLAY_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            LOG.info(
                    "event=metadata_replayed node={} index={} ms={}",
                    nodeId,
                    committed,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } catch (java.util.concurrent.TimeoutException e) {
            LOG.warn(
                    "event=metadata_replay_slow node={} index={} waited_ms={}: going on with the image so far",
                    nodeId,
                    committed,
                    REPLAY_TIMEOUT_MS);
        } catch (ExecutionException e) {
            throw new IOException("metadata log of " + nodeId + " closed while replaying", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while the metadata log of " + nodeId + " replayed", e);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The client sends to the leader it knows (following redirects from followers) and retries every 25 ms, on other
     * peers too, for about the propose timeout. Retries are deduplicated by Ratis's retry cache, so a command commits at
     * most once. Proposals from one broker commit in the order they were proposed (Ratis's ordered client). The image
     * is this broker's, once it applied the entry. With {@value #MAX_IN_FLIGHT} proposals of this broker in flight, the
     * call blocks until one completes. The future fails with a {@link
     * MetadataLogException} if the command could not be committed in time, or was committed but could not be applied
     * (its bytes did not decode on the servers: a version mismatch).
     */
    @Override
    public CompletableFuture<MetadataImage.Applied> propose(MetadataCommand command) {
        Message message = Message.valueOf(ByteString.copyFrom(MetadataCodec.encode(command)));
        CompletableFuture<RaftClientReply> sent;
        try {
            sent = isLeader() ? submitLocally(message) : client.async().send(message);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new MetadataLogException("proposing " + command + " failed", e));
        }
        return sent.handle((reply, failure) -> {
                    if (failure != null) {
                        throw new CompletionException(
                                new MetadataLogException("proposing " + command + " failed", unwrap(failure)));
                    }
                    return reply;
                })
                .thenCompose(reply -> applied(command, reply));
    }

    private CompletableFuture<MetadataImage.Applied> applied(MetadataCommand command, RaftClientReply reply) {
        if (!reply.isSuccess()) {
            return CompletableFuture.failedFuture(
                    new MetadataLogException("proposing " + command + " failed", reply.getException()));
        }
        ProposalReply outcome;
        try {
            outcome = ProposalReply.decode(reply.getMessage().getContent().toByteArray());
        } catch (IOException e) {
            return CompletableFuture.failedFuture(
                    new MetadataLogException("unreadable reply to " + command + " at index " + reply.getLogIndex(), e));
        }
        return switch (outcome) {
            case ProposalReply.Accepted a ->
                stateMachine
                        .imageAt(reply.getLogIndex())
                        .thenApply(image -> new MetadataImage.Applied(image, Optional.empty()));
            case ProposalReply.Rejected r ->
                stateMachine
                        .imageAt(reply.getLogIndex())
                        .thenApply(image -> new MetadataImage.Applied(image, Optional.of(r.rejection())));
            case ProposalReply.NotApplied n ->
                CompletableFuture.failedFuture(new MetadataLogException(
                        command + " was committed at index " + reply.getLogIndex() + " but not applied: " + n.reason(),
                        null));
        };
    }

    private static Throwable unwrap(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /**
     * {@inheritDoc}
     *
     * <p>A linearizable read served by the leader (Ratis's read index: the leader confirms it still leads, waits until
     * it applied its commit index, and answers with its applied index), then a wait until this server applied that
     * far; the image is then current. The read goes to the leader itself, never through this server when it follows:
     * a follower asks the leader for the read index over Ratis's asynchronous server protocol, which its Netty
     * transport does not offer, so such a read got no answer and every sync on a follower waited out its timeout (2 s)
     * and logged the transport's exception. On failure (no leader known, no answer in time), the current image.
     */
    @Override
    public CompletableFuture<MetadataImage> sync() {
        try {
            return readIndex()
                    .thenCompose(stateMachine::appliedUpTo)
                    .orTimeout(SYNC_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .handle((applied, failure) -> {
                        if (failure != null) {
                            LOG.debug(
                                    "event=metadata_sync_failed node={} reason={}",
                                    config.nodeId(),
                                    failure.toString());
                        }
                        return image();
                    });
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(image());
        }
    }

    /**
     * The leader's applied index, read linearizably from the leader this server knows; fails when it knows none or the
     * read fails. Package-private for tests.
     */
    CompletableFuture<Long> readIndex() {
        Optional<String> leader = leaderId();
        if (leader.isEmpty()) {
            return CompletableFuture.failedFuture(new IllegalStateException("no metadata leader known"));
        }
        return client.async()
                .sendReadOnly(Message.EMPTY, RaftPeerId.valueOf(leader.get()))
                .thenApply(reply -> {
                    if (!reply.isSuccess()) {
                        throw new CompletionException(
                                reply.getException() != null
                                        ? reply.getException()
                                        : new IllegalStateException("metadata read refused"));
                    }
                    return Long.parseLong(reply.getMessage().getContent().toStringUtf8());
                });
    }

    @Override
    public MetadataImage image() {
        return stateMachine.image();
    }

    @Override
    public void subscribe(Consumer<MetadataImage> listener) {
        stateMachine.subscribe(listener);
    }

    /** {@inheritDoc} A volatile read of the last leadership event. */
    @Override
    public boolean isLeader() {
        return stateMachine.isLeader();
    }

    @Override
    public java.util.OptionalLong leaderTerm() {
        return stateMachine.leaderTerm();
    }

    @Override
    public void onLeaderChange(Consumer<Boolean> listener) {
        stateMachine.onLeaderChange(listener);
    }

    /** The id of the voter this server believes leads, if it knows one. For status pages and tests. */
    @Override
    public Optional<String> leaderId() {
        try {
            return Optional.ofNullable(server.getDivision(groupId).getInfo().getLeaderId())
                    .map(RaftPeerId::toString);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    public String nodeId() {
        return config.nodeId();
    }

    /** Stops the client and the server; proposals in flight fail. The storage stays for the next start. */
    @Override
    public void close() {
        closeQuietly(client, server);
        LOG.info("event=metadata_log_stopped node={}", config.nodeId());
    }

    private static void closeQuietly(RaftClient client, RaftServer server) {
        try {
            client.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("event=metadata_client_close_failed", e);
        }
        try {
            // Stop answering the peers first: Ratis closes the groups before its RPC endpoint, and a leader's heartbeat
            // that reaches a group while it closes is logged as an ERROR ("Failed appendEntries", the group "is not in
            // [STARTING, RUNNING]") though nothing failed. Brokers stopped together still raced so, now and then.
            // The server's own close finds the endpoint closed and closes it no further.
            server.getServerRpc().close();
            server.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("event=metadata_server_close_failed", e);
        }
    }

    static RaftGroup group(RatisLogConfig config, RaftGroupId groupId) {
        List<RaftPeer> peers = new ArrayList<>();
        for (Voter voter : config.voters()) {
            peers.add(RaftPeer.newBuilder()
                    .setId(voter.id())
                    .setAddress(voter.address())
                    .build());
        }
        for (Voter listener : config.listeners()) {
            peers.add(RaftPeer.newBuilder()
                    .setId(listener.id())
                    .setAddress(listener.address())
                    .setStartupRole(RaftPeerRole.LISTENER)
                    .build());
        }
        return RaftGroup.valueOf(groupId, peers);
    }

    /**
     * The server's Ratis properties. Why each value:
     *
     * <ul>
     *   <li>Netty transport: the broker already speaks Netty; no gRPC stack.
     *   <li>Election timeout min/max (150-300 ms by default): a follower that has not heard from a leader for a random
     *       time in this range starts a (pre-)vote; the leader heartbeats every min / 2 (75 ms) and steps down after max
     *       without a majority. The randomness separates candidates, so one round usually elects.
     *   <li>Pre-vote (Ratis default, kept): a node coming back from a partition does not disrupt a healthy leader.
     *   <li>Leader step-down wait = election timeout max (Ratis default 10 s): a leader that stepped down for lack of
     *       heartbeat replies stands again after one election timeout, not 10 s. With one voter of three dead, the one
     *       that stepped down may be the only one whose log is complete enough to win: waiting 10 s stalled the group
     *       for 10 s in the failover bench. Ratis also uses it as the JVM pause after which a leader steps down.
     *   <li>Snapshots every {@code snapshotThreshold} entries, two kept; a creation gap no larger than the threshold.
     *   <li>Small segments (8 MB by default, at most 1 MB preallocated): metadata entries are small. Only closed
     *       segments are purged after a snapshot.
     * </ul>
     */
    static RaftProperties serverProperties(RatisLogConfig config) {
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.NETTY);
        Voter self = config.self();
        NettyConfigKeys.Server.setHost(properties, self.host());
        NettyConfigKeys.Server.setPort(properties, self.port());
        RaftServerConfigKeys.setStorageDir(
                properties, List.of(config.storageDirectory().toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties, duration(config.electionTimeoutMin()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties, duration(config.electionTimeoutMax()));
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(
                properties, duration(config.electionTimeoutMax()));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, config.snapshotThreshold());
        RaftServerConfigKeys.Snapshot.setCreationGap(properties, Math.min(1024, config.snapshotThreshold()));
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(properties, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, config.purgeUpToSnapshot());
        RaftServerConfigKeys.Log.setPurgeGap(properties, (int) Math.min(1024, config.snapshotThreshold()));
        RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf(config.logSegmentBytes()));
        // read-only requests (sync) are linearizable: a follower asks the leader for its commit index first
        RaftServerConfigKeys.Read.setOption(properties, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // an entry is sent to the followers at once, not after a wait for more to batch: metadata entries are few
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(properties, TimeDuration.ZERO);
        RaftServerConfigKeys.Log.setPreallocatedSize(
                properties, SizeInBytes.valueOf(Math.min(config.logSegmentBytes(), 1L << 20)));
        return properties;
    }

    private static RaftClient client(RatisLogConfig config, RaftGroup group) {
        return client(config, group, RaftPeerId.valueOf(config.nodeId()));
    }

    private static RaftClient client(RatisLogConfig config, RaftGroup group, RaftPeerId leaderHint) {
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.NETTY);
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        RaftClientConfigKeys.Async.setOutstandingRequestsMax(properties, MAX_IN_FLIGHT);
        int attempts =
                (int) Math.max(1, config.proposeTimeout().toMillis() / RETRY_SLEEP.toLong(TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(group)
                .setLeaderId(leaderHint)
                .setProperties(properties)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(attempts, RETRY_SLEEP))
                .build();
    }

    private static TimeDuration duration(Duration duration) {
        return TimeDuration.valueOf(duration.toMillis(), TimeUnit.MILLISECONDS);
    }
}
