package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.PeerMessage.Progress;
import io.ganglion.replication.PeerMessage.Replicate;
import io.ganglion.replication.PeerMessage.Snapshot;
import io.ganglion.replication.ReplicaEffect.Confirm;
import io.ganglion.replication.ReplicaEffect.Deliverable;
import io.ganglion.replication.ReplicaEffect.ReadLog;
import io.ganglion.replication.ReplicaEffect.ReadPurpose;
import io.ganglion.replication.ReplicaEffect.Refuse;
import io.ganglion.replication.ReplicaEffect.ReplyDropped;
import io.ganglion.replication.ReplicaEvent.Assigned;
import io.ganglion.replication.ReplicaEvent.PublishAdmitted;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The owner role of one epoch: admits publishes and settles into the log, streams them to the followers (live, or fed
 * from the log within a window), counts their durable reports for the commit rule, confirms, renews the lease and
 * answers the controllers waiting for a leaving follower. Sealed (the fence reached its epoch), it admits nothing more
 * and goes on counting what it streamed.
 */
final class Owning implements Role {
    /** Publishes an owner holds before its epoch start is durable, at most; more are refused. */
    static final int EARLY_PUBLISHES_MAX = 10_000;

    private static final String NOT_STARTED = "epoch start not durable yet";

    private final LogState log;
    private final Effects out;
    private final ReplicationConfig config;

    private final Epoch epoch;
    private final int writeRequirement;
    private final TreeMap<NodeId, Peer> peers = new TreeMap<>();
    private final AwaitingConfirms awaiting = new AwaitingConfirms();
    private final long epochStart;
    /** Before this local time the owner delivers nothing: a deposed owner's lease may not have lapsed. */
    private final long deliverFromMs;

    private Set<NodeId> installed;
    /** Followers leaving the epoch: never counted again. */
    private Set<NodeId> leaving;
    /**
     * Per leaving follower, the offset W members of E' must be durable at before it may leave E: the commit when this
     * owner stopped counting it (and at least the epoch start, which the recovered records lie below).
     */
    private final TreeMap<NodeId, Long> leaveAt = new TreeMap<>();
    /** The controllers waiting to hear that a leaving follower may leave E. */
    private final TreeMap<NodeId, NodeId> dropWaiters = new TreeMap<>();
    /** The commit rule's latest value over the counted members: below {@link #commit} once a follower leaves. */
    private long counting = -1;

    private long retentionProtectMs;
    /**
     * Publishes that came before the epoch start was durable, admitted in order once it is. Refused instead, they came
     * straight back: a broker that forwards publishes re-sends a refused one within milliseconds, so a few hundred
     * waiting publishes made thousands of refusals on the new owner's shard, ahead of the durability report that
     * starts it (its start took 50-170 ms in the failover bench instead of one force).
     */
    private final ArrayDeque<PublishAdmitted> early = new ArrayDeque<>();

    /** The epoch start is durable here: the owner admits publishes and streams. */
    private boolean started;
    /** The fence reached this epoch: the owner admits nothing more. */
    private boolean sealed;

    private long commit = -1;

    Owning(Assigned assigned, long deliverFromMs, LogState log, Effects out, ReplicationConfig config) {
        this.log = log;
        this.out = out;
        this.config = config;
        this.epoch = assigned.assignment().epoch();
        this.writeRequirement = assigned.writeRequirement();
        this.installed = assigned.installed();
        this.leaving = assigned.leaving();
        this.retentionProtectMs = assigned.retentionProtectMs();
        this.epochStart = log.end() + 1;
        for (NodeId node : leaving) {
            leaveAt.put(node, epochStart);
        }
        this.deliverFromMs = deliverFromMs;
        for (NodeId node : assigned.assignment().followers()) {
            peers.put(node, new Peer(node));
        }
    }

