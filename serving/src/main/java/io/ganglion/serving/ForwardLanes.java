package io.ganglion.serving;

import io.ganglion.coordination.NodeId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * The publishes one broker forwards to replicated queues' owners, each kept until its outcome is known: sent to the
 * owner the broker's image shows, and sent again, with the same sequence (the log's id of it is the broker's publisher
 * id and this sequence), when that owner refuses it, its link closes or the image shows another owner. The next owner
 * finds it in its log (the old owner committed it) or appends it, so a re-send is never a second message.
 *
 * <ul>
 *   <li><b>Lanes.</b> A queue's publishes reach every owner in the order they came: a publish goes to an owner only
 *       when no earlier publish of its queue waits and every one in flight went to that same owner; otherwise it
 *       waits, and {@link #resend} sends waiting publishes in sequence order, a waiting one only once the later ones
 *       in flight came back. Publishes the broker's own replica took ({@link #sendLocally}) count in the lane until
 *       that replica decided them ({@link #decidedLocally}) or gave them back ({@link #adopt}).
 *   <li><b>After.</b> Each send names the publish of its lane sent just before it that is still in flight ({@link
 *       #NONE} when none is): the owner admits a publish only after that one ({@code PublishIntake}), so one it
 *       refused (not the owner yet, or held too long) is never overtaken by a later one it admits.
 *   <li><b>Deadline.</b> A publish not decided within {@code timeoutMs} of its submission or adoption fails: its
 *       outcome is unknown, and it is never sent again, so the owners' resend window (longer than the timeout) holds
 *       every id a re-send can carry.
 *   <li><b>Quick retries.</b> An owner that refuses a publish may own the next epoch a moment later: the first
 *       {@value #QUICK_RETRIES} refusals of a publish ask for a round soon ({@link Effects#resendSoon}).
 * </ul>
 *
 * <p>Pure and single-threaded: the caller passes the time and the owners, and runs every method on one thread. {@code
 * T} is the runtime's handle of one publish: its message and where its answer goes.
 */
public final class ForwardLanes<T> {
    /** Refusals of one publish that ask for a round soon; after them only the regular rounds try it. */
    public static final int QUICK_RETRIES = 20;

    /** The {@code after} of a publish sent with nothing of its lane in flight before it. */
    public static final long NONE = -1;

    /** What {@link #sendLocally} gives when the publish may not go to the own replica now. */
    public static final long HELD = Long.MIN_VALUE;

    /** Deliberate rule breaks the simulator injects to show that its checkers catch them; the broker passes none. */
    public enum Fault {
        /** An adopted publish is taken as a new one, with a sequence of its own: the next owner appends it again. */
        ADOPT_AS_NEW,
        /**
         * Every publish goes with no {@code after}: an owner that sent one back (not the owner yet, held too long) may
         * admit a later one of its lane first.
         */
        SEND_WITHOUT_AFTER
    }

    /** What the lanes ask of their runtime. */
    public interface Effects<T> {
        /**
         * Sends publish {@code sequence} to {@code owner}, this broker's own replica when it is this broker, to be
         * admitted only after publish {@code after} of its lane ({@link #NONE}: no condition); false when it cannot go
         * now (its link is down, or the replica is not open here): it waits for the next round.
         */
        boolean send(NodeId owner, long sequence, long after, T publish);

        /** Run {@link #resend} again soon. */
        void resendSoon();

        /** A new sequence, for {@link Fault#ADOPT_AS_NEW} only. */
        default long nextSequence() {
            throw new UnsupportedOperationException();
        }
    }

    /**
     * What a round did: the publishes that timed out (removed, to be failed) and how many were sent again (a publish
     * that waited from the start for its queue's owner is sent, not re-sent).
     */
    public record Round<T>(List<T> timedOut, int resent) {}

    private static final class Lane {
        final boolean withoutAfter;
        int inFlight;
        int waiting;
        NodeId home;
        /** The last publish sent to {@link #home}: the one a send while others are in flight goes after. */
        long lastSent = NONE;

        Lane(boolean withoutAfter) {
            this.withoutAfter = withoutAfter;
        }

        /** The {@code after} of publish {@code sequence} sent to {@code to} now, or {@link #HELD}. */
        long sendNow(NodeId to, long sequence) {
            if (waiting > 0 || (inFlight > 0 && !to.equals(home))) {
                return HELD;
            }
            return sent(to, sequence);
        }

        long sent(NodeId to, long sequence) {
            long after = inFlight > 0 && !withoutAfter ? lastSent : NONE;
            inFlight++;
            home = to;
            lastSent = sequence;
            return after;
        }

        boolean idle() {
            return inFlight == 0 && waiting == 0;
        }
    }

    private static final class Entry<T> {
        final long queue;
        final T publish;
        final long deadlineMs;
        final Lane lane;
        NodeId home;
        boolean waiting;
        int refusals;
        /** Sent at least once (an adopted publish was, to the own replica). */
        boolean sent;

        boolean resent;

        Entry(long queue, T publish, long deadlineMs, Lane lane) {
            this.queue = queue;
            this.publish = publish;
            this.deadlineMs = deadlineMs;
            this.lane = lane;
        }
    }

    private final Effects<T> effects;
    private final long timeoutMs;
    private final Set<Fault> faults;
    private final Map<Long, Lane> lanes = new HashMap<>();
    /** Undecided publishes by sequence: a round goes through them in the order they came. */
    private final TreeMap<Long, Entry<T>> entries = new TreeMap<>();

    public ForwardLanes(Effects<T> effects, long timeoutMs, Set<Fault> faults) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("timeout " + timeoutMs + " ms");
        }
        this.effects = effects;
        this.timeoutMs = timeoutMs;
        this.faults = Set.copyOf(faults);
    }

    public ForwardLanes(Effects<T> effects, long timeoutMs) {
        this(effects, timeoutMs, Set.of());
    }

    /**
     * A publish to queue {@code queue}: sent to {@code owner} now if its lane lets it, else it waits (also while the
     * owner is not known here, {@code owner} empty).
     */
    public void submit(long queue, long sequence, T publish, Optional<NodeId> owner, long nowMs) {
        Entry<T> entry = new Entry<>(queue, publish, nowMs + timeoutMs, lane(queue));
        if (entries.putIfAbsent(sequence, entry) != null) {
            throw new IllegalArgumentException("sequence " + sequence + " is forwarded already");
        }
        long after = owner.isPresent() ? entry.lane.sendNow(owner.get(), sequence) : HELD;
        if (after != HELD) {
            entry.home = owner.get();
            entry.sent = true;
            if (!effects.send(owner.get(), sequence, after, publish)) {
                backToWaiting(entry);
            }
        } else {
            startWaiting(entry);
        }
    }

    /**
     * Whether publish {@code sequence} to {@code queue} may go to this broker's own replica ({@code self}) now: its
     * {@code after} if so (it counts in the lane as in flight until {@link #decidedLocally} or {@link #adopt}), else
     * {@link #HELD}.
     */
    public long sendLocally(long queue, long sequence, NodeId self) {
        return lane(queue).sendNow(self, sequence);
    }

    /** A publish {@link #sendLocally} let through was decided by this broker's replica. */
    public void decidedLocally(long queue) {
        lane(queue).inFlight--;
    }

    /**
     * A publish {@link #sendLocally} let through that this broker's replica could not decide (it stopped owning): it
     * is sent, with the same sequence, to the queue's next owner, like a forwarded publish whose owner died.
     */
    public void adopt(long queue, long sequence, T publish, long nowMs) {
        Lane lane = lane(queue);
        lane.inFlight--;
        long kept = faults.contains(Fault.ADOPT_AS_NEW) ? effects.nextSequence() : sequence;
        Entry<T> entry = new Entry<>(queue, publish, nowMs + timeoutMs, lane);
        if (entries.putIfAbsent(kept, entry) != null) {
            throw new IllegalArgumentException("sequence " + kept + " is forwarded already");
        }
        entry.sent = true;
        startWaiting(entry);
        effects.resendSoon();
    }

    /**
     * The answer to publish {@code sequence}: a refusal sends it back to waiting (the next owner decides it) and gives
     * empty; any other answer decides it and gives its handle. Empty as well for a publish not (or no longer) here.
     */
    public Optional<T> answered(long sequence, boolean refused) {
        Entry<T> entry = entries.get(sequence);
        if (entry == null) {
            return Optional.empty();
        }
        if (refused) {
            backToWaiting(entry);
            if (entry.refusals++ < QUICK_RETRIES) {
                effects.resendSoon();
            }
            return Optional.empty();
        }
        entries.remove(sequence);
        decided(entry);
        return Optional.of(entry.publish);
    }

    /** The owner refused publish {@code sequence} for good (reject-publish): it is decided, not sent again. */
    public Optional<T> rejected(long sequence) {
        Entry<T> entry = entries.remove(sequence);
        if (entry == null) {
            return Optional.empty();
        }
        decided(entry);
        return Optional.of(entry.publish);
    }

    /** Whether publish {@code sequence} was sent again since it was first sent (a failover's timeline). */
    public boolean wasResent(long sequence) {
        Entry<T> entry = entries.get(sequence);
        return entry != null && entry.resent;
    }

    /** The refusals publish {@code sequence} had, 0 when it is not here. */
    public int refusals(long sequence) {
        Entry<T> entry = entries.get(sequence);
        return entry == null ? 0 : entry.refusals;
    }

    /** The link to {@code peer} closed: every publish in flight to it waits for the next owner. */
    public void linkClosed(NodeId peer) {
        for (Entry<T> entry : entries.values()) {
            if (!entry.waiting && peer.equals(entry.home)) {
                backToWaiting(entry);
            }
        }
    }

    /**
     * A round at {@code nowMs}, with each queue's owner as the image shows it now: publishes in flight to a broker
     * that no longer owns their queue go back to waiting, all of them before any is sent again; publishes past their
     * deadline are removed; then waiting publishes go to their queue's owner in sequence order, a queue's later ones
     * held behind one that cannot go (its owner is not known, a later one is still in flight, or its link is down).
     */
    public Round<T> resend(LongFunction<Optional<NodeId>> ownerOf, long nowMs) {
        Map<Long, Optional<NodeId>> owners = new HashMap<>();
        for (Entry<T> entry : entries.values()) {
            if (!entry.waiting) {
                Optional<NodeId> owner = owners.computeIfAbsent(entry.queue, ownerOf::apply);
                if (owner.isPresent() && !owner.get().equals(entry.home)) {
                    backToWaiting(entry);
                }
            }
        }
        List<T> timedOut = new ArrayList<>();
        Map<Long, Boolean> held = new HashMap<>();
        int resent = 0;
        for (Iterator<Map.Entry<Long, Entry<T>>> it = entries.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Entry<T>> next = it.next();
            Entry<T> entry = next.getValue();
            if (nowMs >= entry.deadlineMs) {
                it.remove();
                decided(entry);
                timedOut.add(entry.publish);
                continue;
            }
            if (!entry.waiting || held.containsKey(entry.queue)) {
                continue;
            }
            Optional<NodeId> owner = owners.computeIfAbsent(entry.queue, ownerOf::apply);
            long after = owner.isEmpty() ? HELD : resendTo(entry, next.getKey(), owner.get());
            if (after == HELD) {
                held.put(entry.queue, true); // recovering, or publishes in flight that were sent after it or elsewhere
                continue;
            }
            if (entry.sent) {
                entry.resent = true;
                resent++;
            }
            entry.sent = true;
            if (!effects.send(owner.get(), next.getKey(), after, entry.publish)) {
                backToWaiting(entry);
                held.put(entry.queue, true);
            }
        }
        return new Round<>(timedOut, resent);
    }

    /** Forgets the idle lanes of queues not in {@code live} (deleted ones). */
    public void forgetLanesExcept(Set<Long> live) {
        lanes.entrySet()
                .removeIf(entry ->
                        !live.contains(entry.getKey()) && entry.getValue().idle());
    }

    /** Undecided publishes. */
    public int size() {
        return entries.size();
    }

    /** Lanes kept. */
    public int laneCount() {
        return lanes.size();
    }

    /** Publishes of {@code queue} in flight (sent, or taken by the own replica), for tests. */
    public int inFlight(long queue) {
        Lane lane = lanes.get(queue);
        return lane == null ? 0 : lane.inFlight;
    }

    /** Publishes of {@code queue} waiting to be sent, for tests. */
    public int waiting(long queue) {
        Lane lane = lanes.get(queue);
        return lane == null ? 0 : lane.waiting;
    }

    private Lane lane(long queue) {
        return lanes.computeIfAbsent(queue, id -> new Lane(faults.contains(Fault.SEND_WITHOUT_AFTER)));
    }

    private static <T> void startWaiting(Entry<T> entry) {
        entry.waiting = true;
        entry.lane.waiting++;
    }

    private static <T> void backToWaiting(Entry<T> entry) {
        if (!entry.waiting) {
            entry.waiting = true;
            entry.lane.inFlight--;
            entry.lane.waiting++;
        }
    }

    /**
     * Sends waiting publish {@code sequence} to {@code to} if nothing of its lane is in flight elsewhere or was sent
     * after it (those come back first: the owner refuses them, as they go after this one); its {@code after}, or
     * {@link #HELD}.
     */
    private static <T> long resendTo(Entry<T> entry, long sequence, NodeId to) {
        Lane lane = entry.lane;
        if (lane.inFlight > 0 && (!to.equals(lane.home) || sequence < lane.lastSent)) {
            return HELD;
        }
        entry.waiting = false;
        lane.waiting--;
        entry.home = to;
        return lane.sent(to, sequence);
    }

    private static <T> void decided(Entry<T> entry) {
        if (entry.waiting) {
            entry.lane.waiting--;
        } else {
            entry.lane.inFlight--;
        }
    }
}
