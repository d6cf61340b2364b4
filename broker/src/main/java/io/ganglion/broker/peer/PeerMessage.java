package io.ganglion.broker.peer;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.queues.StreamStart;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What brokers say to each other over a {@link PeerLink}. Each message is one frame; its type code and body layout are
 * in {@link PeerFrameDescriptor}.
 *
 * <p>Epochs, offsets, publisher ids and sequences are raw {@code long}s, not {@link io.ganglion.coordination.Epoch}: the
 * storage layer and the replication state machines keep them as numbers (a replica never sealed reports sealed epoch
 * -1, which {@code Epoch} refuses), and a message only carries them. Convert at the coordination boundary with {@code
 * Epoch.of}. Node ids, incarnations and object ids use the coordination value types.
 *
 * <p>Byte arrays ({@code payload}, {@code records}) are not copied: a message takes ownership of the arrays it is given,
 * and the sender must not change them after handing the message to {@link PeerLink#send}. Lists are copied (their
 * elements are not). Equality compares array contents, so a decoded message equals the one that was sent; {@code
 * toString} prints array sizes, never contents.
 */
public sealed interface PeerMessage {

    /**
     * The first frame each side sends when a link opens. A link whose peer names another cluster is refused.
     *
     * @param clusterName the sender's {@code cluster.name}
     * @param node the sender's node id
     * @param incarnation the sender's incarnation: a new one means the peer restarted
     */
    record Hello(String clusterName, NodeId node, Incarnation incarnation) implements PeerMessage {
        public Hello {
            Objects.requireNonNull(clusterName, "clusterName");
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(incarnation, "incarnation");
        }
    }

    /**
     * A broker's liveness report to the controller, every {@code liveness.heartbeat_ms}.
     *
     * @param draining whether the broker is leaving: alive, but placement moves its copies away
     * @param sentAtMillis the sender's wall clock when it sent this, for the controller's diagnostics only
     */
    record Heartbeat(NodeId node, Incarnation incarnation, boolean draining, long sentAtMillis) implements PeerMessage {
        public Heartbeat {
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(incarnation, "incarnation");
        }
    }

    /**
     * A publish that broker {@code origin} admitted for {@code object} under {@code epoch}, forwarded to the object's
     * owner. Re-sent with the same {@code (publisherId, sequence)} after an assignment change, so the new owner can find
     * it in the recovered log.
     *
     * @param payload the encoded message, owned by this record
     */
    record Forward(NodeId origin, long publisherId, long sequence, long epoch, ObjectId object, byte[] payload)
            implements PeerMessage {
        public Forward {
            Objects.requireNonNull(origin, "origin");
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(payload, "payload");
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Forward that
                    && origin.equals(that.origin)
                    && publisherId == that.publisherId
                    && sequence == that.sequence
                    && epoch == that.epoch
                    && object.equals(that.object)
                    && Arrays.equals(payload, that.payload);
        }

        @Override
        public int hashCode() {
            return Objects.hash(origin, publisherId, sequence, epoch, object, Arrays.hashCode(payload));
        }

        @Override
        public String toString() {
            return "Forward[origin=" + origin + ", publisherId=" + publisherId + ", sequence=" + sequence + ", epoch="
                    + epoch + ", object=" + object + ", payload=" + payload.length + " octets]";
        }
    }