    /**
     * Writes and streams the epoch start. An installed follower's log ends at the recovery point, as this one does (the
     * install cut and copied it there, or its seal showed it ends there): it is fed from the epoch start on without
     * first asking where it stands, and takes the epoch start while this log forces it. A follower whose log is not
     * there after all refuses the record and reports where it is (resync), as one that took its role from the metadata
     * does: it may have missed what was streamed before.
     */
    void open(Set<NodeId> installedNow, long nowMs) {
        for (Peer peer : peers.values()) {
            if (installedNow.contains(peer.node)) {
                peer.synced = true;
                peer.next = epochStart;
            }
        }
        Record start = new Record.EpochStart(epoch, epochStart);
        log.append(List.of(start));
        stream(start, nowMs);
        // Ask each follower where it stands. One that took the epoch before this role existed sent its first report
        // already, and it was dropped: without this the owner learned of it only from its next periodic report or the
        // first lease renewal, 100 ms on, and confirmed nothing meanwhile (the failover bench).
        for (Peer peer : peers.values()) {
            stamp(peer, nowMs);
        }
    }

    /** A new view of the same epoch: installed and leaving followers, retention, followers dropped or added. */
    void reassign(Assigned assigned, long nowMs) {
        installed = assigned.installed();
        leave(assigned.leaving());
        retentionProtectMs = assigned.retentionProtectMs();
        // a follower that left E (HistoryRecord.FollowerDropped): nothing more to it
        peers.keySet().retainAll(assigned.assignment().followers());
        // a follower that joined the epoch (HistoryRecord.FollowerAdded): fed as a learner from where its log meets
        // ours, counted once installed
        for (NodeId node : assigned.assignment().followers()) {
            if (!peers.containsKey(node)) {
                Peer peer = new Peer(node);
                peers.put(node, peer);
                stamp(peer, nowMs);
            }
        }
        advanceCommit();
    }

    private boolean counted(Peer peer) {
        return peer.synced
                && !peer.suspended
                && peer.matched >= 0
                && installed.contains(peer.node)
                && !leaving.contains(peer.node);
    }

    /**
     * Takes the leaving followers of the view: each newly leaving one stops counting now, and must not leave E before W
     * members of E' are durable at or past what was committed with it.
     */
    private void leave(Set<NodeId> nowLeaving) {
        for (NodeId node : nowLeaving) {
            if (!leaving.contains(node)) {
                leaveAt.put(node, Math.max(commit, epochStart));
            }
        }
        leaving = nowLeaving;
    }

    // ---- queries -------------------------------------------------------------------------------------------------

    Epoch epoch() {
        return epoch;
    }

    boolean started() {
        return started;
    }

    boolean sealed() {
        return sealed;
    }

    /** The commit offset, -1 before anything committed in this epoch. */
    long commit() {
        return commit;
    }

    /** Before this local time the owner delivers nothing. */
    long deliverFromMs() {
        return deliverFromMs;
    }

    /** The fence reached this epoch: admit nothing more, and stop renewing the lease. */
    void seal() {
        sealed = true;
    }

    /** See {@link Replica#deliverUntilMs}. */
    long deliverUntilMs() {
        return OwnerLease.until(peers.values(), writeRequirement, config.ownerLeaseMs());
    }

    List<NodeId> learners() {
        List<NodeId> learners = new ArrayList<>();
        for (Peer peer : peers.values()) {
            if (peer.suspended || !installed.contains(peer.node)) {
                learners.add(peer.node);
            }
        }
        return learners;
    }

    SortedMap<NodeId, Long> followerDurable() {
        TreeMap<NodeId, Long> durable = new TreeMap<>();
        peers.values().forEach(peer -> durable.put(peer.node, peer.matched));
        return durable;
    }

    // ---- admission -----------------------------------------------------------------------------------------------

