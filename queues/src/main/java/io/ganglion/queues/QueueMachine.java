package io.ganglion.queues;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayQueue;
import org.agrona.collections.LongHashSet;

/**
 * The semantics of one queue over its log: which messages are ready, which are out with consumers, and who gets the
 * next one.
 *
 * <p>Implementation notes. A message is known only by its log offset; bodies stay in the log. Ready messages are the
 * ones never delivered ({@code fresh}, in offset order) and the ones returned after a delivery ({@code returned},
 * sorted). Deliveries always take the lowest ready offset, so every returned offset is below every fresh one and a
 * requeued message goes back to its original place. A message is redelivered if it was returned, or if it was
 * recovered from the log below {@code redeliveredBelow} (it may have been delivered before a restart or failover).
 * Consumers are served round robin among those under their prefetch.
 *
 * <p>Expiry (message TTL). A message may have a time at which it expires ({@link #NEVER}: none). The machine's time is
 * the latest given to {@link #advance}; the caller advances it before every operation. A ready message whose time
 * has come is removed at once, wherever it stands in the queue, and reported through {@link QueueEffects#expired}; a
 * message out with a consumer does not expire there, and keeps its time if it comes back. A message that expires at
 * or before the moment it is enqueued (a TTL of 0) is delivered if a consumer can take it in that {@link #enqueue},
 * and expires otherwise. Expiry times sit in an {@link ExpiryHeap}; a queue whose messages never expire keeps nothing
 * for them.
 *
 * <p>Length limits ({@link #limit}): after each enqueue, while more messages are ready than the limit, or their bodies
 * take more bytes, the oldest ready message is dropped ({@link QueueEffects#dropped}), as RabbitMQ's {@code drop-head}
 * does. Only ready messages count; the ones out with consumers do not. Body sizes are kept only while a byte limit is
 * set.
 *
 * <p>Delivery limit ({@link Limits#deliveryLimit}): every return of a delivered message to the queue (a requeueing
 * reject, or the unacknowledged messages of a closed channel) counts one; a message returned more often than the
 * limit leaves the queue ({@link QueueEffects#overDeliveryLimit}) instead of going back. Each counted return is
 * reported ({@link QueueEffects#returned}) so that a replicated queue can log it; {@link #deliveryCount} reads it.
 *
 * <p>Not thread-safe: one queue lives on one shard, and only that shard's thread calls it.
 */
public final class QueueMachine {
    /** The expiry time of a message that never expires. */
    public static final long NEVER = Long.MAX_VALUE;

    private static final int UNLIMITED = 0;
    private static final ConsumerKey GET = new ConsumerKey(-1, "");

    private final LongArrayQueue fresh = new LongArrayQueue(LongArrayQueue.DEFAULT_NULL_VALUE);
    private final TreeSet<Long> returned = new TreeSet<>();
    /** How often each message not settled was returned after a delivery (its delivery count), if at all. */
    private final Long2LongHashMap returns = new Long2LongHashMap(0);

    private final Long2ObjectHashMap<ConsumerKey> unacked = new Long2ObjectHashMap<>();
    private final Map<ConsumerKey, ConsumerState> consumers = new LinkedHashMap<>();
    private final List<ConsumerKey> ring = new ArrayList<>();
    private int nextInRing;
    private long redeliveredBelow = Long.MIN_VALUE;
    private boolean exclusiveConsumer;
    private boolean deliveryHeld;
    private long nowMs = Long.MIN_VALUE;
    /** The expiry time of each message not settled that has one (ready, or out with a consumer). */
    private final Long2LongHashMap expiries = new Long2LongHashMap(NEVER);
    /** When each message of {@link #expiries} expires; entries of messages gone since are skipped. */
    private final ExpiryHeap expiryOrder = new ExpiryHeap();
    /** Messages expired while in {@code fresh} behind others, dropped when they reach its head. */
    private final LongHashSet expiredFresh = new LongHashSet();

    private final long maxReady;
    private final long maxReadyBytes;
    private final long deliveryLimit;
    /** Body sizes of the messages not settled, kept while a byte limit is set. */
    private final Long2LongHashMap bodyBytes = new Long2LongHashMap(-1);

    private long readyBytes;

    private static final class ConsumerState {
        final int prefetch;
        final boolean noAck;
        int outstanding;

