package io.ganglion.serving;

import io.ganglion.coordination.Epoch;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import io.ganglion.replication.Record;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;

/**
 * The owner side of one queue on one broker: the {@link QueueMachine} over the committed part of the queue's
 * replicated log, while the broker's replica owns an epoch.
 *
 * <ul>
 *   <li><b>Rebuild.</b> At the first commit report of an owned epoch ({@link #deliverable}) the queue is rebuilt from
 *       the log: every message from the logical start that no settle record settles, all marked redelivered (an
 *       earlier owner may have delivered them), each with the returns its returned records count (its delivery
 *       count), with deliveries held until the lease allows them. A message a dead-lettered record names and no settle
 *       record settles is not in the queue: it waits for its dead-letter targets ({@link #pendingDeadLetters}). The runtime then
 *       subscribes its consumers again ({@link Host#rebuilt}).
 *   <li><b>Committed only.</b> Later commit reports enqueue the messages up to the commit, so nothing is delivered
 *       before it is durable on W copies.
 *   <li><b>Lease gate.</b> {@link #gated} holds or resumes deliveries by the owner lease ({@link Host#mayDeliver}) and
 *       is called before every operation that can deliver and on every {@link #tick}: a deposed owner stops handing out
 *       messages before a new owner starts. It also moves the machine's time on, so ready messages whose TTL passed
 *       expire ({@link Host#expiresAtMs}, from each message's admission time: a new owner keeps the same times).
 *   <li><b>Settled low water.</b> Every {@value #LOW_WATER_EVERY_MS} ms the lowest unsettled offset becomes a
 *       candidate; once the log is committed past every settle record written until then, the replica hears of it
 *       ({@link Host#settledLowWater}) and may discard the log below it. A settled record stays for the resend window
 *       after its commit: a publish re-sent within it finds its id in the log (and is not appended twice) even on a
 *       copy that restarted or was reseeded since, whose index of ids is rebuilt from the records it holds.
 * </ul>
 *
 * <p>Pure and single-threaded: the caller passes the time and runs every method on the queue's one thread.
 */
public final class QueueOwner {
    /** How often the lowest unsettled offset is looked for while the queue is served. */
    public static final long LOW_WATER_EVERY_MS = 500;

    /** How often at most the commit's time is noted, for the resend window. */
    static final long COMMIT_MARK_EVERY_MS = 100;

    /** Deliberate rule breaks the simulator injects to show that its checkers catch them; the broker passes none. */
    public enum Fault {
        /** The gate lifts a hold but never holds again: an owner whose lease ran out goes on delivering. */
        DELIVER_ON_EXPIRED_LEASE,
        /** The low water ignores the resend window: a settled record may go before a re-send of it arrives. */
        DISCARD_INSIDE_RESEND_WINDOW,
        /** The rebuild takes the messages without their expiry times: what a new owner inherits never expires. */
        REBUILD_WITHOUT_EXPIRY
    }

    /** The replica and log the queue is served from, as read at each call, and where its reports go. */
    public interface Host {
        /** The epoch the replica owns now, if any. */
        Optional<Epoch> owning();

        /** Whether the owner of {@code epoch} may hand out messages at {@code nowMs} (the owner lease). */
        boolean mayDeliver(Epoch epoch, long nowMs);

        /** The replica's logical start: everything before it is settled. */
        long start();

        /** The last offset of the log, -1 when empty. */
        long end();

        /** The records from {@code from} to {@code to}, both included. */
        List<Record> read(long from, long to) throws IOException;

        /** The queue was rebuilt for {@code epoch}: subscribe the consumers kept from an earlier epoch again. */
        void rebuilt(Epoch epoch, QueueMachine machine, int messages);

        /** Everything below {@code offset} is settled and its settle records are committed. */
        void settledLowWater(long offset);

        /**
         * How long a settled record stays after its commit: the longest a publish may be sent again after its first
         * send ({@code replication.resend_window_ms}).
         */
        long resendWindowMs();

