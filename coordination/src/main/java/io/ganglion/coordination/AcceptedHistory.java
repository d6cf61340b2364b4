package io.ganglion.coordination;

import io.ganglion.coordination.HistoryOutcome.Accepted;
import io.ganglion.coordination.HistoryOutcome.Rejected;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.Created;
import io.ganglion.coordination.HistoryRecord.FollowerAdded;
import io.ganglion.coordination.HistoryRecord.FollowerDropped;
import io.ganglion.coordination.HistoryRecord.FollowerLeaving;
import io.ganglion.coordination.HistoryRecord.MemberInstalled;
import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import io.ganglion.coordination.HistoryRecord.RecoveryPointChosen;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The per-object sequence of assignment records in the metadata log, with the state they add up to.
 *
 * <p>Implementation notes. Immutable. {@link #append} is the only way to grow a history, and it refuses any record that
 * would break a recovery invariant, so a history built by appends is valid by construction whatever order the
 * controller proposed its commands in: a stale command (an old controller's, or one overtaken by another) is rejected
 * rather than applied. In particular activation is refused with fewer than R seals of the committed epoch, without a
 * recovery point, or with fewer than W installed proposed members including the owner.
 *
 * <p>{@link #validate} projects the active assignment only when the history ends in an activated assignment with no
 * pending recovery; brokers build their view from validated histories only.
 */
public final class AcceptedHistory {
    private final ObjectSpec spec;
    private final List<HistoryRecord> records;
    private final Assignment committed;
    private final Set<NodeId> installedInCommitted;
    private final Set<NodeId> leavingInCommitted;
    private final PendingRecovery pending;

    private AcceptedHistory(
            ObjectSpec spec,
            List<HistoryRecord> records,
            Assignment committed,
            Set<NodeId> installedInCommitted,
            Set<NodeId> leavingInCommitted,
            PendingRecovery pending) {
        this.spec = spec;
        this.records = records;
        this.committed = committed;
        this.installedInCommitted = installedInCommitted;
        this.leavingInCommitted = leavingInCommitted;
        this.pending = pending;
    }

    /** A history holding only {@link Created}. */
    public static AcceptedHistory created(ObjectSpec spec) {
        Objects.requireNonNull(spec, "spec");
        return new AcceptedHistory(spec, List.of(new Created(spec)), null, Set.of(), Set.of(), null);
    }

    public ObjectSpec spec() {
        return spec;
    }

    public ObjectId id() {
        return spec.id();
    }

    public List<HistoryRecord> records() {
        return records;
    }

    /** The last activated assignment, if the object was ever activated. It stays beside a pending recovery. */
    public Optional<Assignment> committed() {
        return Optional.ofNullable(committed);
    }

    public Optional<PendingRecovery> pending() {
        return Optional.ofNullable(pending);
    }

    /** The epoch of the committed assignment, {@link Epoch#NONE} before the first activation. */
    public Epoch committedEpoch() {
        return committed == null ? Epoch.NONE : committed.epoch();
    }

    /** E of the committed epoch: empty before the first activation. */
    public EligibleSet eligibleSet() {
        return committed == null ? EligibleSet.empty() : committed.eligibleSet();
    }

    /** R for the recovery from the committed epoch. */
    public int recoveryThreshold() {
        return eligibleSet().recoveryThreshold(spec.writeRequirement());
    }

    /** Members of the committed epoch that have their replica installed. */
    public Set<NodeId> installedInCommitted() {
        return installedInCommitted;
    }

    /**
     * Followers of the committed epoch that are leaving it ({@link FollowerLeaving}): still in E, no longer counted for
     * W by the owner.
     */
    public Set<NodeId> leavingInCommitted() {
        return leavingInCommitted;
    }

    /** Activated, and every member installed in the current epoch. */
    public boolean enrolled() {
        return committed != null && pending == null && installedInCommitted.containsAll(committed.members());
    }

    /** The projected active assignment: present only for an activated assignment with no pending recovery. */
    public Optional<Assignment> validate() {
        return pending == null ? Optional.ofNullable(committed) : Optional.empty();
    }

    /**
     * Appends {@code record} if it fits the history: the new history, or the reason it does not fit. Appending a record
     * that is already reflected (a second seal from the same node, an install already known) is accepted and changes
     * nothing, so replies retried by brokers are harmless.
     */
    /**
     * Whether {@code record} is reflected already: appending it would be accepted and change nothing (a reply a broker
     * sent again, or one already proposed). A controller need not propose it.
     */
    public boolean reflects(HistoryRecord record) {
        return append(record) instanceof HistoryOutcome.Accepted accepted && accepted.history() == this;
    }

    public HistoryOutcome append(HistoryRecord record) {
        return switch (record) {
            case Created created -> reject("object " + id() + " already exists");
            case RecoveryPending proposal -> appendPending(proposal);
            case SealReceived seal -> appendSeal(seal);
            case RecoveryPointChosen chosen -> appendPoint(chosen);
            case MemberInstalled installed -> appendInstalled(installed);
            case FollowerAdded added -> appendFollower(added);
            case FollowerLeaving leaving -> appendLeaving(leaving);
            case FollowerDropped dropped -> appendDropped(dropped);
            case Activated activated -> appendActivated(activated);
        };
    }

    private HistoryOutcome appendPending(RecoveryPending proposal) {
        Epoch expected = committedEpoch().next();
        if (!proposal.proposedEpoch().equals(expected)) {
            return reject("proposed epoch " + proposal.proposedEpoch() + " is not committed epoch + 1 = " + expected);
        }
        Assignment proposed;
        try {
            proposed = proposal.proposed();
        } catch (IllegalArgumentException e) {
            return reject(e.getMessage());
        }
        if (proposed.members().size() > spec.copies()) {
            return reject("proposal has " + proposed.members().size() + " members, object wants " + spec.copies());
        }
        PendingRecovery next = pending == null ? PendingRecovery.start(proposed) : pending.withProposal(proposed);
        return accept(record(proposal), committed, installedInCommitted, next);
    }

    private HistoryOutcome appendSeal(SealReceived seal) {
        if (pending == null) {
            return reject("no recovery pending");
        }
        if (committed == null || !seal.sealedEpoch().equals(committed.epoch())) {
            return reject("seal of epoch " + seal.sealedEpoch() + " but the committed epoch is " + committedEpoch());
        }
        NodeId node = seal.reply().node();
        if (!committed.hasMember(node)) {
            return reject("seal from " + node + " which is not in E of epoch " + committedEpoch());
        }
        if (pending.seals().containsKey(node)) {
            return new Accepted(this);
        }
        return accept(record(seal), committed, installedInCommitted, pending.withSeal(seal.reply()));
    }

    private HistoryOutcome appendPoint(RecoveryPointChosen chosen) {
        if (pending == null || !pending.proposed().epoch().equals(chosen.proposedEpoch())) {
            return reject("no recovery pending for epoch " + chosen.proposedEpoch());
        }
        if (pending.point().isPresent()) {
            return pending.recoveryPoint().equals(chosen.point())
                    ? new Accepted(this)
                    : reject("recovery point already chosen: " + pending.recoveryPoint());
        }
        int r = recoveryThreshold();
        if (pending.seals().size() < r) {
            return reject("only " + pending.seals().size() + " seals, recovery needs R = " + r);
        }
        if (!chosen.point().equals(pending.highestSealedEnd())) {
            return reject("recovery point " + chosen.point() + " is not the highest sealed end "
                    + pending.highestSealedEnd());
        }
        return accept(record(chosen), committed, installedInCommitted, pending.withPoint(chosen.point()));
    }

    private HistoryOutcome appendInstalled(MemberInstalled installed) {
        NodeId node = installed.node();
        if (pending != null && pending.proposed().epoch().equals(installed.epoch())) {
            if (pending.point().isEmpty()) {
                return reject("install before the recovery point was chosen");
            }
            if (!pending.proposed().hasMember(node)) {
                return reject(node + " is not a proposed member of epoch " + installed.epoch());
            }
            if (pending.installed().contains(node)) {
                return new Accepted(this);
            }
            return accept(record(installed), committed, installedInCommitted, pending.withInstalled(node));
        }
        if (committed != null && committed.epoch().equals(installed.epoch()) && committed.hasMember(node)) {
            if (installedInCommitted.contains(node)) {
                return new Accepted(this);
            }
            Set<NodeId> next = new TreeSet<>(installedInCommitted);
            next.add(node);
            return accept(record(installed), committed, Collections.unmodifiableSet(next), pending);
        }
        return reject("install of " + node + " for epoch " + installed.epoch() + " matches no assignment");
    }

    private HistoryOutcome appendFollower(FollowerAdded added) {
        if (committed == null || pending != null) {
            return reject("a follower joins only an activated epoch with no recovery pending");
        }
        if (!committed.epoch().equals(added.epoch())) {
            return reject(
                    "follower added to epoch " + added.epoch() + " but the committed epoch is " + committedEpoch());
        }
        if (committed.hasMember(added.node())) {
            return committed.followers().contains(added.node())
                    ? new Accepted(this)
                    : reject(added.node() + " owns epoch " + committedEpoch());
        }
        if (committed.members().size() >= spec.copies()) {
            return reject("epoch " + committedEpoch() + " has "
                    + committed.members().size() + " members, object wants " + spec.copies());
        }
        List<NodeId> followers = new ArrayList<>(committed.followers());
        followers.add(added.node());
        Assignment next = new Assignment(committed.epoch(), committed.owner(), followers, true);
        return accept(record(added), next, installedInCommitted, null);
    }

    private HistoryOutcome appendLeaving(FollowerLeaving leaving) {
        Optional<String> refusal = inActivatedEpoch(leaving.epoch(), leaving.node(), "FollowerLeaving");
        if (refusal.isPresent()) {
            return reject(refusal.get());
        }
        if (leavingInCommitted.contains(leaving.node())) {
            return new Accepted(this);
        }
        int w = spec.writeRequirement();
        int staying = committed.members().size() - leavingInCommitted.size() - 1;
        if (staying < w) {
            return reject("without " + leaving.node() + " epoch " + committedEpoch() + " keeps " + staying
                    + " members, W = " + w);
        }
        Set<NodeId> next = new TreeSet<>(leavingInCommitted);
        next.add(leaving.node());
        return accept(record(leaving), committed, installedInCommitted, Collections.unmodifiableSet(next), null);
    }

    private HistoryOutcome appendDropped(FollowerDropped dropped) {
        if (committed != null
                && pending == null
                && committed.epoch().equals(dropped.epoch())
                && !committed.hasMember(dropped.node())) {
            return new Accepted(this); // dropped already: a reply sent again
        }
        Optional<String> refusal = inActivatedEpoch(dropped.epoch(), dropped.node(), "FollowerDropped");
        if (refusal.isPresent()) {
            return reject(refusal.get());
        }
        if (!leavingInCommitted.contains(dropped.node())) {
            return reject(dropped.node() + " is not leaving epoch " + committedEpoch());
        }
        List<NodeId> followers = new ArrayList<>(committed.followers());
        followers.remove(dropped.node());
        Set<NodeId> installed = new TreeSet<>(installedInCommitted);
        installed.remove(dropped.node());
        Set<NodeId> leaving = new TreeSet<>(leavingInCommitted);
        leaving.remove(dropped.node());
        return accept(
                record(dropped),
                new Assignment(committed.epoch(), committed.owner(), followers, true),
                Collections.unmodifiableSet(installed),
                Collections.unmodifiableSet(leaving),
                null);
    }

    /** Why {@code record} of {@code node} does not fit now: it needs a follower of the activated epoch, nothing pending. */
    private Optional<String> inActivatedEpoch(Epoch epoch, NodeId node, String record) {
        if (committed == null || pending != null) {
            return Optional.of(record + " needs an activated epoch with no recovery pending");
        }
        if (!committed.epoch().equals(epoch)) {
            return Optional.of(record + " of epoch " + epoch + " but the committed epoch is " + committedEpoch());
        }
        if (!committed.followers().contains(node)) {
            return Optional.of(node + " is not a follower of epoch " + committedEpoch());
        }
        return Optional.empty();
    }

    private HistoryOutcome appendActivated(Activated activated) {
        Optional<String> refusal = activationRefusal(activated.epoch());
        if (refusal.isPresent()) {
            return reject(refusal.get());
        }
        Assignment next = pending.proposed().activate();
        return accept(record(activated), next, pending.installed(), Set.of(), null);
    }

    /** Why activating {@code epoch} now would be unsafe, or empty when it is allowed. */
    public Optional<String> activationRefusal(Epoch epoch) {
        if (pending == null || !pending.proposed().epoch().equals(epoch)) {
            return Optional.of("no recovery pending for epoch " + epoch);
        }
        int r = recoveryThreshold();
        if (pending.seals().size() < r) {
            return Optional.of("only " + pending.seals().size() + " seals, activation needs R = " + r);
        }
        if (pending.point().isEmpty()) {
            return Optional.of("no recovery point chosen");
        }
        if (!pending.installed().contains(pending.proposed().owner())) {
            return Optional.of("proposed owner " + pending.proposed().owner() + " is not installed");
        }
        int w = spec.writeRequirement();
        if (pending.installedMembers() < w) {
            return Optional.of("only " + pending.installedMembers() + " members installed, activation needs W = " + w);
        }
        return Optional.empty();
    }

    private List<HistoryRecord> record(HistoryRecord record) {
        List<HistoryRecord> next = new ArrayList<>(records.size() + 1);
        next.addAll(records);
        next.add(record);
        return Collections.unmodifiableList(next);
    }

    private HistoryOutcome accept(
            List<HistoryRecord> nextRecords,
            Assignment nextCommitted,
            Set<NodeId> nextInstalled,
            PendingRecovery next) {
        return accept(nextRecords, nextCommitted, nextInstalled, leavingInCommitted, next);
    }

    private HistoryOutcome accept(
            List<HistoryRecord> nextRecords,
            Assignment nextCommitted,
            Set<NodeId> nextInstalled,
            Set<NodeId> nextLeaving,
            PendingRecovery next) {
        return new Accepted(new AcceptedHistory(spec, nextRecords, nextCommitted, nextInstalled, nextLeaving, next));
    }

    private static HistoryOutcome reject(String reason) {
        return new Rejected(reason);
    }

    @Override
    public String toString() {
        return "AcceptedHistory{" + id() + ", committed=" + committed + ", pending=" + pending + "}";
    }
}