        ConsumerState(int prefetch, boolean noAck) {
            this.prefetch = prefetch;
            this.noAck = noAck;
        }

        boolean hasCapacity() {
            return noAck || prefetch == UNLIMITED || outstanding < prefetch;
        }
    }

    /**
     * A queue's limits: at most {@code maxReady} ready messages ({@code x-max-length}) and {@code maxReadyBytes} bytes
     * of their bodies ({@code x-max-length-bytes}), and at most {@code deliveryLimit} returns of one message ({@code
     * x-delivery-limit}); -1 for no limit.
     */
    public record Limits(long maxReady, long maxReadyBytes, long deliveryLimit) {
        public static final Limits NONE = new Limits(-1, -1, -1);

        /** Length limits only: no delivery limit. */
        public Limits(long maxReady, long maxReadyBytes) {
            this(maxReady, maxReadyBytes, -1);
        }

        /** Whether body sizes count (a byte limit is set). */
        public boolean countsBytes() {
            return maxReadyBytes >= 0;
        }
    }

    /** An empty queue without limits. */
    public QueueMachine() {
        this(Limits.NONE);
    }

    /** An empty queue with {@code limits}. */
    public QueueMachine(Limits limits) {
        this.maxReady = limits.maxReady();
        this.maxReadyBytes = limits.maxReadyBytes();
        this.deliveryLimit = limits.deliveryLimit();
    }

    /**
     * A queue recovered from its log: {@code unsettled} are the offsets of messages not settled, in order. They all
     * count as redelivered, since they may have been delivered before.
     */
    public static QueueMachine recovered(long[] unsettled) {
        return recovered(unsettled, null, null, Limits.NONE);
    }

    /**
     * A queue with {@code limits} recovered from its log, as {@link #recovered(long[])}, each message with its expiry
     * time ({@code expiresAtMs[i]} for {@code unsettled[i]}; null: none expires) and its body size ({@code
     * bodySizes}, read only when a byte limit is set). The limits apply at the next enqueue.
     */
    public static QueueMachine recovered(long[] unsettled, long[] expiresAtMs, long[] bodySizes, Limits limits) {
        return recovered(unsettled, expiresAtMs, bodySizes, null, limits);
    }

    /**
     * As {@link #recovered(long[], long[], long[], Limits)}, each message with the returns counted for it before
     * ({@code returnCounts[i]} for {@code unsettled[i]}; null: none).
     */
    public static QueueMachine recovered(
            long[] unsettled, long[] expiresAtMs, long[] bodySizes, long[] returnCounts, Limits limits) {
        QueueMachine queue = new QueueMachine(limits);
        if (returnCounts != null && returnCounts.length != unsettled.length) {
            throw new IllegalArgumentException("one return count per offset");
        }
        if ((expiresAtMs != null && expiresAtMs.length != unsettled.length)
                || (limits.countsBytes() && (bodySizes == null || bodySizes.length != unsettled.length))) {
            throw new IllegalArgumentException("one expiry time and one body size per offset");
        }
        for (int i = 0; i < unsettled.length; i++) {
            if (expiresAtMs != null) {
                queue.expireAt(unsettled[i], expiresAtMs[i]);
            }
            if (limits.countsBytes()) {
                queue.bodyBytes.put(unsettled[i], bodySizes[i]);
                queue.readyBytes += bodySizes[i];
            }
            if (returnCounts != null && returnCounts[i] > 0) {
                queue.returns.put(unsettled[i], returnCounts[i]);
            }
        }
        long last = Long.MIN_VALUE;
        for (long offset : unsettled) {
            if (offset <= last) {
                throw new IllegalArgumentException("unsettled offsets must ascend: " + offset + " after " + last);
            }
            queue.fresh.addLong(offset);
            last = offset;
        }
        queue.redeliveredBelow = last + 1;
        return queue;
    }

    /** Ready messages: the count {@code queue.declare-ok} reports. */
    public int readyCount() {
        return fresh.size() - expiredFresh.size() + returned.size();
    }