    private Optional<String> admissionRefusal(Epoch admitted) {
        if (!epoch.equals(admitted)) {
            return Optional.of("admitted under epoch " + admitted + ", owner of " + epoch);
        }
        if (sealed || log.fenced(admitted)) {
            return Optional.of("sealed");
        }
        if (!started) {
            return Optional.of(NOT_STARTED);
        }
        return Optional.empty();
    }

    void onPublish(PublishAdmitted publish, long nowMs) {
        Optional<String> refusal = admissionRefusal(publish.epoch());
        if (refusal.isPresent() && refusal.get().equals(NOT_STARTED) && early.size() < EARLY_PUBLISHES_MAX) {
            early.addLast(publish);
            return;
        }
        if (refusal.isPresent()) {
            out.add(new Refuse(publish.id(), refusal.get()));
            return;
        }
        Long existing = log.published().get(publish.id());
        if (existing != null) {
            if (existing <= commit) {
                out.add(new Confirm(publish.id(), existing));
            } else {
                awaiting.put(existing, publish.id());
            }
            return;
        }
        Record record = new Record.Message(epoch, log.end() + 1, publish.id(), publish.body(), nowMs);
        log.append(List.of(record));
        awaiting.put(record.offset(), publish.id());
        stream(record, nowMs);
    }

    void onSettle(long[] settled, long nowMs) {
        appendUnconfirmed(new Record.Settle(epoch, log.end() + 1, settled), nowMs);
    }

    void onReturn(long[] returned, long nowMs) {
        appendUnconfirmed(new Record.Returned(epoch, log.end() + 1, returned), nowMs);
    }

    void onDeadLetter(long[] offsets, int reason, long nowMs) {
        appendUnconfirmed(new Record.DeadLettered(epoch, log.end() + 1, offsets, reason), nowMs);
    }

    /** Appends and streams a record that no one waits a confirm for (a settle, a return, a dead-letter decision). */
    private void appendUnconfirmed(Record record, long nowMs) {
        if (sealed || !started || log.fenced(epoch)) {
            return;
        }
        log.append(List.of(record));
        stream(record, nowMs);
    }

    // ---- streaming -----------------------------------------------------------------------------------------------