        /** The gate held deliveries (they were flowing). */
        default void held() {}

        /**
         * When {@code message} expires in this queue, in ms since the epoch ({@link QueueMachine#NEVER}: never): from
         * its admission time ({@link Record.Message#timestampMs}), the queue's message TTL and the message's own.
         */
        default long expiresAtMs(Record.Message message) {
            return QueueMachine.NEVER;
        }

        /**
         * The queue's limits ({@code x-max-length}, {@code x-max-length-bytes}, {@code x-delivery-limit}), read at
         * each rebuild.
         */
        default QueueMachine.Limits limits() {
            return QueueMachine.Limits.NONE;
        }

        /** The size of {@code message}'s body as the publisher sent it (what a byte limit counts). */
        default long bodySize(Record.Message message) {
            return 0;
        }
    }

    private final Host host;
    private final QueueEffects effects;
    private final Set<Fault> faults;
    private QueueMachine machine;
    private Epoch epoch;
    private long enqueuedUpTo = -1;
    /** Whether the machine served counts body bytes (its queue has a byte limit). */
    private boolean countsBytes;

    private long lowWaterCandidate = -1;
    private long lowWaterNeedsCommit = Long.MAX_VALUE;
    private long lowWaterReported;
    private long nextLowWaterMs = Long.MIN_VALUE;
    /**
     * Marks of the commit, oldest first: at mark {@code (offset, ms)} every record below {@code offset} was committed,
     * so appended, by {@code ms}. One every {@value #COMMIT_MARK_EVERY_MS} ms at most, none older than the window kept
     * but the newest of those.
     */
    private final ArrayDeque<long[]> commitMarks = new ArrayDeque<>();

    /**
     * Messages being dead-lettered at least once, by offset, with their reason's code: out of the queue, not settled
     * until their targets confirmed them, so the low water stays below them.
     */
    private final Long2LongHashMap pendingDeadLetters = new Long2LongHashMap(-1);

    public QueueOwner(Host host, QueueEffects effects, Set<Fault> faults) {
        this.host = host;
        this.effects = effects;
        this.faults = Set.copyOf(faults);
    }

    public QueueOwner(Host host, QueueEffects effects) {
        this(host, effects, Set.of());
    }

    /** Whether the queue is served: rebuilt for an owned epoch and not dropped since. */
    public boolean serving() {
        return machine != null;
    }

    /** The epoch the queue is served in, if it is. */
    public Optional<Epoch> epoch() {
        return Optional.ofNullable(epoch);
    }

    /** The last offset enqueued (the commit seen last), -1 when not served. */
    public long enqueuedUpTo() {
        return enqueuedUpTo;
    }

    /** The machine without passing the gate, for counts and settlements, or null when not served. */
    public QueueMachine machine() {
        return machine;
    }

    /**
     * The machine after the gate at {@code nowMs}, for an operation that can deliver (consume, get, ack, reject,
     * requeue, purge), or null when not served.
     */
    public QueueMachine gated(long nowMs) {
        gate(nowMs);
        return machine;
    }

    /**
     * The commit of {@code epoch} reached {@code upTo}: the queue is rebuilt at a new owned epoch, or takes the newly
     * committed messages. Ignored unless the replica owns {@code epoch} now.
     */
    public void deliverable(Epoch committed, long upTo, long nowMs) throws IOException {
        if (!host.owning().equals(Optional.of(committed))) {
            return;
        }
        if (!committed.equals(epoch)) {
            rebuild(committed, upTo, nowMs);
        } else if (upTo > enqueuedUpTo) {
            gate(nowMs);
            for (Record record : host.read(enqueuedUpTo + 1, upTo)) {
                if (record instanceof Record.Message message) {
                    long size = countsBytes ? host.bodySize(message) : 0;
                    machine.enqueue(message.offset(), message.timestampMs(), host.expiresAtMs(message), size, effects);
                }
            }
            enqueuedUpTo = upTo;
            markCommit(nowMs);
        }
        reportLowWater();
    }