    /**
     * The lowest offset of a message not settled (ready or out with a consumer), or {@code Long.MAX_VALUE} when every
     * message is settled: what the log below it holds is no longer needed by the queue (retention). Linear in the
     * number of unacknowledged messages; call it now and then, not per message.
     */
    public long lowestUnsettled() {
        long lowest = Long.MAX_VALUE;
        if (!fresh.isEmpty()) {
            lowest = fresh.peekLong();
        }
        if (!returned.isEmpty()) {
            lowest = Math.min(lowest, returned.first());
        }
        for (var offsets = unacked.keySet().iterator(); offsets.hasNext(); ) {
            lowest = Math.min(lowest, offsets.nextLong());
        }
        return lowest;
    }

    /** Messages delivered and not yet settled or returned. */
    public int unackedCount() {
        return unacked.size();
    }

    public int consumerCount() {
        return consumers.size();
    }

    public boolean hasConsumer(ConsumerKey consumer) {
        return consumers.containsKey(consumer);
    }

    /**
     * Hands nothing to consumers (and {@link #get} takes nothing) until {@link #resumeDelivery}: the owner does not
     * hold its owner lease, or waits out a deposed owner's. Enqueues, acks, rejects, requeues and consumers are still
     * taken; what becomes ready waits.
     */
    public void holdDelivery() {
        deliveryHeld = true;
    }

    /** Ends {@link #holdDelivery}: ready messages go out to consumers with room at once. */
    public void resumeDelivery(QueueEffects effects) {
        if (deliveryHeld) {
            deliveryHeld = false;
            dispatch(effects);
        }
    }

    public boolean deliveryHeld() {
        return deliveryHeld;
    }

    /** A committed message that never expires is in the queue at {@code offset}; offsets only grow. */
    public void enqueue(long offset, QueueEffects effects) {
        enqueue(offset, NEVER, effects);
    }

    /**
     * A committed message is in the queue at {@code offset}, expiring at {@code expiresAtMs} ({@link #NEVER}: never);
     * offsets only grow. It may go to a consumer now even if its time has come (a TTL of 0), else it expires.
     */
    public void enqueue(long offset, long expiresAtMs, QueueEffects effects) {
        enqueue(offset, expiresAtMs, 0, effects);
    }

    /**
     * A committed message of {@code bodySize} body bytes is in the queue at {@code offset}, expiring at {@code
     * expiresAtMs}: as {@link #enqueue(long, long, QueueEffects)}, then the oldest ready messages go while the queue
     * is over its length limits.
     */
    public void enqueue(long offset, long expiresAtMs, long bodySize, QueueEffects effects) {
        enqueue(offset, expiresAtMs, expiresAtMs, bodySize, effects);
    }

    /**
     * A committed message admitted at {@code admittedAtMs}: as {@link #enqueue(long, long, long, QueueEffects)}, but
     * one whose time came before now with a TTL above 0 ({@code expiresAtMs > admittedAtMs}: its commit came late)
     * expires at once, never handed out. Only a TTL of 0 makes a message due at its enqueue deliverable.
     */
    public void enqueue(long offset, long admittedAtMs, long expiresAtMs, long bodySize, QueueEffects effects) {
        if (expiresAtMs != NEVER && expiresAtMs > admittedAtMs && expiresAtMs <= nowMs) {
            effects.expired(offset);
            return;
        }
        fresh.addLong(offset);
        expireAt(offset, expiresAtMs);
        if (maxReadyBytes >= 0) {
            bodyBytes.put(offset, bodySize);
            readyBytes += bodySize;
        }
        deliverReady(effects);
        expireDue(effects);
        dropOverLimit(effects);
    }

    /** Body bytes of the ready messages, counted while a byte limit is set (0 otherwise). */
    public long readyBytes() {
        return readyBytes;
    }

    private void dropOverLimit(QueueEffects effects) {
        while (readyCount() > 0
                && ((maxReady >= 0 && readyCount() > maxReady) || (maxReadyBytes >= 0 && readyBytes > maxReadyBytes))) {
            long offset = takeReady();
            forget(offset);
            effects.dropped(offset);
        }
    }

    /**
     * The machine's time moves on to {@code nowMs} (an earlier time is ignored): ready messages whose time has come
     * expire.
     */
    public void advance(long nowMs, QueueEffects effects) {
        if (nowMs > this.nowMs) {
            this.nowMs = nowMs;
        }
        expireDue(effects);
    }

