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
import io.ganglion.replication.ReplicaEffect.PersistSeal;
import io.ganglion.replication.ReplicaEffect.Refuse;
import io.ganglion.replication.ReplicaEffect.ReplyInstalled;
import io.ganglion.replication.ReplicaEffect.ReplySealed;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 * <p>Structure. The replica holds exactly one {@link Role} at a time, with that role's state: {@link Owning}, {@link
 * Following}, {@link Installing} or {@link Idle}; it dispatches each event to it and keeps what outlives a role: the
 * seal requests and persisted seal, the epochs the metadata assigned, the {@link OwnerLease} wait, the pending {@link
 * CatchUpWait} and the {@link CatchUpServing} of other replicas' installs. Every role reads and changes the shared
 * {@link LogState}, which emits the storage effects. Ending an owner or follower role leaves an install running; an
 * install ends when its epoch is activated here or it is answered.
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

    private final Effects out = new Effects();
    private final LogState log;
    /** The highest epoch an assignment from the metadata named: a stream of an epoch up to it is not adopted. */
    private long assignedEpoch;

    private long persistedSeal;
    /** The highest epoch a {@link PersistSeal} went out for: one in flight covers a request for the same epoch. */
    private long sealPersisting;

    private final List<SealWaiter> sealWaiters = new ArrayList<>();

    private long lowWater;

    private Role role = Idle.INSTANCE;
    private final OwnerLease lease;
    private final CatchUpWait catchUp = new CatchUpWait(out);
    private final CatchUpServing serving;

    private record SealWaiter(NodeId controller, Epoch epoch) {}

    /**
     * Messages the publish-id index remembers (see {@link PublishIndex}): many seconds of traffic at tens of thousands
     * of messages a second, about 13 MiB of heap when full.
     */
    public static final int PUBLISH_INDEX_CAPACITY = 1 << 17;

    private Replica(ObjectId object, NodeId self, Incarnation incarnation, ReplicationConfig config, RecoveredLog log) {
        this.object = Objects.requireNonNull(object, "object");
        this.self = Objects.requireNonNull(self, "self");
        this.incarnation = Objects.requireNonNull(incarnation, "incarnation");
        this.config = Objects.requireNonNull(config, "config");
        this.log = new LogState(log, out, config.publishIndexCapacity());
        this.persistedSeal = this.log.fence();
        this.sealPersisting = this.log.fence();
        this.ownableAbove = log.history().lastEpoch().value();
        this.lease = new OwnerLease(config);
        this.serving = new CatchUpServing(this.log, out, config.fetchRecords());
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
        out.begin();
        switch (event) {
            case Assigned assigned -> onAssigned(assigned, nowMs);
            case Unassigned unassigned -> dropRoles();
            case PublishAdmitted publish -> onPublish(publish, nowMs);
            case SettleAdmitted settle -> {
                if (role instanceof Owning owning) {
                    owning.onSettle(settle.offsets(), nowMs);
                }
            }
            case ReplicaEvent.ReturnAdmitted returned -> {
                if (role instanceof Owning owning) {
                    owning.onReturn(returned.offsets(), nowMs);
                }
            }
            case ReplicaEvent.DeadLetterAdmitted deadLettered -> {
                if (role instanceof Owning owning) {
                    owning.onDeadLetter(deadLettered.offsets(), deadLettered.reason(), nowMs);
                }
            }
            case SettledLowWater lowWaterMark -> lowWater = Math.max(lowWater, lowWaterMark.offset());
            case AppendDurable appended -> onDurable(appended.offset(), nowMs);
            case SealPersisted persisted -> onSealPersisted(persisted.epoch());
            case LogRead read -> onLogRead(read, nowMs);
            case Received received -> onReceived(received.from(), received.message(), nowMs);
            case SealRequested seal -> onSeal(seal);
            case InstallRequested install -> onInstall(install, nowMs);
            case CatchUpRequested request -> onCatchUp(request, nowMs);
            case DropRequested drop -> {
                if (role instanceof Owning owning && owning.epoch().equals(drop.epoch())) {
                    owning.onDropRequested(drop.follower(), drop.controller());
                }
            }
            case Tick tick -> onTick(nowMs);
        }
        return out.take();
    }

    // ---- queries -------------------------------------------------------------------------------------------------

    public ObjectId object() {
        return object;
    }

    /** The epoch this replica owns and admits publishes under, if any. */
    public Optional<Epoch> owning() {
        return role instanceof Owning owning && owning.started() && !owning.sealed()
                ? Optional.of(owning.epoch())
                : Optional.empty();
    }

    /**
     * The epoch this replica takes publishes for: the one it {@link #owning owns}, or the one whose owner role it took
     * and whose epoch start is not durable yet (publishes for it are held until it is, then admitted). Empty when
     * sealed.
     */
    public Optional<Epoch> takingPublishes() {
        return role instanceof Owning owning && !owning.sealed() && !log.fenced(owning.epoch())
                ? Optional.of(owning.epoch())
                : Optional.empty();
    }

    /**
     * Whether the owner of {@code epoch} may hand messages to consumers at {@code nowMs} (its local clock): it owns
     * that epoch ({@link #owning}; a queue built in an earlier epoch never delivers again), a new owner of a later
     * epoch waited {@link ReplicationConfig#newOwnerDeliveryDelayMs} since it took the epoch, and it holds the owner
     * lease ({@link #deliverUntilMs}). Confirms and {@link ReplicaEffect.Deliverable} do not wait for it: a queue takes
     * committed messages but hands none out while this is false. Call it before every delivery; it turns true again as
     * followers answer (after a {@link ReplicaEvent.Received} or {@link ReplicaEvent.Tick}) or the wait ends.
     *
     * <p>Why: an owner cut off from the controller and not sealed itself keeps its epoch in its view, and its queue
     * still holds committed messages the new owner delivers again (marked redelivered). The lease bounds how long it
     * can go on: any W members of E meet any R sealed ones (W + R = |E| + 1), so once recovery holds R seals, either
     * this owner is sealed or one of the W - 1 followers that grant its lease is, and a sealed follower answers no
     * more; the lease lapses at most {@code ownerLeaseMs} after that seal, before the new owner's wait ends.
     */
    public boolean mayDeliver(Epoch epoch, long nowMs) {
        if (!(role instanceof Owning owning)
                || !owning().equals(Optional.of(epoch))
                || log.fenced(epoch)
                || nowMs < owning.deliverFromMs()) {
            return false;
        }
        return nowMs < owning.deliverUntilMs();
    }

    /**
     * The local time until which the owner lease holds on the answers received so far: {@link Long#MAX_VALUE} when W
     * is 1 (recovery then seals every member of E, this owner included, so no lease is needed), {@link
     * Long#MIN_VALUE} when not owning or fewer than W - 1 followers answered. It is the (W - 1)-th highest echoed send
     * time plus {@link ReplicationConfig#ownerLeaseMs}; any follower of the assignment (a member of E) counts.
     */
    public long deliverUntilMs() {
        return role instanceof Owning owning ? owning.deliverUntilMs() : Long.MIN_VALUE;
    }

    /** The epoch this replica is the owner of, sealed or not, if any. */
    public Optional<Epoch> ownedEpoch() {
        return role instanceof Owning owning ? Optional.of(owning.epoch()) : Optional.empty();
    }

    /**
     * Whether this replica awaits an epoch it has not heard of: it neither owns nor follows one, and every epoch the
     * metadata assigned here is sealed here (a recovery sealed it and its next epoch is not known here yet), or none
     * was assigned. Once the metadata shows a later epoch without it, or it takes a role, it no longer awaits.
     */
    public boolean awaitingEpoch() {
        return takingPublishes().isEmpty() && !(role instanceof Following) && assignedEpoch <= log.fence();
    }

    /** The epoch this replica follows, if any. */
    public Optional<Epoch> following() {
        return role instanceof Following following ? Optional.of(following.epoch()) : Optional.empty();
    }

    /** The owner's commit offset, -1 when not owning or nothing committed in this epoch yet. */
    public long commitOffset() {
        return role instanceof Owning owning ? owning.commit() : -1;
    }

    /** False when this replica can never own {@code epoch}: it held records of it before a restart, or sealed it. */
    public boolean mayOwn(Epoch epoch) {
        return epoch.value() > ownableAbove && !log.fenced(epoch);
    }

    /** Followers the owner does not count now: suspended learners and members not installed. Empty when not owning. */
    public List<NodeId> learners() {
        return role instanceof Owning owning ? owning.learners() : List.of();
    }

    /**
     * What the owner counts of each follower: its durable offset within the prefix it shares with the owner (-1 before
     * it reported one). Empty when not owning.
     */
    public SortedMap<NodeId, Long> followerDurable() {
        return role instanceof Owning owning ? owning.followerDurable() : new TreeMap<>();
    }

    public long start() {
        return log.start();
    }

    public long end() {
        return log.end();
    }

    public long durable() {
        return log.durable();
    }

    public EpochHistory history() {
        return log.history();
    }

    /** The highest epoch this replica refuses appends of. */
    public Epoch sealedEpoch() {
        return Epoch.of(log.fence());
    }

    public LogPosition position() {
        return log.position();
    }

    // ---- roles ---------------------------------------------------------------------------------------------------

    private void onAssigned(Assigned assigned, long nowMs) {
        Assignment assignment = assigned.assignment();
        Epoch epoch = assignment.epoch();
        assignedEpoch = Math.max(assignedEpoch, epoch.value());
        if (role instanceof Following following && following.epoch().isAfter(epoch)) {
            // The metadata here is behind the owner this replica follows already (it took that later epoch from the
            // owner's stream): the older epoch was superseded. Taking a role in it would drop the later one, and as
            // its owner this log would write the older epoch's start where the later epoch's owner streams its own.
            return;
        }
        if (assignment.owner().equals(self)) {
            if (role instanceof Owning owning && owning.epoch().equals(epoch)) {
                owning.reassign(assigned, nowMs);
                return;
            }
            dropRoles();
            // Not installed, sealed, or this log already holds records of the epoch (this process owned it before, or
            // it restarted after owning it): starting the epoch again could write a second log of it.
            if (!assigned.installed().contains(self)
                    || !mayOwn(epoch)
                    || log.history().lastEpoch().compareTo(epoch) >= 0) {
                return;
            }
            // An install in progress is of this epoch or an earlier one (it fenced the one before its own, and this
            // epoch is past the fence): activated, whatever the install did not copy, the owner never had.
            long deliverFrom = lease.takeEpoch(epoch, assigned.writeRequirement(), nowMs);
            Owning owning = new Owning(assigned, deliverFrom, log, out, config);
            role = owning;
            owning.open(assigned.installed(), nowMs);
        } else if (assignment.followers().contains(self)) {
            if (role instanceof Following following
                    && following.epoch().equals(epoch)
                    && following.owner().equals(assignment.owner())) {
                return;
            }
            dropRoles();
            if (log.fenced(epoch)) {
                return;
            }
            Following following = follow(epoch, assignment.owner()); // activated without us: caught up as a learner
            following.sendProgress(nowMs, true); // the owner may have streamed to this log before it followed
            catchUp.check(role);
        } else {
            dropRoles();
        }
    }

    /**
     * Follows {@code owner} in the activated {@code epoch}. An install in progress is of that epoch or an earlier one
     * (the epoch is past the fence the install raised): it is over.
     */
    private Following follow(Epoch epoch, NodeId owner) {
        Following following = new Following(epoch, owner, log, out, incarnation);
        role = following;
        return following;
    }

    /**
     * Ends an owner or follower role; an install goes on. Publishes awaiting a confirm lose their owner: their outcome
     * is unknown here, and their sender re-sends them.
     */
    private void dropRoles() {
        if (!(role instanceof Installing)) {
            role = Idle.INSTANCE;
        }
    }

    private void onPublish(PublishAdmitted publish, long nowMs) {
        if (role instanceof Owning owning) {
            owning.onPublish(publish, nowMs);
        } else {
            out.add(new Refuse(publish.id(), "not the owner"));
        }
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
        if (role instanceof Following following) {
            following.onReplicate(from, replicate, nowMs);
        }
    }

    /**
     * Whether to follow the sender of {@code replicate} for its epoch ahead of the metadata: an epoch after every one
     * the metadata assigned here, after the fence, and after the one followed now; not while this replica owns an
     * epoch (the metadata ends that role).
     */
    private boolean adopts(Replicate replicate) {
        long epoch = replicate.epoch().value();
        return !(role instanceof Owning)
                && !log.fenced(replicate.epoch())
                && epoch > assignedEpoch
                && (!(role instanceof Following following) || replicate.epoch().isAfter(following.epoch()));
    }

    private void onCatchUp(CatchUpRequested request, long nowMs) {
        catchUp.await(request.controller(), request.epoch());
        if (role instanceof Following following && following.epoch().equals(request.epoch())) {
            following.sendProgress(nowMs, false);
        }
        catchUp.check(role);
    }

    // ---- storage answers, messages, time -------------------------------------------------------------------------

    private void onDurable(long offset, long nowMs) {
        if (!log.markDurable(offset)) {
            return;
        }
        switch (role) {
            case Owning owning -> owning.onDurable(nowMs);
            case Following following -> {
                following.sendProgress(nowMs, false);
                catchUp.check(role);
            }
            case Installing installing -> checkInstalled(installing);
            case Idle idle -> {}
        }
    }

    private void onLogRead(LogRead read, long nowMs) {
        switch (read.purpose()) {
            case FEED -> {
                if (role instanceof Owning owning) {
                    owning.onFeedRead(read.peer(), read.records(), nowMs);
                }
            }
            case INSTALL -> serving.onRead(read.peer(), read.records());
        }
    }

    private void onReceived(NodeId from, PeerMessage message, long nowMs) {
        switch (message) {
            case Replicate replicate -> onReplicate(from, replicate, nowMs);
            case Progress progress -> {
                if (role instanceof Owning owning) {
                    owning.onProgress(from, progress, nowMs);
                }
            }
            case Fetch fetch -> serving.onFetch(from, fetch);
            case FetchReply reply -> {
                if (role instanceof Installing installing && installing.onFetchReply(reply, persistedSeal, nowMs)) {
                    role = Idle.INSTANCE;
                }
            }
            case Snapshot snapshot -> {
                switch (role) {
                    case Installing installing -> installing.onSnapshot(snapshot, nowMs);
                    case Following following -> following.onSnapshot(from, snapshot, nowMs);
                    case Owning owning -> {}
                    case Idle idle -> {}
                }
            }
        }
    }

    private void onTick(long nowMs) {
        switch (role) {
            case Owning owning -> owning.onTick(lowWater, nowMs);
            case Following following -> following.onTick(nowMs, config.progressEveryMs());
            case Installing installing -> installing.onTick(nowMs, config.installRetryMs());
            case Idle idle -> {}
        }
    }

    // ---- seal ----------------------------------------------------------------------------------------------------

    /** Raises the fence: an owner of a fenced epoch is sealed (it stops admitting), a follower of one stops. */
    private void raiseFence(long epoch) {
        log.raiseFence(epoch);
        if (role instanceof Owning owning && log.fenced(owning.epoch())) {
            owning.seal();
        }
        if (role instanceof Following following && log.fenced(following.epoch())) {
            role = Idle.INSTANCE;
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
        out.add(new ReplySealed(controller, epoch, new SealReply(self, log.position(), log.durable())));
    }

    /**
     * A {@link PersistSeal} of the fence, unless one of it is persisted or on its way (every seal persisted went out
     * as a {@link PersistSeal} first, so {@code sealPersisting} is never below {@code persistedSeal}).
     */
    private void persistSeal() {
        if (sealPersisting < log.fence()) {
            sealPersisting = log.fence();
            out.add(new PersistSeal(Epoch.of(log.fence())));
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
        if (role instanceof Installing installing) {
            checkInstalled(installing);
        }
    }

    // ---- install -------------------------------------------------------------------------------------------------

    private void onInstall(InstallRequested install, long nowMs) {
        if (role instanceof Installing installing && installing.epoch().isAfter(install.epoch())) {
            return;
        }
        if (log.history().lastEpoch().compareTo(install.epoch()) >= 0) {
            // a late retry: this log already moved on into the installed epoch; never cut what it wrote since
            if (log.holds(install.point()) && persistedSeal >= install.epoch().value() - 1) {
                out.add(new ReplyInstalled(install.controller(), install.epoch()));
            }
            return;
        }
        if (role instanceof Following following && following.epoch().compareTo(install.epoch()) >= 0) {
            // A late request: the epoch is activated and this replica follows its owner, which feeds the log (as a
            // learner). A copy from a source beside that stream would cut what the owner streamed and this follower
            // reported durable (the source answers for the log as it was when asked, and the copy cuts past the
            // point). Answer it as a catch-up: once the log durably holds the epoch's start record from its owner.
            if (following.epoch().equals(install.epoch())) {
                catchUp.await(install.controller(), install.epoch());
                catchUp.check(role);
            }
            return;
        }
        // An owner here is of an earlier epoch (its log would show this one otherwise), a follower too: both end, as
        // the fence below the installed epoch rises past them.
        raiseFence(install.epoch().value() - 1);
        persistSeal();
        Installing installing = new Installing(
                install.controller(), install.epoch(), install.point(), install.sources(), log, out, self);
        role = installing;
        if (installing.begin(persistedSeal, nowMs)) {
            role = Idle.INSTANCE;
        }
    }

    private void checkInstalled(Installing installing) {
        if (installing.checkInstalled(persistedSeal)) {
            role = Idle.INSTANCE;
        }
    }

    @Override
    public String toString() {
        return "Replica{" + object + "@" + self + " start=" + log.start() + " end=" + log.end() + " durable="
                + log.durable() + " history=" + log.history() + " fence=" + log.fence()
                + (role instanceof Owning owning ? " owner of " + owning.epoch() : "")
                + (role instanceof Following following ? " follower of " + following.epoch() : "") + "}";
    }
}