    /** Sends a record just appended to every follower that is live (fed up to it) and within its window. */
    private void stream(Record record, long nowMs) {
        for (Peer peer : peers.values()) {
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
        out.send(peer.node, new Replicate(epoch, peer.truncateFrom, records, nowMs, log.start()));
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
        if (!started || !peer.synced || peer.reading || peer.cutUnconfirmed) {
            return;
        }
        if (peer.next < log.start()) {
            out.send(peer.node, new Snapshot(epoch, log.start(), log.history()));
            peer.next = log.start();
            peer.truncateFrom = -1;
            peer.lastSentMs = nowMs;
            peer.cutUnconfirmed = true;
            return;
        }
        if (peer.next > log.end()) {
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
        out.add(new ReadLog(ReadPurpose.FEED, peer.node, peer.next, Math.min(log.end(), peer.next + room - 1)));
    }

    /** The log read {@link #feed} asked for came back: send what still fits the follower's window. */
    void onFeedRead(NodeId node, List<Record> read, long nowMs) {
        Peer peer = peers.get(node);
        if (peer == null || !peer.reading) {
            return;
        }
        peer.reading = false;
        List<Record> records = new ArrayList<>();
        long expected = peer.next;
        long bytes = peer.inflightBytes;
        for (Record record : read) {
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

    void onProgress(NodeId from, Progress progress, long nowMs) {
        if (!progress.epoch().equals(epoch)) {
            return;
        }
        Peer peer = peers.get(from);
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
        long common = EpochHistory.commonPrefix(log.history(), log.end(), progress.history(), progress.end());
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
        if (peer.suspended && peer.truncateFrom < 0 && log.end() - peer.matched <= config.learnerLag()) {
            peer.suspended = false; // caught up: promoted back into its slot
        }
        advanceCommit();
        feed(peer, nowMs);
    }

    // ---- commit --------------------------------------------------------------------------------------------------

    /** This log is durable further: once the epoch start is, the owner starts; then the commit may move. */
    void onDurable(long nowMs) {
        if (!started && log.durable() >= epochStart) {
            started = true;
            for (Peer peer : peers.values()) {
                feed(peer, nowMs);
            }
            List<PublishAdmitted> held = new ArrayList<>(early);
            early.clear();
            for (PublishAdmitted publish : held) {
                onPublish(publish, nowMs);
            }
        }
        advanceCommit();
    }

    /** The commit rule: the W-th highest durable offset over E, the owner counted; silent members are absent. */
    private void advanceCommit() {
        if (!started) {
            return;
        }
        long[] reports = new long[peers.size() + 1];
        int n = 0;
        reports[n++] = log.durable();
        for (Peer peer : peers.values()) {
            if (counted(peer)) {
                reports[n++] = peer.matched;
            }
        }
        long committed = CommitRule.commitOffset(Arrays.copyOf(reports, n), writeRequirement);
        counting = committed;
        answerDrops();
        if (committed < epochStart || committed <= commit) {
            return;
        }
        commit = committed;
        awaiting.confirmUpTo(committed, out);
        out.add(new Deliverable(epoch, committed));
    }

    void onDropRequested(NodeId follower, NodeId controller) {
        dropWaiters.put(follower, controller);
        answerDrops();
    }

    /**
     * Answers each controller waiting for a leaving follower once W members of E' (the counted ones) are durable at or
     * past where that follower stopped counting: every record this owner confirmed, and every record recovered below
     * its epoch start, is then on W members without it. A follower this owner has no peer for is answered at once: the
     * view dropped it already, or never showed it to this owner, which then never counted it.
     */
    private void answerDrops() {
        if (dropWaiters.isEmpty()) {
            return; // the common case, on every durability report
        }
        var waiters = dropWaiters.entrySet().iterator();
        while (waiters.hasNext()) {
            Map.Entry<NodeId, NodeId> waiter = waiters.next();
            NodeId follower = waiter.getKey();
            Long leaveAtOffset = leaveAt.get(follower);
            boolean neverCounted = !peers.containsKey(follower);
            if (neverCounted || (leaving.contains(follower) && leaveAtOffset != null && counting >= leaveAtOffset)) {
                out.add(new ReplyDropped(waiter.getValue(), epoch, follower));
                waiters.remove();
            }
        }
    }

    // ---- time ----------------------------------------------------------------------------------------------------

    /** Feeds followers behind, renews the lease and discards what every recently heard follower holds. */
    void onTick(long lowWater, long nowMs) {
        for (Peer peer : peers.values()) {
            feed(peer, nowMs);
        }
        if (!started) {
            return;
        }
        renewLease(nowMs);
        long below = Math.min(lowWater, commit + 1);
        for (Peer peer : peers.values()) {
            if (peer.lastHeardMs != Long.MIN_VALUE && nowMs - peer.lastHeardMs <= retentionProtectMs) {
                below = Math.min(below, peer.matched + 1);
            }
        }
        if (below > log.start()) {
            log.discard(below);
        }
    }

    /** Stamps each follower due a renewal (see {@link OwnerLease#renewalDue}): its answer renews the lease. */
    private void renewLease(long nowMs) {
        if (sealed || writeRequirement < 2) {
            return;
        }
        long renewMs = config.leaseRenewMs();
        for (Peer peer : peers.values()) {
            if (OwnerLease.renewalDue(peer, nowMs, renewMs)) {
                stamp(peer, nowMs);
            }
        }
    }

    /** An empty Replicate stamped {@code nowMs}: the follower answers where it stands and echoes the stamp. */
    private void stamp(Peer peer, long nowMs) {
        out.send(peer.node, new Replicate(epoch, -1, List.of(), nowMs, log.start()));
        peer.lastStampMs = nowMs;
    }
}
