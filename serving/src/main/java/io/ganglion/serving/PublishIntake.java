package io.ganglion.serving;

import io.ganglion.coordination.Epoch;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.ReplicaEvent;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The owner side's intake of publishes for one queue on one broker: whether a publish goes to the replica now, waits
 * for the replica's next epoch, or goes back to its sender; and the answers to the publishes in flight.
 *
 * <ul>
 *   <li><b>Admit.</b> While the replica takes publishes ({@link Roles#takingPublishes}) a publish is handed to it under
 *       that epoch. The same publish id sent again while the first is in flight joins it: one append, both answered.
 *   <li><b>In order.</b> A publish names the one its sender's lane sent just before it, still undecided there ({@code
 *       after}, {@link ForwardLanes#NONE} for none): it is admitted only if this intake admitted that one (or a later
 *       one of the same sender) in the same epoch, else it goes back to its sender, which sends both again in order.
 *       A publish this intake sent back is so never overtaken by a later one of its lane.
 *   <li><b>Park.</b> While the replica awaits its next epoch ({@link Roles#awaitingEpoch}: a recovery sealed it and it
 *       has not heard who owns next), a publish is held, at most {@value #PARK_MAX} of them for {@value #PARK_MS} ms:
 *       the broker that sent it here often learns first that this one owns the next epoch. Held publishes go in, in
 *       order, as the owner role begins, and back to their senders as soon as the replica follows another owner, or
 *       after {@value #PARK_MS} ms.
 *   <li><b>Moved.</b> Otherwise the publish goes back to its sender ({@link Effects#moved}): never admitted, or
 *       admitted with its outcome left to the next owner; either way safe to send again with the same id.
 * </ul>
 *
 * <p>Pure and single-threaded: the caller passes the time and runs every method on the queue's one thread. {@code T}
 * is the caller's handle for answering one publish.
 */
public final class PublishIntake<T> {
    /** How long a publish waits at most for the replica's next epoch. */
    public static final long PARK_MS = 300;

    /** Publishes held at most; more go back to their senders at once. */
    public static final int PARK_MAX = 16_384;

    /** The replica's roles, as the intake reads them at the time of each call. */
    public interface Roles {
        /** The epoch publishes may be admitted under now, if any. */
        Optional<Epoch> takingPublishes();

        /** Whether the replica awaits an epoch it has not heard of. */
        boolean awaitingEpoch();
    }

    /** What the intake asks of its runtime. */
    public interface Effects<T> {
        /** Hands a publish to the replica. */
        void admit(ReplicaEvent.PublishAdmitted admitted);

        /** The publish committed. */
        void confirmed(T done);

        /** The publish is not (or no longer) decided here: its sender sends it again, with the same id. */
        void moved(T done, String why);

        /** The publish failed for good (the queue was deleted or its storage failed). */
        void failed(T done, String why);

        /**
         * Whether the queue refuses {@code payload} for good now (over its length limit with {@code x-overflow}
         * reject-publish). A refused publish counts as admitted for the order of its sender's later ones.
         */
        default boolean rejects(ByteBuffer payload) {
            return false;
        }

        /** The publish was refused for good ({@link #rejects}): its sender is told, and does not send it again. */
        default void rejected(T done, ByteBuffer payload) {
            failed(done, "rejected");
        }

        /** Call {@link #expire} {@code delayMs} from now. */
        void wakeIn(long delayMs);

        /** Held publishes were let go: admitted, or sent back. */
        default void released(int count, boolean admitted, long heldMs) {}

        /** The first publish of an epoch was admitted. */
        default void firstPublish(Epoch epoch) {}
    }

    private record Parked<T>(PublishId id, long after, ByteBuffer payload, T done, long sinceMs) {}

    private final Roles roles;
    private final Effects<T> effects;
    private final Map<PublishId, T> inFlight = new HashMap<>();
    /** Publishes sent again while their first send is in flight, by id; rare, so kept apart from {@link #inFlight}. */
    private final Map<PublishId, List<T>> joined = new HashMap<>();

    private final ArrayDeque<Parked<T>> parked = new ArrayDeque<>();
    private Epoch firstPublish;
    /** The epoch {@link #admitted} is of. */
    private Epoch admittedEpoch;
    /** Per sender (publisher id), the highest sequence admitted in {@link #admittedEpoch}; few senders, so arrays. */
    private long[] senders = new long[4];

    private long[] admitted = new long[4];
    private int senderCount;
    private boolean closed;

    public PublishIntake(Roles roles, Effects<T> effects) {
        this.roles = roles;
        this.effects = effects;
    }

    /** Publishes in flight (admitted, not answered yet). */
    public int inFlight() {
        return inFlight.size();
    }

    /** Publishes held for the replica's next epoch. */
    public int parked() {
        return parked.size();
    }

    /**
     * A publish with its id, to be admitted after publish {@code after} of the same sender ({@link ForwardLanes#NONE}:
     * no condition), at {@code nowMs}: admitted, held, or back to its sender.
     */
    public void publish(PublishId id, long after, ByteBuffer payload, T done, long nowMs) {
        Optional<Epoch> taking = closed ? Optional.empty() : roles.takingPublishes();
        if (taking.isPresent()) {
            release(Long.MAX_VALUE, nowMs); // held ones first, in the order they came
            admit(id, after, taking.get(), payload, done);
        } else if (!closed && roles.awaitingEpoch() && parked.size() < PARK_MAX) {
            if (parked.isEmpty()) {
                effects.wakeIn(PARK_MS);
            }
            parked.add(new Parked<>(id, after, payload, done, nowMs));
        } else {
            effects.moved(done, "not the owner now");
        }
    }

    private void admit(PublishId id, long after, Epoch epoch, ByteBuffer payload, T done) {
        T earlier = inFlight.get(id);
        if (earlier != null) {
            joined.computeIfAbsent(id, unused -> new ArrayList<>(1)).add(done);
            return;
        }
        if (!epoch.equals(admittedEpoch)) {
            admittedEpoch = epoch;
            senderCount = 0;
        }
        int sender = sender(id.publisher());
        if (after != ForwardLanes.NONE && (sender < 0 || admitted[sender] < after)) {
            effects.moved(done, "publish " + after + " of its sender, sent before it, is not admitted here");
            return;
        }
        if (sender < 0) {
            sender = addSender(id.publisher());
        }
        admitted[sender] = Math.max(admitted[sender], id.sequence());
        if (effects.rejects(payload)) {
            effects.rejected(done, payload);
            return;
        }
        inFlight.put(id, done);
        if (!epoch.equals(firstPublish)) {
            firstPublish = epoch;
            effects.firstPublish(epoch);
        }
        effects.admit(new ReplicaEvent.PublishAdmitted(id, epoch, payload));
    }

    private int sender(long publisher) {
        for (int i = 0; i < senderCount; i++) {
            if (senders[i] == publisher) {
                return i;
            }
        }
        return -1;
    }

    private int addSender(long publisher) {
        if (senderCount == senders.length) {
            senders = Arrays.copyOf(senders, senderCount * 2);
            admitted = Arrays.copyOf(admitted, senderCount * 2);
        }
        senders[senderCount] = publisher;
        admitted[senderCount] = Long.MIN_VALUE;
        return senderCount++;
    }

    /** Forgets what {@code publisher} had admitted: its publishes with an {@code after} go back until one without. */
    private void forgetSender(long publisher) {
        int sender = sender(publisher);
        if (sender >= 0) {
            admitted[sender] = Long.MIN_VALUE;
        }
    }

    /** The replica committed {@code id}: every send of it is answered. */
    public void confirmed(PublishId id) {
        T done = inFlight.remove(id);
        if (done != null) {
            effects.confirmed(done);
            List<T> others = joined.isEmpty() ? null : joined.remove(id);
            if (others != null) {
                others.forEach(effects::confirmed);
            }
        }
    }

    /** The replica refused {@code id} (not its epoch's owner any more): every send of it goes back. */
    public void refused(PublishId id, String reason) {
        T done = inFlight.remove(id);
        if (done != null) {
            forgetSender(id.publisher());
            effects.moved(done, reason);
            List<T> others = joined.isEmpty() ? null : joined.remove(id);
            if (others != null) {
                others.forEach(other -> effects.moved(other, reason));
            }
        }
    }

    /**
     * Every publish in flight is answered now: with {@code movedOn} it goes back to its sender (the next owner decides
     * it), otherwise it fails for good.
     */
    public void dropInFlight(String why, boolean movedOn) {
        List<T> all = new ArrayList<>(inFlight.values());
        joined.values().forEach(all::addAll);
        inFlight.clear();
        joined.clear();
        senderCount = 0;
        for (T done : all) {
            if (movedOn) {
                effects.moved(done, why);
            } else {
                effects.failed(done, why);
            }
        }
    }

    /**
     * The replica took or lost a role: held publishes go in if it takes publishes now, and back to their senders if it
     * follows another owner.
     */
    public void rolesMayHaveChanged(long nowMs) {
        if (!parked.isEmpty() && (closed || !roles.awaitingEpoch())) {
            release(Long.MAX_VALUE, nowMs);
        }
    }

    /** Publishes held {@value #PARK_MS} ms by {@code nowMs} go back to their senders; the others wait on. */
    public void expire(long nowMs) {
        release(nowMs - PARK_MS, nowMs);
        if (!parked.isEmpty()) {
            effects.wakeIn(Math.max(1, PARK_MS - (nowMs - parked.peekFirst().sinceMs())));
        }
    }

    /** The queue is gone here: held publishes go back to their senders, and later ones are refused. */
    public void close(long nowMs) {
        closed = true;
        release(Long.MAX_VALUE, nowMs);
    }

    /** Lets go the publishes held since {@code heldSinceMs} or before, in order: admitted if the replica takes them. */
    private void release(long heldSinceMs, long nowMs) {
        if (parked.isEmpty() || parked.peekFirst().sinceMs() > heldSinceMs) {
            return;
        }
        long since = parked.peekFirst().sinceMs();
        Optional<Epoch> taking = closed ? Optional.empty() : roles.takingPublishes();
        int count = 0;
        while (!parked.isEmpty() && parked.peekFirst().sinceMs() <= heldSinceMs) {
            Parked<T> held = parked.pollFirst();
            count++;
            if (taking.isPresent()) {
                admit(held.id(), held.after(), taking.get(), held.payload(), held.done());
            } else {
                effects.moved(held.done(), "not the owner now");
            }
        }
        effects.released(count, taking.isPresent(), nowMs - since);
    }
}
