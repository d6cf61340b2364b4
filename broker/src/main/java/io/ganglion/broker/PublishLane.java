package io.ganglion.broker;

import io.ganglion.coordination.NodeId;
import java.util.concurrent.CompletableFuture;

/**
 * The publishes of one replicated queue from this broker not decided yet: in flight (sent to {@code home}, or to this
 * broker's own replica) or waiting to be sent again. A new publish goes straight to the owner only when none waits
 * and every one in flight went to that same owner, else it waits behind them; so a channel's publishes reach every
 * owner in the order the client sent them, across a change of owner.
 *
 * <p>Implementation notes. Guarded by its own monitor, with the {@link Forwarded#waiting} flags of its publishes. The
 * threads that reach a lane: the publishing connection's event loop ({@link #sendNow}), the queue's shard (a publish
 * this broker's replica decided or could not decide), the peer link's event loops (an outcome, a closed link), the
 * resender and the metadata log's thread ({@link #idle}). Each section is a few field updates.
 */
final class PublishLane {
    private int inFlight;
    private int waiting;
    private NodeId home;

    /** Whether a publish may go to {@code to} now without passing one sent before it; if so it is in flight. */
    synchronized boolean sendNow(NodeId to) {
        if (waiting > 0 || (inFlight > 0 && !to.equals(home))) {
            return false;
        }
        inFlight++;
        home = to;
        return true;
    }

    /** A publish sent to {@code to} by {@link #sendNow} was decided without going through {@link Forwarded}. */
    synchronized void decidedInFlight() {
        inFlight--;
    }

    synchronized int inFlight() {
        return inFlight;
    }

    synchronized boolean idle() {
        return inFlight == 0 && waiting == 0;
    }

    synchronized int waiting() {
        return waiting;
    }

    /**
     * A publish forwarded to another broker. For a replicated queue it survives the loss of that broker: it is sent
     * again, with the same (publisher, sequence), to the queue's next owner, which finds it in its log or appends it.
     * Its moves between waiting and in flight are made under its lane's monitor.
     */
    static final class Forwarded {
        final String vhost;
        final String queue;
        final long queueId;
        final byte[] message;
        final boolean replicated;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        /** {@link System#nanoTime} after which the resender fails it: its home never answered. */
        final long deadline;
        /** Its queue's lane (a lane of its own for a queue that is not replicated, which is never sent again). */
        final PublishLane lane;

        volatile NodeId home;
        /**
         * Set when it must be sent again (its home died or refused it for now); the resender clears it. Changed only
         * under {@link #lane}, with its counts.
         */
        volatile boolean waiting;

        private boolean decided;
        /** Refusals so far: the first few are retried soon ({@link ForwardingClient}). */
        volatile int refusals;
        /** {@link System#nanoTime} of its last re-send, 0 if never re-sent. */
        volatile long resentAt;

        Forwarded(
                NodeId home,
                String vhost,
                String queue,
                long queueId,
                byte[] message,
                boolean replicated,
                long deadline,
                PublishLane lane) {
            this.deadline = deadline;
            this.lane = lane;
            this.home = home;
            this.vhost = vhost;
            this.queue = queue;
            this.queueId = queueId;
            this.message = message;
            this.replicated = replicated;
        }

        /** Sends it to {@code to} now if that passes no earlier publish of its queue ({@link PublishLane#sendNow}). */
        boolean sendNow(NodeId to) {
            synchronized (lane) {
                if (lane.sendNow(to)) {
                    home = to;
                    return true;
                }
                waiting = true;
                lane.waiting++;
                return false;
            }
        }

        /** Starts waiting: its queue's owner is not known here yet. */
        void startWaiting() {
            synchronized (lane) {
                waiting = true;
                lane.waiting++;
            }
        }

        /** Starts waiting: adopted from this broker's replica, whose publish was in flight in the lane. */
        void adoptedFromInFlight() {
            synchronized (lane) {
                lane.inFlight--;
                lane.waiting++;
                waiting = true;
            }
        }

        /** In flight until now: it must be sent again (refused, or its home's link closed). */
        void backToWaiting() {
            synchronized (lane) {
                if (!waiting && !decided) {
                    waiting = true;
                    lane.inFlight--;
                    lane.waiting++;
                }
            }
        }

        /**
         * The resender's turn: true (and it is in flight to {@code to}) if it waits and every publish of its queue in
         * flight went to {@code to}; false otherwise, and it keeps waiting.
         */
        boolean resendTo(NodeId to) {
            synchronized (lane) {
                if (!waiting || decided || (lane.inFlight > 0 && !to.equals(lane.home))) {
                    return false;
                }
                waiting = false;
                lane.waiting--;
                lane.inFlight++;
                lane.home = to;
                home = to;
                return true;
            }
        }

        /** Confirmed, failed for good or timed out: it no longer holds its queue's later publishes back. */
        void decided() {
            synchronized (lane) {
                if (decided) {
                    return;
                }
                decided = true;
                if (waiting) {
                    lane.waiting--;
                } else {
                    lane.inFlight--;
                }
            }
        }
    }
}
