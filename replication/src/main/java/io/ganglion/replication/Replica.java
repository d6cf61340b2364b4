package io.ganglion.replication;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.SealReply;
import io.ganglion.replication.PeerMessage.Fetch;
import io.ganglion.replication.PeerMessage.FetchReply;
import io.ganglion.replication.PeerMessage.Progress;
import io.ganglion.replication.PeerMessage.Replicate;
import io.ganglion.replication.PeerMessage.Snapshot;
import io.ganglion.replication.ReplicaEffect.Append;
import io.ganglion.replication.ReplicaEffect.Confirm;
import io.ganglion.replication.ReplicaEffect.Deliverable;
import io.ganglion.replication.ReplicaEffect.Discard;
import io.ganglion.replication.ReplicaEffect.Flush;
import io.ganglion.replication.ReplicaEffect.PersistSeal;
import io.ganglion.replication.ReplicaEffect.ReadLog;
import io.ganglion.replication.ReplicaEffect.ReadPurpose;
import io.ganglion.replication.ReplicaEffect.Refuse;
import io.ganglion.replication.ReplicaEffect.ReplyDropped;
import io.ganglion.replication.ReplicaEffect.ReplyInstalled;
import io.ganglion.replication.ReplicaEffect.ReplySealed;
import io.ganglion.replication.ReplicaEffect.Reseed;
import io.ganglion.replication.ReplicaEffect.Send;
import io.ganglion.replication.ReplicaEffect.Truncate;
import io.ganglion.replication.ReplicaEvent.AppendDurable;
import io.ganglion.replication.ReplicaEvent.Assigned;
import io.ganglion.replication.ReplicaEvent.CatchUpRequested;
import io.ganglion.replication.ReplicaEvent.DropRequested;
import io.ganglion.replication.ReplicaEvent.InstallRequested;
import io.ganglion.replication.ReplicaEvent.LogRead;
import io.ganglion.replication.ReplicaEvent.PublishAdmitted;
import io.ganglion.replication.ReplicaEvent.Received;
import io.ganglion.replication.ReplicaEvent.SealPersisted;
import io.ganglion.replication.ReplicaEvent.SealRequested;
import io.ganglion.replication.ReplicaEvent.SettleAdmitted;
import io.ganglion.replication.ReplicaEvent.SettledLowWater;
import io.ganglion.replication.ReplicaEvent.Tick;
import io.ganglion.replication.ReplicaEvent.Unassigned;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One object's replica on one broker: the owner, follower or learner state machine of the object's current epoch, and
 * the seal and install steps of recovery, over a log it never touches itself.
 *
 * <pre>
 *   client ─PublishAdmitted─▶ owner ─Append──────────────▶ own journal ─AppendDurable─▶ owner
 *                               │  ─Send(Replicate)─▶ follower ─Append─▶ journal ─AppendDurable─▶ follower
 *                               ◀──────────────────────── Send(Progress: end, durable, history) ◀─┘
 *   commit = W-th highest durable offset over E (owner counted) ─▶ Confirm, Deliverable
 * </pre>
 *
 * <p>Implementation notes. Not thread-safe: one shard owns the replica and calls {@link #onEvent} only from its thread,
 * in the order events happened; the returned effects must be executed in order (storage effects on the object's log in
 * order, each answering with the event named in {@link ReplicaEffect}). The replica mirrors its log in memory as a
 * few numbers (start, end, durable end, epoch history, sealed epoch) and a publish-id index, never the records.
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Appends of epoch {@code <= fence} are refused; {@code fence} is raised by a seal (and by an install of epoch
 *       e + 1, which seals e) before {@link PersistSeal} is emitted, and a seal or install is only reported after
 *       {@link SealPersisted}.
 *   <li>An owner admits nothing and streams nothing but the epoch-start record itself before that record is durable
 *       on its own log, and a replica rebuilt after a crash never owns an epoch its log already held: an owner that
 *       lost records after followers confirmed them can therefore never write a second, different log in the same
 *       epoch. (The epoch start it streams early is the record it would write again after such a crash: the same
 *       epoch at the same offset, its log ending durably at the point it was installed to.)
 *   <li>A follower's report counts towards the commit only up to the prefix it shares with the owner's log (by epoch
 *       history), only once installed in the epoch, and not while suspended as a learner.
 *   <li>The commit offset never moves back and is only advanced to offsets at or past the epoch-start record, so the
 *       records recovered from earlier epochs commit together with the epoch start.
 * </ul>
 */
public final class Replica {
    private final ObjectId object;
    private final NodeId self;
    private final Incarnation incarnation;
    private final ReplicationConfig config;
    /** A replica rebuilt from a log never owns an epoch its log already held records of. */
    private final long ownableAbove;
    /** The last epoch this process took as owner (0: none): its successor need not wait out a deposed owner. */
    private long lastOwnedEpoch;
    /** The delivery wait of {@link #lastOwnedEpoch}: its successor in this process keeps what is left of it. */
    private long lastOwnedDeliverFromMs = Long.MIN_VALUE;

    private long start;
    private long end;
    private long durable;
    private EpochHistory history;
    private long fence;
    /** The highest epoch an assignment from the metadata named: a stream of an epoch up to it is not adopted. */
    private long assignedEpoch;

    private long persistedSeal;
    /** The highest epoch a {@link PersistSeal} went out for: one in flight covers a request for the same epoch. */
    private long sealPersisting;

    private final PublishIndex published;
    private long lowWater;

    private OwnerRole owner;
    private FollowerRole follower;
    private final List<SealWaiter> sealWaiters = new ArrayList<>();
    private Installing installing;
    private CatchingUp catchingUp;
    private final TreeMap<NodeId, Serving> serving = new TreeMap<>();

    private List<ReplicaEffect> out = new ArrayList<>();

    private record SealWaiter(NodeId controller, Epoch epoch) {}

    private record CatchingUp(NodeId controller, Epoch epoch) {}

    private record Serving(Epoch installEpoch, long from) {}

    /**
     * Messages the publish-id index remembers (see {@link PublishIndex}): many seconds of traffic at tens of thousands
     * of messages a second, about 13 MiB of heap when full.
     */
    public static final int PUBLISH_INDEX_CAPACITY = 1 << 17;

    private static final class Installing {
        final NodeId controller;
        final Epoch epoch;
        final LogPosition point;
        final List<NodeId> sources;
        int sourceIndex;
        long askedMs;
        boolean copied;

        Installing(NodeId controller, Epoch epoch, LogPosition point, List<NodeId> sources) {
            this.controller = controller;
            this.epoch = epoch;
            this.point = point;
            this.sources = sources;
        }
    }

    /** What the owner knows of one follower. */
    static final class Peer {
        final NodeId node;
        Incarnation incarnation;
        /** The owner found where the follower's log diverges and feeds it from {@link #next}. */
        boolean synced;
        /** Came back with a new incarnation: a learner, not counted until its lag is small. */
        boolean suspended;

        long next;
        long truncateFrom = -1;
        /**
         * A Replicate told the follower to truncate (or a Snapshot to reseed): it is sent nothing more until it reports
         * again. The owner feeds it from {@link #next} as if it had cut its divergent suffix; if that message was lost,
         * a later record landing just past the old end would follow the suffix, a second log of this epoch.
         */
        boolean cutUnconfirmed;

        long reportedEnd = -1;
        /** The follower's durable offset within the prefix it shares with the owner: what counts for W. */
        long matched = -1;

        long lastHeardMs = Long.MIN_VALUE;
        long lastSentMs = Long.MIN_VALUE;
        /** When the owner last sent this follower a Replicate (with records or as a lease renewal). */
        long lastStampMs = Long.MIN_VALUE;
        /** The highest send time of ours the follower echoed: it grants the owner lease until echo + lease. */
        long echoMs = Long.MIN_VALUE;

        boolean reading;
        /** {offset, bytes} streamed and not yet reported received. */
        final ArrayDeque<long[]> inflight = new ArrayDeque<>();

        long inflightBytes;

        Peer(NodeId node) {
            this.node = node;
        }
    }

    private final class OwnerRole {
        final Epoch epoch;
        final int writeRequirement;
        final TreeMap<NodeId, Peer> peers = new TreeMap<>();
        final TreeMap<Long, PublishId> awaiting = new TreeMap<>();
        final long epochStart;
        /** Before this local time the owner delivers nothing: a deposed owner's lease may not have lapsed. */
        final long deliverFromMs;

        Set<NodeId> installed;
        /** Followers leaving the epoch: never counted again. */
        Set<NodeId> leaving;
        /**
         * Per leaving follower, the offset W members of E' must be durable at before it may leave E: the commit when
         * this owner stopped counting it (and at least the epoch start, which the recovered records lie below).
         */
        final TreeMap<NodeId, Long> leaveAt = new TreeMap<>();
        /** The controllers waiting to hear that a leaving follower may leave E. */
        final TreeMap<NodeId, NodeId> dropWaiters = new TreeMap<>();
        /** The commit rule's latest value over the counted members: below {@link #commit} once a follower leaves. */
        long counting = -1;

        long retentionProtectMs;
        /**
         * Publishes that came before the epoch start was durable, admitted in order once it is. Refused instead, they
         * came straight back: a broker that forwards publishes re-sends a refused one within milliseconds, so a few
         * hundred waiting publishes made thousands of refusals on the new owner's shard, ahead of the durability report
         * that starts it (its start took 50-170 ms in the failover bench instead of one force).
         */
        final ArrayDeque<PublishAdmitted> early = new ArrayDeque<>();

        boolean started;
        boolean sealed;
        long commit = -1;

        OwnerRole(Assigned assigned, long epochStart, long deliverFromMs) {
            this.epoch = assigned.assignment().epoch();
            this.writeRequirement = assigned.writeRequirement();
            this.installed = assigned.installed();
            this.leaving = assigned.leaving();
            this.retentionProtectMs = assigned.retentionProtectMs();
            this.epochStart = epochStart;
            for (NodeId node : leaving) {
                leaveAt.put(node, epochStart);
            }
            this.deliverFromMs = deliverFromMs;
            for (NodeId node : assigned.assignment().followers()) {
                peers.put(node, new Peer(node));
            }
        }

        boolean counted(Peer peer) {
            return peer.synced
                    && !peer.suspended
                    && peer.matched >= 0
                    && installed.contains(peer.node)
                    && !leaving.contains(peer.node);
        }

        /**
         * Takes the leaving followers of the view: each newly leaving one stops counting now, and must not leave E
         * before W members of E' are durable at or past what was committed with it.
         */
        void leave(Set<NodeId> nowLeaving) {
            for (NodeId node : nowLeaving) {
                if (!leaving.contains(node)) {
                    leaveAt.put(node, Math.max(commit, epochStart));
                }
            }
            leaving = nowLeaving;
        }
    }

    private static final class FollowerRole {
        final Epoch epoch;
        final NodeId owner;
        long lastProgressMs = Long.MIN_VALUE;
        /** The highest owner send time received in this role, echoed in every Progress. */
        long echoMs = Long.MIN_VALUE;

        FollowerRole(Epoch epoch, NodeId owner) {
            this.epoch = epoch;
            this.owner = owner;
        }
    }

    private Replica(ObjectId object, NodeId self, Incarnation incarnation, ReplicationConfig config, RecoveredLog log) {
        this.object = Objects.requireNonNull(object, "object");
        this.self = Objects.requireNonNull(self, "self");
        this.incarnation = Objects.requireNonNull(incarnation, "incarnation");
        this.config = Objects.requireNonNull(config, "config");
        this.start = log.start();
        this.end = log.end();
        this.durable = log.end();
        this.history = log.history();
        this.fence = log.sealedEpoch().value();
        this.persistedSeal = fence;
        this.sealPersisting = fence;
        this.published = PublishIndex.of(log.published(), PUBLISH_INDEX_CAPACITY);
        this.ownableAbove = log.history().lastEpoch().value();
    }

    /**
     * The replica of {@code object} on broker {@code self} (process {@code incarnation}) over the log its storage
     * recovered ({@link RecoveredLog#EMPTY} for a new replica).
     */
    public static Replica start(
            ObjectId object, NodeId self, Incarnation incarnation, ReplicationConfig config, RecoveredLog log) {
        return new Replica(object, self, incarnation, config, log);
    }

    /**
     * Handles one event and returns the effects to execute, in order. Never throws for a message from a peer or a
     * request that no longer fits (a stale epoch, a sealed log): such an event is ignored or refused by an effect.
     */
    public List<ReplicaEffect> onEvent(ReplicaEvent event, long nowMs) {
        out = new ArrayList<>();
        switch (event) {
            case Assigned assigned -> onAssigned(assigned, nowMs);
            case Unassigned unassigned -> dropRoles();
            case PublishAdmitted publish -> onPublish(publish, nowMs);
            case SettleAdmitted settle -> onSettle(settle, nowMs);
            case SettledLowWater lowWaterMark -> lowWater = Math.max(lowWater, lowWaterMark.offset());
            case AppendDurable appended -> onDurable(appended.offset(), nowMs);
            case SealPersisted persisted -> onSealPersisted(persisted.epoch());
            case LogRead read -> onLogRead(read, nowMs);
            case Received received -> onReceived(received.from(), received.message(), nowMs);
            case SealRequested seal -> onSeal(seal);
            case InstallRequested install -> onInstall(install, nowMs);
            case CatchUpRequested catchUp -> onCatchUp(catchUp, nowMs);
            case DropRequested drop -> onDropRequested(drop);
            case Tick tick -> onTick(nowMs);
        }
        List<ReplicaEffect> effects = out;
        out = new ArrayList<>();
        return effects;
    }

    // ---- queries -------------------------------------------------------------------------------------------------

    public ObjectId object() {
        return object;
    }

    /** The epoch this replica owns and admits publishes under, if any. */
    public Optional<Epoch> owning() {
        return owner != null && owner.started && !owner.sealed ? Optional.of(owner.epoch) : Optional.empty();
    }

    /**
     * The epoch this replica takes publishes for: the one it {@link #owning owns}, or the one whose owner role it took
     * and whose epoch start is not durable yet (publishes for it are held until it is, then admitted). Empty when
     * sealed.
     */
    public Optional<Epoch> takingPublishes() {
        return owner != null && !owner.sealed && fence < owner.epoch.value()
                ? Optional.of(owner.epoch)
                : Optional.empty();
    }

    /**
     * Whether the owner of {@code epoch} may hand messages to consumers at {@code nowMs} (its local clock): it owns
     * that epoch ({@link #owning}; a queue built in an earlier epoch never delivers again), a new owner of a later epoch waited {@link ReplicationConfig#newOwnerDeliveryDelayMs} since it took
     * the epoch, and it holds the owner lease ({@link #deliverUntilMs}). Confirms and {@link
     * ReplicaEffect.Deliverable} do not wait for it: a queue takes committed messages but hands none out while this is
     * false. Call it before every delivery; it turns true again as followers answer (after a {@link
     * ReplicaEvent.Received} or {@link ReplicaEvent.Tick}) or the wait ends.
     *
     * <p>Why: an owner cut off from the controller and not sealed itself keeps its epoch in its view, and its queue
     * still holds committed messages the new owner delivers again (marked redelivered). The lease bounds how long it
     * can go on: any W members of E meet any R sealed ones (W + R = |E| + 1), so once recovery holds R seals, either
     * this owner is sealed or one of the W - 1 followers that grant its lease is, and a sealed follower answers no
     * more; the lease lapses at most {@code ownerLeaseMs} after that seal, before the new owner's wait ends.
     */
    public boolean mayDeliver(Epoch epoch, long nowMs) {
        if (!owning().equals(Optional.of(epoch)) || fence >= epoch.value() || nowMs < owner.deliverFromMs) {
            return false;
        }
        return nowMs < deliverUntilMs();
    }

    /**
     * The local time until which the owner lease holds on the answers received so far: {@link Long#MAX_VALUE} when W
     * is 1 (recovery then seals every member of E, this owner included, so no lease is needed), {@link
     * Long#MIN_VALUE} when not owning or fewer than W - 1 followers answered. It is the (W - 1)-th highest echoed send
     * time plus {@link ReplicationConfig#ownerLeaseMs}; any follower of the assignment (a member of E) counts.
     */
    public long deliverUntilMs() {
        if (owner == null) {
            return Long.MIN_VALUE;
        }
        int needed = owner.writeRequirement - 1;
        if (needed <= 0) {
            return Long.MAX_VALUE;
        }
        long[] echoes = new long[owner.peers.size()];
        int n = 0;
        for (Peer peer : owner.peers.values()) {
            if (peer.echoMs != Long.MIN_VALUE) {
                echoes[n++] = peer.echoMs;
            }
        }
        if (n < needed) {
            return Long.MIN_VALUE;
        }
        Arrays.sort(echoes, 0, n);
        return echoes[n - needed] + config.ownerLeaseMs();
    }

    /** The epoch this replica is the owner of, sealed or not, if any. */
    public Optional<Epoch> ownedEpoch() {
        return owner == null ? Optional.empty() : Optional.of(owner.epoch);
    }

    /**
     * Whether this replica awaits an epoch it has not heard of: it neither owns nor follows one, and every epoch the
     * metadata assigned here is sealed here (a recovery sealed it and its next epoch is not known here yet), or none
     * was assigned. Once the metadata shows a later epoch without it, or it takes a role, it no longer awaits.
     */
    public boolean awaitingEpoch() {
        return takingPublishes().isEmpty() && follower == null && assignedEpoch <= fence;
    }

    /** The epoch this replica follows, if any. */
    public Optional<Epoch> following() {
        return follower == null ? Optional.empty() : Optional.of(follower.epoch);
    }

    /** The owner's commit offset, -1 when not owning or nothing committed in this epoch yet. */
    public long commitOffset() {
        return owner == null ? -1 : owner.commit;
    }

    /** False when this replica can never own {@code epoch}: it held records of it before a restart, or sealed it. */
    public boolean mayOwn(Epoch epoch) {
        return epoch.value() > ownableAbove && epoch.value() > fence;
    }

    /** Followers the owner does not count now: suspended learners and members not installed. Empty when not owning. */
    public List<NodeId> learners() {
        if (owner == null) {
            return List.of();
        }
        List<NodeId> learners = new ArrayList<>();
        for (Peer peer : owner.peers.values()) {
            if (peer.suspended || !owner.installed.contains(peer.node)) {
                learners.add(peer.node);
            }
        }
        return learners;
    }

    /**
     * What the owner counts of each follower: its durable offset within the prefix it shares with the owner (-1 before
     * it reported one). Empty when not owning.
     */
    public SortedMap<NodeId, Long> followerDurable() {
        TreeMap<NodeId, Long> durable = new TreeMap<>();
        if (owner != null) {
            owner.peers.values().forEach(peer -> durable.put(peer.node, peer.matched));
        }
        return durable;
    }

    public long start() {
        return start;
    }

    public long end() {
        return end;
    }

    public long durable() {
        return durable;
    }

    public EpochHistory history() {
        return history;
    }

    /** The highest epoch this replica refuses appends of. */
    public Epoch sealedEpoch() {
        return Epoch.of(fence);
    }

    public LogPosition position() {
        return end < 0 ? LogPosition.EMPTY : new LogPosition(history.epochAt(end), end);
    }

    // ---- local log -----------------------------------------------------------------------------------------------

    private void appendLocal(List<Record> records) {
        for (Record record : records) {
            if (record.offset() != end + 1) {
                throw new IllegalStateException("append at " + record.offset() + " after end " + end);
            }
            history = history.append(record.epoch(), record.offset());
            end = record.offset();
            if (record instanceof Record.Message message) {
                published.put(message.id(), message.offset());
            }
        }
        out.add(new Append(records));
    }

    private void truncateLocal(long from) {
        if (from > end) {
            return;
        }
        out.add(new Truncate(from));
        end = from - 1;
        durable = Math.min(durable, end);
        history = history.truncateFrom(from);
        published.removeFrom(from);
    }

    private void reseedLocal(long newStart, EpochHistory newHistory) {
        out.add(new Reseed(newStart, newHistory));
        start = newStart;
        end = newStart - 1;
        durable = end;
        history = newHistory.truncateFrom(newStart);
        published.clear();
    }

    private boolean holds(LogPosition point) {
        return point.offset() < 0
                || (end >= point.offset() && history.epochAt(point.offset()).equals(point.epoch()));
    }

    private void send(NodeId to, PeerMessage message) {
        out.add(new Send(to, message));
    }

    // ---- roles ---------------------------------------------------------------------------------------------------

    private void onAssigned(Assigned assigned, long nowMs) {
        Assignment assignment = assigned.assignment();
        Epoch epoch = assignment.epoch();
        assignedEpoch = Math.max(assignedEpoch, epoch.value());
        if (follower != null && follower.epoch.isAfter(epoch)) {
            // The metadata here is behind the owner this replica follows already (it took that later epoch from the
            // owner's stream): the older epoch was superseded. Taking a role in it would drop the later one, and as
            // its owner this log would write the older epoch's start where the later epoch's owner streams its own.
            return;
        }
        if (assignment.owner().equals(self)) {
            if (owner != null && owner.epoch.equals(epoch)) {
                owner.installed = assigned.installed();
                owner.leave(assigned.leaving());
                owner.retentionProtectMs = assigned.retentionProtectMs();
                // a follower that left E (HistoryRecord.FollowerDropped): nothing more to it
                owner.peers.keySet().retainAll(assignment.followers());
                // a follower that joined the epoch (HistoryRecord.FollowerAdded): fed as a learner from where its log
                // meets ours, counted once installed
                for (NodeId node : assignment.followers()) {
                    if (!owner.peers.containsKey(node)) {
                        Peer peer = new Peer(node);
                        owner.peers.put(node, peer);
                        stamp(peer, nowMs);
                    }
                }
                advanceCommit();
                return;
            }
            dropRoles();
            // Not installed, sealed, or this log already holds records of the epoch (this process owned it before, or
            // it restarted after owning it): starting the epoch again could write a second log of it.
            if (!assigned.installed().contains(self)
                    || !mayOwn(epoch)
                    || history.lastEpoch().compareTo(epoch) >= 0) {
                return;
            }
            if (installing != null && !installing.epoch.isAfter(epoch)) {
                installing = null; // activated: whatever the install did not copy, the owner never had
            }
            // With W >= 2 an owner of an earlier epoch that was not sealed itself may still hold its lease: wait it
            // out,
            // unless that owner was this process (it owned the epoch just before, and taking this one ended that role);
            // then what is left of that epoch's own wait still applies, for the owners before it.
            long deliverFrom = nowMs;
            if (assigned.writeRequirement() >= 2 && epoch.value() > 1) {
                deliverFrom = lastOwnedEpoch == epoch.value() - 1
                        ? Math.max(nowMs, lastOwnedDeliverFromMs)
                        : nowMs + config.newOwnerDeliveryDelayMs();
            }
            owner = new OwnerRole(assigned, end + 1, deliverFrom);
            lastOwnedEpoch = epoch.value();
            lastOwnedDeliverFromMs = deliverFrom;
            // An installed follower's log ends at the recovery point, as this one does (the install cut and copied it
            // there, or its seal showed it ends there): it is fed from the epoch start on without first asking where
            // it stands, and takes the epoch start while this log forces it. A follower whose log is not there after
            // all refuses the record and reports where it is (resync), as one that took its role from the metadata
            // does: it may have missed what was streamed before.
            for (Peer peer : owner.peers.values()) {
                if (assigned.installed().contains(peer.node)) {
                    peer.synced = true;
                    peer.next = end + 1;
                }
            }
            Record epochStart = new Record.EpochStart(epoch, end + 1);
            appendLocal(List.of(epochStart));
            stream(epochStart, nowMs);
            // Ask each follower where it stands. One that took the epoch before this role existed sent its first
            // report already, and it was dropped: without this the owner learned of it only from its next periodic
            // report or the first lease renewal, 100 ms on, and confirmed nothing meanwhile (the failover bench).
            for (Peer peer : owner.peers.values()) {
                stamp(peer, nowMs);
            }
        } else if (assignment.followers().contains(self)) {
            if (follower != null && follower.epoch.equals(epoch) && follower.owner.equals(assignment.owner())) {
                return;
            }
            dropRoles();
            if (epoch.value() <= fence) {
                return;
            }
            follow(epoch, assignment.owner()); // activated without us: we catch up from the owner as a learner
            sendProgress(nowMs, true); // the owner may have streamed to this log before it followed: feed it again
            checkCaughtUp();
        } else {
            dropRoles();
        }
    }

    /** Follows {@code owner} in the activated {@code epoch}; an install of that epoch or an earlier one is over. */
    private void follow(Epoch epoch, NodeId owner) {
        if (installing != null && !installing.epoch.isAfter(epoch)) {
            installing = null;
        }
        follower = new FollowerRole(epoch, owner);
    }

    /** Publishes awaiting a confirm lose their owner: their outcome is unknown here, and their sender re-sends them. */
    private void dropRoles() {
        owner = null;
        follower = null;
    }

    // ---- owner ---------------------------------------------------------------------------------------------------

    /** Publishes an owner holds before its epoch start is durable, at most; more are refused. */
    static final int EARLY_PUBLISHES_MAX = 10_000;

    private static final String NOT_STARTED = "epoch start not durable yet";

    private Optional<String> admissionRefusal(Epoch epoch) {
        if (owner == null) {
            return Optional.of("not the owner");
        }
        if (!owner.epoch.equals(epoch)) {
            return Optional.of("admitted under epoch " + epoch + ", owner of " + owner.epoch);
        }
        if (owner.sealed || fence >= epoch.value()) {
            return Optional.of("sealed");
        }
        if (!owner.started) {
            return Optional.of(NOT_STARTED);
        }
        return Optional.empty();
    }

    private void onPublish(PublishAdmitted publish, long nowMs) {
        Optional<String> refusal = admissionRefusal(publish.epoch());
        if (refusal.isPresent() && refusal.get().equals(NOT_STARTED) && owner.early.size() < EARLY_PUBLISHES_MAX) {
            owner.early.addLast(publish);
            return;
        }
        if (refusal.isPresent()) {
            out.add(new Refuse(publish.id(), refusal.get()));
            return;
        }
        Long existing = published.get(publish.id());
        if (existing != null) {
            if (existing <= owner.commit) {
                out.add(new Confirm(publish.id(), existing));
            } else {
                owner.awaiting.put(existing, publish.id());
            }
            return;
        }
        Record record = new Record.Message(owner.epoch, end + 1, publish.id(), publish.body());
        appendLocal(List.of(record));
        owner.awaiting.put(record.offset(), publish.id());
        stream(record, nowMs);
    }

    private void onSettle(SettleAdmitted settle, long nowMs) {
        if (owner == null || owner.sealed || !owner.started || fence >= owner.epoch.value()) {
            return;
        }
        Record record = new Record.Settle(owner.epoch, end + 1, settle.offset());
        appendLocal(List.of(record));
        stream(record, nowMs);
    }

    /** Sends a record just appended to every follower that is live (fed up to it) and within its window. */
    private void stream(Record record, long nowMs) {
        for (Peer peer : owner.peers.values()) {
            if (!peer.synced || peer.reading || peer.cutUnconfirmed || peer.next != record.offset()) {
                continue;
            }
            if (windowRoom(peer) > 0 && peer.inflightBytes + record.size() <= config.windowBytes()) {
                sendRecords(peer, List.of(record), nowMs);
            }
            // else: the follower falls behind the window and is fed from the log as it reports progress
        }
    }

    private int windowRoom(Peer peer) {
        return config.windowRecords() - peer.inflight.size();
    }

    private void sendRecords(Peer peer, List<Record> records, long nowMs) {
        send(peer.node, new Replicate(owner.epoch, peer.truncateFrom, records, nowMs, start));
        peer.cutUnconfirmed = peer.truncateFrom >= 0;
        peer.truncateFrom = -1;
        peer.lastSentMs = nowMs;
        peer.lastStampMs = nowMs;
        for (Record record : records) {
            peer.inflight.addLast(new long[] {record.offset(), record.size()});
            peer.inflightBytes += record.size();
            peer.next = record.offset() + 1;
        }
    }

    /** Feeds a follower that is behind the live stream from the log, within its window. */
    private void feed(Peer peer, long nowMs) {
        if (owner == null || !owner.started || !peer.synced || peer.reading || peer.cutUnconfirmed) {
            return;
        }
        if (peer.next < start) {
            send(peer.node, new Snapshot(owner.epoch, start, history));
            peer.next = start;
            peer.truncateFrom = -1;
            peer.lastSentMs = nowMs;
            peer.cutUnconfirmed = true;
            return;
        }
        if (peer.next > end) {
            if (peer.truncateFrom >= 0) {
                sendRecords(peer, List.of(), nowMs);
            }
            return;
        }
        int room = Math.min(windowRoom(peer), config.fetchRecords());
        if (room <= 0 || peer.inflightBytes >= config.windowBytes()) {
            return;
        }
        peer.reading = true;
        out.add(new ReadLog(ReadPurpose.FEED, peer.node, peer.next, Math.min(end, peer.next + room - 1)));
    }

    private void onProgress(NodeId from, Progress progress, long nowMs) {
        if (owner == null || !progress.epoch().equals(owner.epoch)) {
            return;
        }
        Peer peer = owner.peers.get(from);
        if (peer == null) {
            return;
        }
        peer.lastHeardMs = nowMs;
        peer.cutUnconfirmed = false; // its log as it is now: a prefix of ours, or cut again below
        if (progress.echoMs() <= nowMs) {
            peer.echoMs = Math.max(peer.echoMs, progress.echoMs());
        }
        if (peer.incarnation != null && !peer.incarnation.equals(progress.incarnation())) {
            peer.suspended = true; // a restarted follower rejoins as a learner
            peer.synced = false;
        }
        peer.incarnation = progress.incarnation();
        long common = EpochHistory.commonPrefix(history, end, progress.history(), progress.end());
        peer.reportedEnd = progress.end();
        boolean tailLost =
                peer.synced && peer.next > progress.end() + 1 && nowMs - peer.lastSentMs >= config.resendAfterMs();
        if (!peer.synced || progress.resync() || common <= progress.end() || tailLost) {
            peer.synced = true;
            peer.next = common;
            peer.truncateFrom = common <= progress.end() ? common : -1;
            peer.inflight.clear();
            peer.inflightBytes = 0;
            peer.reading = false;
        }
        peer.matched = Math.min(progress.durable(), common - 1);
        while (!peer.inflight.isEmpty() && peer.inflight.peekFirst()[0] <= progress.end()) {
            peer.inflightBytes -= peer.inflight.pollFirst()[1];
        }
        if (peer.suspended && peer.truncateFrom < 0 && end - peer.matched <= config.learnerLag()) {
            peer.suspended = false; // caught up: promoted back into its slot
        }
        advanceCommit();
        feed(peer, nowMs);
    }

    /** The commit rule: the W-th highest durable offset over E, the owner counted; silent members are absent. */
    private void advanceCommit() {
        if (owner == null || !owner.started) {
            return;
        }
        long[] reports = new long[owner.peers.size() + 1];
        int n = 0;
        reports[n++] = durable;
        for (Peer peer : owner.peers.values()) {
            if (owner.counted(peer)) {
                reports[n++] = peer.matched;
            }
        }
        long commit = CommitRule.commitOffset(Arrays.copyOf(reports, n), owner.writeRequirement);
        owner.counting = commit;
        answerDrops();
        if (commit < owner.epochStart || commit <= owner.commit) {
            return;
        }
        owner.commit = commit;
        while (!owner.awaiting.isEmpty() && owner.awaiting.firstKey() <= commit) {
            Map.Entry<Long, PublishId> confirmed = owner.awaiting.pollFirstEntry();
            out.add(new Confirm(confirmed.getValue(), confirmed.getKey()));
        }
        out.add(new Deliverable(owner.epoch, commit));
    }

    private void onDropRequested(DropRequested drop) {
        if (owner != null && owner.epoch.equals(drop.epoch())) {
            owner.dropWaiters.put(drop.follower(), drop.controller());
            answerDrops();
        }
    }

    /**
     * Answers each controller waiting for a leaving follower once W members of E' (the counted ones) are durable at or
     * past where that follower stopped counting: every record this owner confirmed, and every record recovered below
     * its epoch start, is then on W members without it. A follower this owner has no peer for is answered at once: the
     * view dropped it already, or never showed it to this owner, which then never counted it.
     */
    private void answerDrops() {
        if (owner.dropWaiters.isEmpty()) {
            return; // the common case, on every durability report
        }
        var waiters = owner.dropWaiters.entrySet().iterator();
        while (waiters.hasNext()) {
            Map.Entry<NodeId, NodeId> waiter = waiters.next();
            NodeId follower = waiter.getKey();
            Long leaveAt = owner.leaveAt.get(follower);
            boolean neverCounted = !owner.peers.containsKey(follower);
            if (neverCounted || (owner.leaving.contains(follower) && leaveAt != null && owner.counting >= leaveAt)) {
                out.add(new ReplyDropped(waiter.getValue(), owner.epoch, follower));
                waiters.remove();
            }
        }
    }

    private void ownerTick(long nowMs) {
        for (Peer peer : owner.peers.values()) {
            feed(peer, nowMs);
        }
        if (!owner.started) {
            return;
        }
        renewLease(nowMs);
        long below = Math.min(lowWater, owner.commit + 1);
        for (Peer peer : owner.peers.values()) {
            if (peer.lastHeardMs != Long.MIN_VALUE && nowMs - peer.lastHeardMs <= owner.retentionProtectMs) {
                below = Math.min(below, peer.matched + 1);
            }
        }
        if (below > start) {
            out.add(new Discard(below));
            start = below;
        }
    }

    /**
     * Stamps a follower that heard nothing from us since the last renewal boundary (a multiple of a quarter of the
     * lease): its answer renews the lease. The boundaries are the same for every replica, so a broker's idle owners
     * renew together, in one tick, and what they send one peer leaves in one write (an idle queue's renewals were a
     * wake-up of its own for both brokers, each 100 ms per follower). Stamps stay at most a quarter of the lease plus a
     * tick apart.
     */
    private void renewLease(long nowMs) {
        if (owner.sealed || owner.writeRequirement < 2) {
            return;
        }
        long renewMs = config.leaseRenewMs();
        for (Peer peer : owner.peers.values()) {
            if (peer.lastStampMs == Long.MIN_VALUE
                    || Math.floorDiv(nowMs, renewMs) != Math.floorDiv(peer.lastStampMs, renewMs)) {
                stamp(peer, nowMs);
            }
        }
    }

    /** An empty Replicate stamped {@code nowMs}: the follower answers where it stands and echoes the stamp. */
    private void stamp(Peer peer, long nowMs) {
        send(peer.node, new Replicate(owner.epoch, -1, List.of(), nowMs, start));
        peer.lastStampMs = nowMs;
    }

    // ---- follower ------------------------------------------------------------------------------------------------

    private void sendProgress(long nowMs, boolean resync) {
        follower.lastProgressMs = nowMs;
        send(follower.owner, new Progress(follower.epoch, incarnation, history, end, durable, resync, follower.echoMs));
    }

    private void onReplicate(NodeId from, Replicate replicate, long nowMs) {
        if (adopts(replicate)) {
            // The owner of an epoch the metadata here does not show yet: only a broker that saw the epoch activated
            // with itself as owner streams it, and only to that epoch's followers, so this replica follows it now
            // instead of a metadata round later (13-67 ms in the failover bench). The fence still holds: a sealed
            // epoch is never followed.
            dropRoles();
            follow(replicate.epoch(), from);
        }
        if (follower == null
                || !from.equals(follower.owner)
                || !replicate.epoch().equals(follower.epoch)
                || replicate.epoch().value() <= fence) {
            return;
        }
        follower.echoMs = Math.max(follower.echoMs, replicate.sentMs());
        // The owner's retention: what this log holds durably below the owner's start is settled and not needed. Only
        // once this log holds a record of the followed epoch: then all of it is the owner's log (it took the owner's
        // records after any divergent suffix was cut), never a divergent prefix.
        OptionalLong followed = history.startOf(follower.epoch);
        long below = Math.min(replicate.discardBelow(), durable + 1);
        if (followed.isPresent() && followed.getAsLong() <= end && below > start) {
            out.add(new Discard(below));
            start = below;
        }
        if (replicate.records().isEmpty() && replicate.truncateFrom() < 0) {
            sendProgress(nowMs, false); // a lease renewal: answer at once
            return;
        }
        boolean truncated = false;
        if (replicate.truncateFrom() >= 0 && replicate.truncateFrom() <= end && !staleTruncation(replicate)) {
            truncateLocal(replicate.truncateFrom());
            truncated = true;
        }
        List<Record> fresh = new ArrayList<>(replicate.records().size());
        for (Record record : replicate.records()) {
            if (record.offset() > end) {
                fresh.add(record);
            } else if (record.offset() >= start
                    && !history.epochAt(record.offset()).equals(record.epoch())) {
                // This log holds another epoch's record there (one its owner of that epoch wrote and no recovery
                // kept): taking the records after it would leave two logs of the followed epoch. Ask to be fed
                // again: the owner cuts this log back to where it meets its own.
                sendProgress(nowMs, true);
                return;
            }
        }
        if (!fresh.isEmpty()) {
            Record first = fresh.get(0);
            if (first.offset() != end + 1
                    || first.epoch().compareTo(history.lastEpoch()) < 0
                    || fresh.get(fresh.size() - 1).epoch().isAfter(follower.epoch)) {
                sendProgress(nowMs, true); // a gap or a record that cannot follow ours: ask to be fed again
                return;
            }
            appendLocal(fresh);
        }
        if (truncated) {
            out.add(new Flush());
            sendProgress(nowMs, false);
        }
    }

    /**
     * Whether to follow the sender of {@code replicate} for its epoch ahead of the metadata: an epoch after every one
     * the metadata assigned here, after the fence, and after the one followed now; not while this replica owns an
     * epoch (the metadata ends that role).
     */
    private boolean adopts(Replicate replicate) {
        long epoch = replicate.epoch().value();
        return owner == null
                && epoch > fence
                && epoch > assignedEpoch
                && (follower == null || replicate.epoch().isAfter(follower.epoch));
    }

    /**
     * Whether the owner's truncation answers a report older than this log: the owner computes it from a Progress, and
     * a second report sent before the first truncation arrived makes it send another, which may reach this log after
     * it truncated, took the owner's records and reported them durable (and the owner counted them). A truncation that
     * would cut records of the epoch this replica follows is stale (only the owner writes them, so its log holds
     * them), and so is one whose first record is the very record this log holds there (same epoch at that offset).
     */
    private boolean staleTruncation(Replicate replicate) {
        OptionalLong followed = history.startOf(follower.epoch);
        if (followed.isPresent() && followed.getAsLong() <= end) {
            return true;
        }
        long from = replicate.truncateFrom();
        if (replicate.records().isEmpty()) {
            return false;
        }
        Record first = replicate.records().get(0);
        return first.offset() == from && from >= start && history.epochAt(from).equals(first.epoch());
    }

    private void onSnapshot(NodeId from, Snapshot snapshot, long nowMs) {
        if (installing != null && !installing.copied && snapshot.epoch().equals(installing.epoch)) {
            reseedLocal(snapshot.start(), snapshot.history());
            askSource(nowMs);
        } else if (follower != null
                && from.equals(follower.owner)
                && snapshot.epoch().equals(follower.epoch)) {
            reseedLocal(snapshot.start(), snapshot.history());
            sendProgress(nowMs, false);
        }
    }

    private void checkCaughtUp() {
        if (catchingUp == null || follower == null || !follower.epoch.equals(catchingUp.epoch)) {
            return;
        }
        OptionalLong epochStart = history.startOf(follower.epoch);
        if (epochStart.isPresent() && durable >= epochStart.getAsLong()) {
            out.add(new ReplyInstalled(catchingUp.controller, catchingUp.epoch));
            catchingUp = null;
        }
    }

    private void onCatchUp(CatchUpRequested catchUp, long nowMs) {
        catchingUp = new CatchingUp(catchUp.controller(), catchUp.epoch());
        if (follower != null && follower.epoch.equals(catchUp.epoch())) {
            sendProgress(nowMs, false);
        }
        checkCaughtUp();
    }

    // ---- storage answers, messages, time -------------------------------------------------------------------------

    private void onDurable(long offset, long nowMs) {
        long next = Math.min(offset, end);
        if (next <= durable) {
            return;
        }
        durable = next;
        if (owner != null) {
            if (!owner.started && durable >= owner.epochStart) {
                owner.started = true;
                for (Peer peer : owner.peers.values()) {
                    feed(peer, nowMs);
                }
                List<PublishAdmitted> early = new ArrayList<>(owner.early);
                owner.early.clear();
                for (PublishAdmitted publish : early) {
                    onPublish(publish, nowMs);
                }
            }
            advanceCommit();
        }
        if (follower != null) {
            sendProgress(nowMs, false);
            checkCaughtUp();
        }
        checkInstalled();
    }

    private void onLogRead(LogRead read, long nowMs) {
        switch (read.purpose()) {
            case FEED -> {
                if (owner == null) {
                    return;
                }
                Peer peer = owner.peers.get(read.peer());
                if (peer == null || !peer.reading) {
                    return;
                }
                peer.reading = false;
                List<Record> records = new ArrayList<>();
                long expected = peer.next;
                long bytes = peer.inflightBytes;
                for (Record record : read.records()) {
                    if (record.offset() != expected || bytes + record.size() > config.windowBytes()) {
                        break;
                    }
                    records.add(record);
                    bytes += record.size();
                    expected++;
                }
                if (!records.isEmpty() || peer.truncateFrom >= 0) {
                    sendRecords(peer, records, nowMs);
                }
            }
            case INSTALL -> {
                Serving served = serving.remove(read.peer());
                if (served != null) {
                    send(read.peer(), new FetchReply(served.installEpoch(), served.from(), read.records()));
                }
            }
        }
    }

    private void onReceived(NodeId from, PeerMessage message, long nowMs) {
        switch (message) {
            case Replicate replicate -> onReplicate(from, replicate, nowMs);
            case Progress progress -> onProgress(from, progress, nowMs);
            case Fetch fetch -> onFetch(from, fetch);
            case FetchReply reply -> onFetchReply(reply, nowMs);
            case Snapshot snapshot -> onSnapshot(from, snapshot, nowMs);
        }
    }

    private void onTick(long nowMs) {
        if (owner != null) {
            ownerTick(nowMs);
        }
        if (follower != null && nowMs - follower.lastProgressMs >= config.progressEveryMs()) {
            sendProgress(nowMs, false);
        }
        if (installing != null && !installing.copied && nowMs - installing.askedMs >= config.installRetryMs()) {
            installing.sourceIndex++;
            askSource(nowMs);
        }
    }

    // ---- seal ----------------------------------------------------------------------------------------------------

    private void raiseFence(long epoch) {
        fence = Math.max(fence, epoch);
        if (owner != null && owner.epoch.value() <= fence) {
            owner.sealed = true; // a sealed owner stops admitting
        }
        if (follower != null && follower.epoch.value() <= fence) {
            follower = null;
        }
    }

    /**
     * Seals, or answers a request for a seal already persisted at once and one for a seal in flight when it is: the
     * controller sends a seal request again while the first is answered (2-3 to one replica in a failover bench
     * trial), and each was another record for the journal to force, on the disk the recovery was waiting for.
     */
    private void onSeal(SealRequested seal) {
        raiseFence(seal.epoch().value());
        if (persistedSeal >= seal.epoch().value()) {
            replySealed(seal.controller(), seal.epoch());
            return;
        }
        sealWaiters.add(new SealWaiter(seal.controller(), seal.epoch()));
        persistSeal();
    }

    /** Where this log ends and how far it is durable, to the controller that asked for the seal of {@code epoch}. */
    private void replySealed(NodeId controller, Epoch epoch) {
        out.add(new ReplySealed(controller, epoch, new SealReply(self, position(), durable)));
    }

    /**
     * A {@link PersistSeal} of the fence, unless one of it is persisted or on its way (every seal persisted went out
     * as a {@link PersistSeal} first, so {@code sealPersisting} is never below {@code persistedSeal}).
     */
    private void persistSeal() {
        if (sealPersisting < fence) {
            sealPersisting = fence;
            out.add(new PersistSeal(Epoch.of(fence)));
        }
    }

    private void onSealPersisted(Epoch epoch) {
        persistedSeal = Math.max(persistedSeal, epoch.value());
        List<SealWaiter> waiting = new ArrayList<>(sealWaiters);
        sealWaiters.clear();
        for (SealWaiter waiter : waiting) {
            if (waiter.epoch().value() <= persistedSeal) {
                replySealed(waiter.controller(), waiter.epoch());
            } else {
                sealWaiters.add(waiter);
            }
        }
        checkInstalled();
    }

    // ---- install -------------------------------------------------------------------------------------------------

    private void onInstall(InstallRequested install, long nowMs) {
        if (installing != null && installing.epoch.isAfter(install.epoch())) {
            return;
        }
        if (history.lastEpoch().compareTo(install.epoch()) >= 0) {
            // a late retry: this log already moved on into the installed epoch; never cut what it wrote since
            if (holds(install.point()) && persistedSeal >= install.epoch().value() - 1) {
                out.add(new ReplyInstalled(install.controller(), install.epoch()));
            }
            return;
        }
        if (follower != null && follower.epoch.compareTo(install.epoch()) >= 0) {
            // A late request: the epoch is activated and this replica follows its owner, which feeds the log (as a
            // learner). A copy from a source beside that stream would cut what the owner streamed and this follower
            // reported durable (the source answers for the log as it was when asked, and the copy cuts past the
            // point). Answer it as a catch-up: once the log durably holds the epoch's start record from its owner.
            if (follower.epoch.equals(install.epoch())) {
                catchingUp = new CatchingUp(install.controller(), install.epoch());
                checkCaughtUp();
            }
            return;
        }
        if (owner != null && !owner.epoch.isAfter(Epoch.of(install.epoch().value() - 1))) {
            owner = null;
        }
        raiseFence(install.epoch().value() - 1);
        persistSeal();
        installing = new Installing(install.controller(), install.epoch(), install.point(), install.sources());
        if (holds(install.point())) {
            finishCopy();
        } else {
            askSource(nowMs);
        }
    }

    private void askSource(long nowMs) {
        List<NodeId> sources = installing.sources;
        installing.askedMs = nowMs;
        for (int tried = 0; tried < sources.size(); tried++) {
            NodeId source = sources.get(Math.floorMod(installing.sourceIndex, sources.size()));
            if (!source.equals(self)) {
                send(source, new Fetch(installing.epoch, history, end, installing.point));
                return;
            }
            installing.sourceIndex++;
        }
    }

    /** The log holds the point: cut what lies beyond it (unconfirmed by construction), fsync, then acknowledge. */
    private void finishCopy() {
        truncateLocal(installing.point.offset() + 1);
        installing.copied = true;
        out.add(new Flush());
        checkInstalled();
    }

    private void checkInstalled() {
        if (installing == null || !installing.copied) {
            return;
        }
        if (durable >= installing.point.offset() && persistedSeal >= installing.epoch.value() - 1) {
            out.add(new ReplyInstalled(installing.controller, installing.epoch));
            installing = null;
        }
    }

    private void onFetch(NodeId from, Fetch fetch) {
        LogPosition upTo = fetch.upTo();
        if (!holds(upTo) || upTo.offset() < 0) {
            return;
        }
        long common =
                Math.min(EpochHistory.commonPrefix(history, end, fetch.history(), fetch.end()), upTo.offset() + 1);
        if (common < start) {
            send(from, new Snapshot(fetch.installEpoch(), start, history));
            return;
        }
        if (common > upTo.offset()) {
            send(from, new FetchReply(fetch.installEpoch(), common, List.of()));
            return;
        }
        serving.put(from, new Serving(fetch.installEpoch(), common));
        out.add(new ReadLog(
                ReadPurpose.INSTALL, from, common, Math.min(upTo.offset(), common + config.fetchRecords() - 1)));
    }

    private void onFetchReply(FetchReply reply, long nowMs) {
        if (installing == null || installing.copied || !reply.installEpoch().equals(installing.epoch)) {
            return;
        }
        // The source computed truncateFrom for the log this replica described when it asked, which may be an older
        // one (a late answer from a source asked before): cut only where a record truly differs from ours. One epoch
        // has one log, so a record of the same epoch at the same offset is the same record; an answer without
        // records cuts nothing (what lies past the point is cut once the copy holds it).
        List<Record> fresh = new ArrayList<>();
        for (Record record : reply.records()) {
            if (fresh.isEmpty() && record.offset() <= end) {
                if (record.offset() < start || history.epochAt(record.offset()).equals(record.epoch())) {
                    continue; // held already (or discarded: settled)
                }
                truncateLocal(record.offset()); // diverges: the source holds the point, its record is the one
            }
            if (record.offset() != end + 1 + fresh.size()) {
                break;
            }
            fresh.add(record);
        }
        if (!fresh.isEmpty()) {
            appendLocal(fresh);
        }
        if (holds(installing.point)) {
            finishCopy();
        } else {
            askSource(nowMs);
        }
    }

    @Override
    public String toString() {
        return "Replica{" + object + "@" + self + " start=" + start + " end=" + end + " durable=" + durable
                + " history=" + history + " fence=" + fence + (owner != null ? " owner of " + owner.epoch : "")
                + (follower != null ? " follower of " + follower.epoch : "") + "}";
    }
}