    /**
     * The owner's answer to a {@link Forward}: confirmed, or refused with a reason (empty when confirmed).
     *
     * @param reason why it was not confirmed, for the log; empty when {@code confirmed}
     */
    record ForwardOutcome(long publisherId, long sequence, ObjectId object, boolean confirmed, String reason)
            implements PeerMessage {
        public ForwardOutcome {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * The owner streams records to a follower: {@code records} hold offsets {@code firstOffset, firstOffset + 1, ...},
     * all of {@code epoch}. An empty list only carries a new commit offset.
     *
     * @param records encoded records, owned by this message
     * @param commitOffset the owner's commit offset: records up to it may be delivered
     */
    record Append(ObjectId object, long epoch, long firstOffset, List<byte[]> records, long commitOffset)
            implements PeerMessage {
        public Append {
            Objects.requireNonNull(object, "object");
            records = List.copyOf(records);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Append that
                    && object.equals(that.object)
                    && epoch == that.epoch
                    && firstOffset == that.firstOffset
                    && commitOffset == that.commitOffset
                    && ByteArrays.equals(records, that.records);
        }

        @Override
        public int hashCode() {
            return Objects.hash(object, epoch, firstOffset, ByteArrays.hashCode(records), commitOffset);
        }

        @Override
        public String toString() {
            return "Append[object=" + object + ", epoch=" + epoch + ", firstOffset=" + firstOffset + ", records="
                    + records.size() + " (" + ByteArrays.totalLength(records) + " octets), commitOffset="
                    + commitOffset + "]";
        }
    }

    /** A follower reports how far its copy of {@code object} is durable in {@code epoch}. */
    record Progress(ObjectId object, long epoch, NodeId node, Incarnation incarnation, long durableOffset)
            implements PeerMessage {
        public Progress {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(incarnation, "incarnation");
        }
    }

    /** Recovery's first step: durably seal {@code epoch}, then answer with a {@link SealReply}. */
    record SealRequest(ObjectId object, long epoch) implements PeerMessage {
        public SealRequest {
            Objects.requireNonNull(object, "object");
        }
    }

    /**
     * A replica sealed {@code sealedEpoch}: where its log ends ({@code lastEpoch}, {@code lastOffset}; offset -1 when
     * empty) and how far it is durable.
     */
    record SealReply(
            ObjectId object, long sealedEpoch, long lastEpoch, long lastOffset, long durableOffset, NodeId node)
            implements PeerMessage {
        public SealReply {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(node, "node");
        }
    }

    /**
     * Install the recovery point for {@code epoch}: truncate what diverges, copy what is missing from {@code source},
     * fsync, then answer with an {@link InstallReply}.
     */
    record InstallRequest(ObjectId object, long epoch, long recoveryPointEpoch, long recoveryPointOffset, NodeId source)
            implements PeerMessage {
        public InstallRequest {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(source, "source");
        }
    }

    /**
     * A member installed the recovery point for {@code epoch}, or could not.
     *
     * @param reason why not, for the log; empty when {@code ok}
     */
    record InstallReply(ObjectId object, long epoch, NodeId node, boolean ok, String reason) implements PeerMessage {
        public InstallReply {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * The owner {@code node} of {@code epoch} answers a drop request: the members left without the leaving {@code
     * follower} hold every record it confirmed, so the follower may leave E.
     */
    record DropReply(ObjectId object, long epoch, NodeId node, NodeId follower) implements PeerMessage {
        public DropReply {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(node, "node");
            Objects.requireNonNull(follower, "follower");
        }
    }

    /** Ask for records of {@code object} from {@code fromOffset}, at most about {@code maxBytes} of them. */
    record Fetch(ObjectId object, long fromOffset, int maxBytes) implements PeerMessage {
        public Fetch {
            Objects.requireNonNull(object, "object");
        }
    }

    /**
     * Records of {@code object} from {@code fromOffset}, each with the epoch it was written in: {@code epochs.get(i)}
     * is the epoch of {@code records.get(i)}.
     *
     * @throws IllegalArgumentException when the two lists differ in size
     */
    record FetchReply(ObjectId object, long fromOffset, List<byte[]> records, List<Long> epochs)
            implements PeerMessage {
        public FetchReply {
            Objects.requireNonNull(object, "object");
            records = List.copyOf(records);
            epochs = List.copyOf(epochs);
            if (records.size() != epochs.size()) {
                throw new IllegalArgumentException(
                        "records and epochs differ in size: " + records.size() + " != " + epochs.size());
            }
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof FetchReply that
                    && object.equals(that.object)
                    && fromOffset == that.fromOffset
                    && ByteArrays.equals(records, that.records)
                    && epochs.equals(that.epochs);
        }

        @Override
        public int hashCode() {
            return Objects.hash(object, fromOffset, ByteArrays.hashCode(records), epochs);
        }

        @Override
        public String toString() {
            return "FetchReply[object=" + object + ", fromOffset=" + fromOffset + ", records=" + records.size() + " ("
                    + ByteArrays.totalLength(records) + " octets), epochs=" + epochs + "]";
        }
    }

    /**
     * A message between the replicas of {@code object} on two brokers: the replication state machines' own {@link
     * io.ganglion.replication.PeerMessage} ({@code Replicate}, {@code Progress}, {@code Fetch}, {@code FetchReply},
     * {@code Snapshot}), which knows nothing of objects; this frame adds the object id. The record bodies in it
     * ({@code Record.Message.body()}) are not copied: the sender must not change them after handing the message to
     * {@link PeerLink#send}.
     */
    record Replication(ObjectId object, io.ganglion.replication.PeerMessage message) implements PeerMessage {
        public Replication {
            Objects.requireNonNull(object, "object");
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * The controller asks the receiver's replica of {@code request.object()} for a recovery step: seal, install or
     * catch up (the coordination module's {@link RecoveryRequest}, whose {@code node} is the receiver). The sender is
     * the controller the replica answers, with a {@link SealReply} to a seal, an {@link InstallReply} to an install
     * or a catch-up, and a {@link DropReply} to a drop. Replaces {@link SealRequest} and {@link InstallRequest}, which carry neither the install's list
     * of sources nor a catch-up.
     */
    record RecoveryCommand(RecoveryRequest request) implements PeerMessage {
        public RecoveryCommand {
            Objects.requireNonNull(request, "request");
        }
    }

    /**
     * A publish to a queue homed on the receiver ({@code queueId} is the queue's storage object id), from a broker a
     * client published through; answered by {@link PublishToHomeOutcome} with the same {@code sequence}. {@code
     * publisher} and {@code sequence} identify the publish for a replicated queue's log: sent again to a new owner, it
     * is found there instead of appended twice. {@code after} is the publish of the same publisher and queue the
     * receiver must have admitted first ({@code ForwardLanes.NONE} for none).
     */
    record PublishToHome(long publisher, long sequence, long after, long queueId, byte[] message)
            implements PeerMessage {
        @Override
        public boolean equals(Object other) {
            return other instanceof PublishToHome that
                    && publisher == that.publisher
                    && sequence == that.sequence
                    && after == that.after
                    && queueId == that.queueId
                    && java.util.Arrays.equals(message, that.message);
        }

        @Override
        public int hashCode() {
            return Objects.hash(publisher, sequence, after, queueId, java.util.Arrays.hashCode(message));
        }

        @Override
        public String toString() {
            return "PublishToHome[publisher=" + publisher + ", sequence=" + sequence + ", after=" + after + ", queueId="
                    + queueId + ", " + "message=" + message.length + " octets" + "]";
        }
    }

    /** The outcome of a {@link PublishToHome}: {@code replyCode} 0 when durable, else an AMQP reply code and text. */
    record PublishToHomeOutcome(long sequence, int replyCode, String text) implements PeerMessage {}

    /**
     * A consumer on the sender for a queue homed on the receiver; answered by a {@link QueueReply}. {@code start} is
     * where a stream's consumer reads from ({@link StreamStart#NEXT} for a queue, which ignores it).
     */
    record Subscribe(
            long requestId,
            long queueId,
            long consumerId,
            String tag,
            boolean noAck,
            boolean exclusive,
            int prefetch,
            StreamStart start)
            implements PeerMessage {
        public Subscribe {
            java.util.Objects.requireNonNull(start, "start");
        }
    }

    /** Home to consumer's broker: one message ({@code message} in the broker's message record form). */
    record Deliver(long consumerId, long offset, boolean redelivered, byte[] message) implements PeerMessage {
        @Override
        public boolean equals(Object other) {
            return other instanceof Deliver that
                    && consumerId == that.consumerId
                    && offset == that.offset
                    && redelivered == that.redelivered
                    && java.util.Arrays.equals(message, that.message);
        }

        @Override
        public int hashCode() {
            return Objects.hash(consumerId, offset, redelivered, java.util.Arrays.hashCode(message));
        }

        @Override
        public String toString() {
            return "Deliver[" + "consumerId=" + consumerId + ", " + "offset=" + offset + ", " + "redelivered="
                    + redelivered + ", " + "message=" + message.length + " octets" + "]";
        }
    }

    /** Acks, discards or requeues ({@code settlement}: the ordinal of the AMQP layer's Settlement) messages. */
    record Settle(long queueId, List<Long> offsets, int settlement) implements PeerMessage {
        public Settle {
            offsets = List.copyOf(offsets);
        }
    }

    /** The consumer's broker cancels a consumer (basic.cancel). */
    record CancelConsumer(long queueId, long consumerId) implements PeerMessage {}

    /** The home cancelled a consumer (its queue was deleted). */
    record ConsumerCancelled(long consumerId) implements PeerMessage {}

    /** A request about a queue homed on the receiver: counts, purge, get, delete checks; answered by {@link QueueReply}. */
    record QueueCall(long requestId, long queueId, int op, int flags) implements PeerMessage {}

    /**
     * The answer to a {@link Subscribe} or {@link QueueCall}: {@code replyCode} 0 or an AMQP reply code with its text;
     * counts, and for a get the message (offset -1 when the queue was empty).
     */
    record QueueReply(
            long requestId,
            int replyCode,
            String text,
            long count,
            long consumers,
            long offset,
            boolean redelivered,
            byte[] message)
            implements PeerMessage {
        @Override
        public boolean equals(Object other) {
            return other instanceof QueueReply that
                    && requestId == that.requestId
                    && replyCode == that.replyCode
                    && text.equals(that.text)
                    && count == that.count
                    && consumers == that.consumers
                    && offset == that.offset
                    && redelivered == that.redelivered
                    && java.util.Arrays.equals(message, that.message);
        }

        @Override
        public int hashCode() {
            return Objects.hash(
                    requestId,
                    replyCode,
                    text,
                    count,
                    consumers,
                    offset,
                    redelivered,
                    java.util.Arrays.hashCode(message));
        }

        @Override
        public String toString() {
            return "QueueReply[" + "requestId=" + requestId + ", " + "replyCode=" + replyCode + ", " + "text=" + text
                    + ", " + "count=" + count + ", " + "consumers=" + consumers + ", " + "offset=" + offset + ", "
                    + "redelivered=" + redelivered + ", " + "message=" + message.length + " octets" + "]";
        }
    }
}
