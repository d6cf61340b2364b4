package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One record of an object's replicated log. Records of one epoch are written by its one owner in offset order, so two
 * replicas holding a record of the same epoch at the same offset hold the same record.
 */
public sealed interface Record {
    /** Header bytes counted for flow control besides the body: length, CRC, epoch, offset, type, timestamp. */
    int HEADER_BYTES = 32;

    Epoch epoch();

    long offset();

    /** Bytes this record takes on the wire and on disk, for flow control. */
    int size();

    /** The first record a new owner writes in its epoch, before it admits anything. */
    record EpochStart(Epoch epoch, long offset) implements Record {
        public EpochStart {
            Objects.requireNonNull(epoch, "epoch");
        }

        @Override
        public int size() {
            return HEADER_BYTES;
        }
    }

    /**
     * A published message. The body is a read-only view; the state machines only measure it.
     *
     * @param timestampMs when the owner admitted it, by the owner's clock: every copy keeps this time, so a message's
     *     age (its TTL) is the same whichever copy owns the queue later
     */
    record Message(Epoch epoch, long offset, PublishId id, ByteBuffer body, long timestampMs) implements Record {
        public Message {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(id, "id");
            body = body.asReadOnlyBuffer();
        }

        /** A message whose time does not matter (tests of the log alone): admitted at time 0. */
        public Message(Epoch epoch, long offset, PublishId id, ByteBuffer body) {
            this(epoch, offset, id, body, 0);
        }

        @Override
        public int size() {
            return HEADER_BYTES + body.remaining();
        }
    }

    /**
     * The messages at the offsets {@code settled} were acknowledged (or rejected without requeue): they are no longer
     * in the queue. One record holds the settlements the owner gathered in a few milliseconds.
     */
    record Settle(Epoch epoch, long offset, long[] settled) implements Record {
        public Settle {
            Objects.requireNonNull(epoch, "epoch");
            if (settled.length == 0) {
                throw new IllegalArgumentException("a settle record settles at least one offset");
            }
        }

        public Settle(Epoch epoch, long offset, long settled) {
            this(epoch, offset, new long[] {settled});
        }

        @Override
        public int size() {
            return HEADER_BYTES + (settled.length - 1) * Long.BYTES;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Settle that
                    && epoch.equals(that.epoch)
                    && offset == that.offset
                    && Arrays.equals(settled, that.settled);
        }

        @Override
        public int hashCode() {
            return Objects.hash(epoch, offset, Arrays.hashCode(settled));
        }

        @Override
        public String toString() {
            return "Settle[epoch=" + epoch + ", offset=" + offset + ", settled=" + Arrays.toString(settled) + "]";
        }
    }

    /**
     * The messages at the offsets {@code returned} went back to the queue after a delivery (a requeueing reject or nack,
     * or a closed channel's unacknowledged messages): each counts one more failed delivery, so that a quorum queue's
     * delivery count ({@code x-delivery-count}, {@code x-delivery-limit}) survives a change of owner.
     */
    record Returned(Epoch epoch, long offset, long[] returned) implements Record {
        public Returned {
            Objects.requireNonNull(epoch, "epoch");
            if (returned.length == 0) {
                throw new IllegalArgumentException("a returned record returns at least one offset");
            }
        }

        @Override
        public int size() {
            return HEADER_BYTES + (returned.length - 1) * Long.BYTES;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Returned that
                    && epoch.equals(that.epoch)
                    && offset == that.offset
                    && Arrays.equals(returned, that.returned);
        }

        @Override
        public int hashCode() {
            return Objects.hash(epoch, offset, Arrays.hashCode(returned));
        }

        @Override
        public String toString() {
            return "Returned[epoch=" + epoch + ", offset=" + offset + ", returned=" + Arrays.toString(returned) + "]";
        }
    }

    /**
     * The messages at the offsets {@code offsets} left the queue for {@code reason} (a dead-lettering reason's code,
     * the queue layer's) and are being dead-lettered at least once: they are no longer in the queue, and they stay in
     * the log, unsettled, until a settle record follows once their dead-letter targets confirmed them. A new owner
     * dead-letters again those not settled.
     */
    record DeadLettered(Epoch epoch, long offset, long[] offsets, int reason) implements Record {
        public DeadLettered {
            Objects.requireNonNull(epoch, "epoch");
            if (offsets.length == 0) {
                throw new IllegalArgumentException("a dead-lettered record holds at least one offset");
            }
            if (reason < 0 || reason > 255) {
                throw new IllegalArgumentException("a reason is one octet: " + reason);
            }
        }

        @Override
        public int size() {
            return HEADER_BYTES + 1 + (offsets.length - 1) * Long.BYTES;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof DeadLettered that
                    && epoch.equals(that.epoch)
                    && offset == that.offset
                    && reason == that.reason
                    && Arrays.equals(offsets, that.offsets);
        }

        @Override
        public int hashCode() {
            return Objects.hash(epoch, offset, reason, Arrays.hashCode(offsets));
        }

        @Override
        public String toString() {
            return "DeadLettered[epoch=" + epoch + ", offset=" + offset + ", offsets=" + Arrays.toString(offsets)
                    + ", reason=" + reason + "]";
        }
    }
}