    private void markCommit(long nowMs) {
        long[] newest = commitMarks.peekLast();
        if (newest == null || nowMs - newest[1] >= COMMIT_MARK_EVERY_MS) {
            commitMarks.addLast(new long[] {enqueuedUpTo + 1, nowMs});
        }
    }

    /**
     * The offset below which every record was committed before the resend window began at {@code nowMs}, or -1 when no
     * record is known to be that old.
     */
    private long outsideResendWindow(long nowMs) {
        long floor = -1;
        long windowStartMs = nowMs - host.resendWindowMs();
        while (!commitMarks.isEmpty() && commitMarks.peekFirst()[1] <= windowStartMs) {
            floor = commitMarks.peekFirst()[0];
            if (commitMarks.size() == 1) {
                break; // the newest old mark stays: the floor until a newer one ages
            }
            commitMarks.pollFirst();
        }
        return floor;
    }

    private void rebuild(Epoch owned, long upTo, long nowMs) throws IOException {
        // from the logical start, not the file's: what lies before it is settled
        QueueMachine.Limits limits = host.limits();
        LongArrayList messages = new LongArrayList();
        LongArrayList expiries = new LongArrayList();
        LongArrayList sizes = new LongArrayList();
        LongHashSet settled = new LongHashSet();
        Long2LongHashMap returns = new Long2LongHashMap(0);
        pendingDeadLetters.clear();
        for (Record record : host.read(host.start(), upTo)) {
            switch (record) {
                case Record.Message message -> {
                    messages.addLong(message.offset());
                    expiries.addLong(
                            faults.contains(Fault.REBUILD_WITHOUT_EXPIRY)
                                    ? QueueMachine.NEVER
                                    : host.expiresAtMs(message));
                    sizes.addLong(limits.countsBytes() ? host.bodySize(message) : 0);
                }
                case Record.Settle settle -> {
                    for (long offset : settle.settled()) {
                        settled.add(offset);
                    }
                }
                case Record.Returned returned -> {
                    for (long offset : returned.returned()) {
                        returns.put(offset, returns.get(offset) + 1);
                    }
                }
                case Record.DeadLettered deadLettered -> {
                    for (long offset : deadLettered.offsets()) {
                        pendingDeadLetters.put(offset, deadLettered.reason());
                    }
                }
                case Record.EpochStart start -> {}
            }
        }
        LongArrayList unsettled = new LongArrayList();
        LongArrayList unsettledExpiries = new LongArrayList();
        LongArrayList unsettledSizes = new LongArrayList();
        LongArrayList unsettledReturns = new LongArrayList();
        for (var offsets = settled.iterator(); offsets.hasNext(); ) {
            pendingDeadLetters.remove(offsets.nextValue());
        }
        for (int i = 0; i < messages.size(); i++) {
            long offset = messages.getLong(i);
            if (!settled.contains(offset) && !pendingDeadLetters.containsKey(offset)) {
                unsettled.addLong(offset);
                unsettledExpiries.addLong(expiries.getLong(i));
                unsettledSizes.addLong(sizes.getLong(i));
                unsettledReturns.addLong(returns.get(offset));
            }
        }
        machine = QueueMachine.recovered(
                unsettled.toLongArray(),
                unsettledExpiries.toLongArray(),
                unsettledSizes.toLongArray(),
                unsettledReturns.toLongArray(),
                limits);
        countsBytes = limits.countsBytes();
        machine.holdDelivery(); // until the owner lease allows it (a new owner waits out its predecessor's lease)
        epoch = owned;
        enqueuedUpTo = upTo;
        lowWaterCandidate = -1;
        lowWaterNeedsCommit = Long.MAX_VALUE;
        // the inherited records' commit times are unknown here: they count as committed now
        commitMarks.clear();
        markCommit(nowMs);
        host.rebuilt(owned, machine, machine.readyCount());
        gate(nowMs);
    }