    /** Messages with an expiry time not settled yet (ready or out with a consumer). */
    public int expiringCount() {
        return expiries.size();
    }

    private void expireAt(long offset, long expiresAtMs) {
        if (expiresAtMs != NEVER) {
            expiries.put(offset, expiresAtMs);
            expiryOrder.push(expiresAtMs, offset);
        }
    }

    /** Removes every ready message whose time has come, the earliest first. */
    private void expireDue(QueueEffects effects) {
        while (!expiryOrder.isEmpty() && expiryOrder.peekTime() <= nowMs) {
            long time = expiryOrder.peekTime();
            long offset = expiryOrder.peekOffset();
            expiryOrder.pop();
            if (expiries.get(offset) != time || unacked.containsKey(offset)) {
                continue; // gone another way, or out with a consumer: pushed again if it comes back
            }
            readyBytes -= forget(offset); // still ready: its bytes counted until now
            if (!returned.remove(offset)) {
                expiredFresh.add(offset);
                dropExpiredHead();
            }
            effects.expired(offset);
        }
        if (expiryOrder.size() > 2 * expiries.size() + 1024) {
            rebuildExpiryOrder();
        }
    }

    /** Keeps the heap to the live entries, the messages out with consumers included. */
    private void rebuildExpiryOrder() {
        expiryOrder.clear();
        for (var entries = expiries.entrySet().iterator(); entries.hasNext(); ) {
            entries.next();
            expiryOrder.push(entries.getLongValue(), entries.getLongKey());
        }
    }

    private void dropExpiredHead() {
        while (!fresh.isEmpty() && expiredFresh.remove(fresh.peekLong())) {
            fresh.pollLong();
        }
    }

    /**
     * Adds a consumer that may hold {@code prefetch} unacknowledged messages (0: no limit). A {@code noAck} consumer's
     * messages are settled as they are delivered.
     */
    public ConsumeOutcome consume(
            ConsumerKey consumer, int prefetch, boolean noAck, boolean exclusive, QueueEffects effects) {
        if (prefetch < 0) {
            throw new IllegalArgumentException("prefetch must not be negative: " + prefetch);
        }
        if (consumers.containsKey(consumer)) {
            return ConsumeOutcome.DUPLICATE_TAG;
        }
        if (exclusiveConsumer || (exclusive && !consumers.isEmpty())) {
            return ConsumeOutcome.EXCLUSIVE_CONFLICT;
        }
        consumers.put(consumer, new ConsumerState(prefetch, noAck));
        ring.add(consumer);
        exclusiveConsumer = exclusive;
        dispatch(effects);
        return ConsumeOutcome.ADDED;
    }

    /**
     * Removes a consumer. Its unacknowledged messages stay with its channel: they are settled or returned when the
     * channel acks, rejects or closes.
     */
    public boolean cancel(ConsumerKey consumer) {
        if (consumers.remove(consumer) == null) {
            return false;
        }
        int index = ring.indexOf(consumer);
        ring.remove(index);
        if (nextInRing > index) {
            nextInRing--;
        }
        if (consumers.isEmpty()) {
            exclusiveConsumer = false;
        }
        return true;
    }

    /** A message taken by {@code basic.get}. */
    public record Taken(long offset, boolean redelivered, long deliveryCount) {
        /** A message never returned before. */
        public Taken(long offset, boolean redelivered) {
            this(offset, redelivered, 0);
        }
    }

    /**
     * {@code basic.get}: takes the lowest ready message, if any. With {@code noAck} it is settled at once; otherwise it
     * is unacknowledged until acked, rejected or returned.
     */
    public Optional<Taken> get(boolean noAck, QueueEffects effects) {
        expireDue(effects);
        if (readyCount() == 0 || deliveryHeld) {
            return Optional.empty();
        }
        long offset = takeReady();
        Taken taken = new Taken(offset, isRedelivery(offset), returns.get(offset));
        if (noAck) {
            settle(offset, effects);
        } else {
            unacked.put(offset, GET);
        }
        return Optional.of(taken);
    }

    private boolean isRedelivery(long offset) {
        return offset < redeliveredBelow || returns.containsKey(offset);
    }

    /** How often the message at {@code offset} was returned after a delivery: its {@code x-delivery-count}. */
    public long deliveryCount(long offset) {
        return returns.get(offset);
    }