    /** Holds or resumes deliveries by the owner lease at {@code nowMs}. */
    private void gate(long nowMs) {
        if (machine == null) {
            return;
        }
        machine.advance(nowMs, effects);
        if (host.mayDeliver(epoch, nowMs)) {
            machine.resumeDelivery(effects);
        } else if (!machine.deliveryHeld() && !faults.contains(Fault.DELIVER_ON_EXPIRED_LEASE)) {
            machine.holdDelivery();
            host.held();
        }
    }

    /**
     * The message at {@code offset} left the machine for the reason coded {@code reason} and is dead-lettered at least
     * once: it stays unsettled (the low water below it) until {@link #deadLettered}.
     */
    public void pendDeadLetter(long offset, int reason) {
        pendingDeadLetters.put(offset, reason);
    }

    /** The dead-letter targets confirmed the message at {@code offset}: it may be settled. */
    public boolean deadLettered(long offset) {
        return pendingDeadLetters.remove(offset) != -1;
    }

    /** How many messages wait for their dead-letter targets. */
    public int pendingDeadLetterCount() {
        return pendingDeadLetters.size();
    }

    /** Whether the message at {@code offset} waits for its dead-letter targets. */
    public boolean deadLetterPending(long offset) {
        return pendingDeadLetters.containsKey(offset);
    }

    /**
     * The messages waiting for their dead-letter targets, as offset and reason code pairs in offset order: after a
     * rebuild, those an earlier owner left undone.
     */
    public long[][] pendingDeadLetters() {
        long[][] pairs = new long[pendingDeadLetters.size()][];
        int i = 0;
        for (var entries = pendingDeadLetters.entrySet().iterator(); entries.hasNext(); ) {
            entries.next();
            pairs[i++] = new long[] {entries.getLongKey(), entries.getLongValue()};
        }
        java.util.Arrays.sort(pairs, java.util.Comparator.comparingLong(pair -> pair[0]));
        return pairs;
    }

    /** The runtime's beat while the queue is served: the lease gate and, now and then, retention. */
    public void tick(long nowMs) {
        if (machine == null) {
            return;
        }
        if (nowMs >= nextLowWaterMs) {
            nextLowWaterMs = nowMs + LOW_WATER_EVERY_MS;
            findLowWater(nowMs);
        }
        gate(nowMs);
    }

    /** A new retention candidate: the lowest unsettled offset, reported once the settles before it are committed. */
    private void findLowWater(long nowMs) {
        if (lowWaterCandidate >= 0) {
            return;
        }
        long lowest = Math.min(machine.lowestUnsettled(), enqueuedUpTo + 1);
        for (var offsets = pendingDeadLetters.keySet().iterator(); offsets.hasNext(); ) {
            lowest = Math.min(lowest, offsets.nextValue());
        }
        if (!faults.contains(Fault.DISCARD_INSIDE_RESEND_WINDOW)) {
            lowest = Math.min(lowest, outsideResendWindow(nowMs));
        }
        if (lowest > lowWaterReported) {
            lowWaterCandidate = lowest;
            lowWaterNeedsCommit = host.end();
            reportLowWater(); // at once when the log is committed to its end already
        }
    }

    private void reportLowWater() {
        if (lowWaterCandidate >= 0 && enqueuedUpTo >= lowWaterNeedsCommit) {
            host.settledLowWater(lowWaterCandidate);
            lowWaterReported = lowWaterCandidate;
            lowWaterCandidate = -1;
            lowWaterNeedsCommit = Long.MAX_VALUE;
        }
    }

    /** The replica stopped owning, or the queue ends here: what it held is recovered by the next owner. */
    public void drop() {
        machine = null;
        pendingDeadLetters.clear();
        epoch = null;
        enqueuedUpTo = -1;
        lowWaterCandidate = -1;
        lowWaterNeedsCommit = Long.MAX_VALUE;
        commitMarks.clear();
    }
}