    /** The message at {@code offset} was acknowledged: settle it. Unknown offsets are ignored and reported false. */
    public boolean ack(long offset, QueueEffects effects) {
        ConsumerKey holder = unacked.remove(offset);
        if (holder == null) {
            return false;
        }
        release(holder);
        settle(offset, effects);
        dispatch(effects);
        return true;
    }

    /**
     * The message at {@code offset} was rejected or nacked: back to its original place with {@code requeue}, else it
     * leaves the queue ({@link QueueEffects#rejected}).
     */
    public boolean reject(long offset, boolean requeue, QueueEffects effects) {
        ConsumerKey holder = unacked.remove(offset);
        if (holder == null) {
            return false;
        }
        release(holder);
        if (requeue) {
            returnAfterDelivery(offset, effects);
        } else {
            forget(offset);
            effects.rejected(offset);
        }
        dispatch(effects);
        return true;
    }

    /** Returns messages a closed channel held: they go back to their original places, marked redelivered. */
    public void requeue(long[] offsets, QueueEffects effects) {
        for (long offset : offsets) {
            ConsumerKey holder = unacked.remove(offset);
            if (holder != null) {
                release(holder);
                returnAfterDelivery(offset, effects);
            }
        }
        dispatch(effects);
    }

    /** Settles every ready message; unacknowledged ones stay. Returns how many were purged. */
    public int purge(QueueEffects effects) {
        int purged = readyCount();
        while (readyCount() > 0) {
            settle(takeReady(), effects);
        }
        return purged;
    }

    /** A delivered message comes back: counted, then back to its place, or gone when past the delivery limit. */
    private void returnAfterDelivery(long offset, QueueEffects effects) {
        long count = returns.get(offset) + 1;
        if (deliveryLimit >= 0 && count > deliveryLimit) {
            forget(offset);
            effects.overDeliveryLimit(offset);
            return;
        }
        returns.put(offset, count);
        effects.returned(offset);
        returnToReady(offset);
    }

    private void returnToReady(long offset) {
        returned.add(offset);
        readyBytes += Math.max(0, bodyBytes.get(offset));
        long expiresAtMs = expiries.get(offset);
        if (expiresAtMs != NEVER) {
            expiryOrder.push(expiresAtMs, offset); // its entry was skipped while it was out
        }
    }

    private void settle(long offset, QueueEffects effects) {
        forget(offset);
        effects.settle(offset);
    }

    /** The message at {@code offset} leaves the queue: what is kept of it goes. Returns its body size, if kept. */
    private long forget(long offset) {
        returns.remove(offset);
        expiries.remove(offset);
        return Math.max(0, bodyBytes.remove(offset));
    }

    private void release(ConsumerKey holder) {
        ConsumerState state = consumers.get(holder);
        if (state != null && state.outstanding > 0) {
            state.outstanding--;
        }
    }

    private long takeReady() {
        long offset;
        if (!returned.isEmpty()) {
            offset = returned.pollFirst();
        } else {
            offset = fresh.pollLong();
            dropExpiredHead();
        }
        readyBytes -= Math.max(0, bodyBytes.get(offset));
        return offset;
    }

    private void dispatch(QueueEffects effects) {
        expireDue(effects);
        deliverReady(effects);
    }

    private void deliverReady(QueueEffects effects) {
        while (!deliveryHeld && readyCount() > 0 && !ring.isEmpty()) {
            ConsumerKey chosen = nextWithCapacity();
            if (chosen == null) {
                return;
            }
            ConsumerState state = consumers.get(chosen);
            long offset = takeReady();
            boolean redelivered = isRedelivery(offset);
            if (state.noAck) {
                effects.deliver(chosen, offset, redelivered);
                settle(offset, effects);
            } else {
                state.outstanding++;
                unacked.put(offset, chosen);
                effects.deliver(chosen, offset, redelivered);
            }
        }
    }

    private ConsumerKey nextWithCapacity() {
        int size = ring.size();
        for (int i = 0; i < size; i++) {
            int index = (nextInRing + i) % size;
            ConsumerKey candidate = ring.get(index);
            if (consumers.get(candidate).hasCapacity()) {
                nextInRing = (index + 1) % size;
                return candidate;
            }
        }
        return null;
    }
}
