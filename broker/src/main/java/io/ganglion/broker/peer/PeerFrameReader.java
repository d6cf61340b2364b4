package io.ganglion.broker.peer;

import io.ganglion.broker.peer.PeerMessage.Append;
import io.ganglion.broker.peer.PeerMessage.CancelConsumer;
import io.ganglion.broker.peer.PeerMessage.ConsumerCancelled;
import io.ganglion.broker.peer.PeerMessage.Deliver;
import io.ganglion.broker.peer.PeerMessage.DropReply;
import io.ganglion.broker.peer.PeerMessage.Fetch;
import io.ganglion.broker.peer.PeerMessage.FetchReply;
import io.ganglion.broker.peer.PeerMessage.Forward;
import io.ganglion.broker.peer.PeerMessage.ForwardOutcome;
import io.ganglion.broker.peer.PeerMessage.Heartbeat;
import io.ganglion.broker.peer.PeerMessage.Hello;
import io.ganglion.broker.peer.PeerMessage.InstallReply;
import io.ganglion.broker.peer.PeerMessage.InstallRequest;
import io.ganglion.broker.peer.PeerMessage.Progress;
import io.ganglion.broker.peer.PeerMessage.PublishToHome;
import io.ganglion.broker.peer.PeerMessage.PublishToHomeOutcome;
import io.ganglion.broker.peer.PeerMessage.QueueCall;
import io.ganglion.broker.peer.PeerMessage.QueueReply;
import io.ganglion.broker.peer.PeerMessage.RecoveryCommand;
import io.ganglion.broker.peer.PeerMessage.Replication;
import io.ganglion.broker.peer.PeerMessage.SealReply;
import io.ganglion.broker.peer.PeerMessage.SealRequest;
import io.ganglion.broker.peer.PeerMessage.Settle;
import io.ganglion.broker.peer.PeerMessage.Subscribe;
import io.ganglion.broker.peer.PeerProtocolException.Reason;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.queues.StreamStart;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The decoding half of {@link PeerCodec}: one frame's body back to its {@link PeerMessage}, every fault a {@link
 * PeerProtocolException}. Pure; decoded messages own fresh arrays copied out of the body.
 */
final class PeerFrameReader {
    private PeerFrameReader() {}

    /**
     * Decodes one frame's body of type {@code type}: all of {@code body}'s readable octets, which it consumes.
     *
     * @throws PeerProtocolException with {@link Reason#UNKNOWN_TYPE}, {@link Reason#TRUNCATED} or {@link
     *     Reason#MALFORMED}; {@code body}'s reader index is then unspecified
     */
    static PeerMessage decodeBody(int type, ByteBuf body) {
        PeerMessage message;
        try {
            message = readMessage(type, body);
        } catch (IllegalArgumentException e) {
            // a value the message's constructor refuses: a blank node id, lists of different sizes
            throw new PeerProtocolException(
                    Reason.MALFORMED, "invalid " + PeerFrameDescriptor.name(type) + " frame: " + e.getMessage(), e);
        }
        if (body.isReadable()) {
            throw new PeerProtocolException(
                    Reason.MALFORMED,
                    body.readableBytes() + " octets left over after a " + PeerFrameDescriptor.name(type) + " body");
        }
        return message;
    }

    private static PeerMessage readMessage(int type, ByteBuf body) {
        return switch (type) {
            case PeerFrameDescriptor.TYPE_HELLO ->
                new Hello(readString(body, "cluster name"), readNode(body), readIncarnation(body));
            case PeerFrameDescriptor.TYPE_HEARTBEAT ->
                new Heartbeat(readNode(body), readIncarnation(body), readBoolean(body), readLong(body));
            case PeerFrameDescriptor.TYPE_FORWARD ->
                new Forward(
                        readNode(body),
                        readLong(body),
                        readLong(body),
                        readLong(body),
                        readObject(body),
                        readBytes(body));
            case PeerFrameDescriptor.TYPE_FORWARD_OUTCOME ->
                new ForwardOutcome(
                        readLong(body),
                        readLong(body),
                        readObject(body),
                        readBoolean(body),
                        readString(body, "reason"));
            case PeerFrameDescriptor.TYPE_APPEND ->
                new Append(readObject(body), readLong(body), readLong(body), readByteList(body), readLong(body));
            case PeerFrameDescriptor.TYPE_PROGRESS ->
                new Progress(readObject(body), readLong(body), readNode(body), readIncarnation(body), readLong(body));
            case PeerFrameDescriptor.TYPE_SEAL_REQUEST -> new SealRequest(readObject(body), readLong(body));
            case PeerFrameDescriptor.TYPE_SEAL_REPLY ->
                new SealReply(
                        readObject(body),
                        readLong(body),
                        readLong(body),
                        readLong(body),
                        readLong(body),
                        readNode(body));
            case PeerFrameDescriptor.TYPE_INSTALL_REQUEST ->
                new InstallRequest(readObject(body), readLong(body), readLong(body), readLong(body), readNode(body));
            case PeerFrameDescriptor.TYPE_INSTALL_REPLY ->
                new InstallReply(
                        readObject(body),
                        readLong(body),
                        readNode(body),
                        readBoolean(body),
                        readString(body, "reason"));
            case PeerFrameDescriptor.TYPE_DROP_REPLY ->
                new DropReply(readObject(body), readLong(body), readNode(body), readNode(body));
            case PeerFrameDescriptor.TYPE_FETCH -> new Fetch(readObject(body), readLong(body), readInt(body));
            case PeerFrameDescriptor.TYPE_FETCH_REPLY ->
                new FetchReply(readObject(body), readLong(body), readByteList(body), readLongList(body));
            case PeerFrameDescriptor.TYPE_REPLICATION -> new Replication(readObject(body), readReplication(body));
            case PeerFrameDescriptor.TYPE_RECOVERY_COMMAND -> new RecoveryCommand(readRecovery(body));
            case PeerFrameDescriptor.TYPE_PUBLISH_TO_HOME ->
                new PublishToHome(readLong(body), readLong(body), readLong(body), readLong(body), readBytes(body));
            case PeerFrameDescriptor.TYPE_PUBLISH_TO_HOME_OUTCOME ->
                new PublishToHomeOutcome(readLong(body), readInt(body), readString(body, "text"));
            case PeerFrameDescriptor.TYPE_SUBSCRIBE ->
                new Subscribe(
                        readLong(body),
                        readLong(body),
                        readLong(body),
                        readString(body, "consumer tag"),
                        readBoolean(body),
                        readBoolean(body),
                        readInt(body),
                        readStreamStart(body));
            case PeerFrameDescriptor.TYPE_DELIVER ->
                new Deliver(readLong(body), readLong(body), readBoolean(body), readBytes(body));
            case PeerFrameDescriptor.TYPE_SETTLE -> new Settle(readLong(body), readLongList(body), readInt(body));
            case PeerFrameDescriptor.TYPE_CANCEL_CONSUMER -> new CancelConsumer(readLong(body), readLong(body));
            case PeerFrameDescriptor.TYPE_CONSUMER_CANCELLED -> new ConsumerCancelled(readLong(body));
            case PeerFrameDescriptor.TYPE_QUEUE_CALL ->
                new QueueCall(readLong(body), readLong(body), readInt(body), readInt(body));
            case PeerFrameDescriptor.TYPE_QUEUE_REPLY ->
                new QueueReply(
                        readLong(body),
                        readInt(body),
                        readString(body, "text"),
                        readLong(body),
                        readLong(body),
                        readLong(body),
                        readBoolean(body),
                        readBytes(body));
            default -> throw unknownType(type);
        };
    }

    private static void need(ByteBuf body, long octets, String what) {
        if (body.readableBytes() < octets) {
            throw truncated(body, octets, what);
        }
    }

    private static long readLong(ByteBuf body) {
        need(body, Long.BYTES, "int64");
        return body.readLong();
    }

    private static int readInt(ByteBuf body) {
        need(body, Integer.BYTES, "int32");
        return body.readInt();
    }

    private static boolean readBoolean(ByteBuf body) {
        need(body, 1, "bool");
        int value = body.readUnsignedByte();
        if (value > 1) {
            throw new PeerProtocolException(Reason.MALFORMED, "bool octet must be 0 or 1, was " + value);
        }
        return value == 1;
    }

    private static StreamStart readStreamStart(ByteBuf body) {
        need(body, 1 + Long.BYTES, "stream start");
        int kind = body.readUnsignedByte();
        long offset = body.readLong();
        if (kind >= StreamStart.Kind.values().length) {
            throw new PeerProtocolException(Reason.MALFORMED, "unknown stream start kind " + kind);
        }
        try {
            return new StreamStart(StreamStart.Kind.values()[kind], offset);
        } catch (IllegalArgumentException e) {
            throw new PeerProtocolException(Reason.MALFORMED, e.getMessage());
        }
    }

    private static String readString(ByteBuf body, String what) {
        need(body, Short.BYTES, what + " length");
        int length = body.readUnsignedShort();
        need(body, length, what);
        String value = body.toString(body.readerIndex(), length, StandardCharsets.UTF_8);
        body.skipBytes(length);
        return value;
    }

    private static NodeId readNode(ByteBuf body) {
        return new NodeId(readString(body, "node id"));
    }

    private static Incarnation readIncarnation(ByteBuf body) {
        return new Incarnation(readLong(body));
    }

    private static ObjectId readObject(ByteBuf body) {
        return new ObjectId(readString(body, "vhost"), readString(body, "object name"));
    }

    private static int readCount(ByteBuf body, int minElementLength, String what) {
        int count = readInt(body);
        if (count < 0) {
            throw new PeerProtocolException(Reason.MALFORMED, what + " count " + count + " is negative");
        }
        // a bogus count must not make us allocate: each element needs at least minElementLength octets
        need(body, (long) count * minElementLength, what);
        return count;
    }

    private static byte[] readBytes(ByteBuf body) {
        int length = readCount(body, 1, "byte array");
        byte[] value = new byte[length];
        body.readBytes(value);
        return value;
    }

    private static List<byte[]> readByteList(ByteBuf body) {
        int count = readCount(body, Integer.BYTES, "byte array list");
        List<byte[]> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            values.add(readBytes(body));
        }
        return values;
    }

    /** A settle or returned record's offsets: at least one. */
    private static long[] readSettled(ByteBuf body) {
        int count = readCount(body, Long.BYTES, "settled offsets");
        if (count == 0) {
            throw new PeerProtocolException(Reason.MALFORMED, "a settle or returned record with no offset");
        }
        long[] settled = new long[count];
        for (int i = 0; i < count; i++) {
            settled[i] = body.readLong();
        }
        return settled;
    }

    private static List<Long> readLongList(ByteBuf body) {
        int count = readCount(body, Long.BYTES, "int64 list");
        List<Long> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            values.add(body.readLong());
        }
        return values;
    }

    private static io.ganglion.replication.PeerMessage readReplication(ByteBuf body) {
        int kind = readKind(body, "replication message");
        return switch (kind) {
            case PeerFrameDescriptor.REPLICATION_REPLICATE ->
                new io.ganglion.replication.PeerMessage.Replicate(
                        readEpoch(body), readLong(body), readRecords(body), readLong(body), readLong(body));
            case PeerFrameDescriptor.REPLICATION_PROGRESS ->
                new io.ganglion.replication.PeerMessage.Progress(
                        readEpoch(body),
                        readIncarnation(body),
                        readHistory(body),
                        readLong(body),
                        readLong(body),
                        readBoolean(body),
                        readLong(body));
            case PeerFrameDescriptor.REPLICATION_FETCH ->
                new io.ganglion.replication.PeerMessage.Fetch(
                        readEpoch(body), readHistory(body), readLong(body), readPosition(body));
            case PeerFrameDescriptor.REPLICATION_FETCH_REPLY ->
                new io.ganglion.replication.PeerMessage.FetchReply(readEpoch(body), readLong(body), readRecords(body));
            case PeerFrameDescriptor.REPLICATION_SNAPSHOT ->
                new io.ganglion.replication.PeerMessage.Snapshot(readEpoch(body), readLong(body), readHistory(body));
            default -> throw unknownKind("replication message", kind);
        };
    }

    private static RecoveryRequest readRecovery(ByteBuf body) {
        int kind = readKind(body, "recovery request");
        ObjectId object = readObject(body);
        Epoch epoch = readEpoch(body);
        NodeId node = readNode(body);
        return switch (kind) {
            case PeerFrameDescriptor.RECOVERY_SEAL -> new RecoveryRequest.Seal(object, epoch, node);
            case PeerFrameDescriptor.RECOVERY_INSTALL -> {
                LogPosition point = readPosition(body);
                int count = readCount(body, Short.BYTES, "node id list");
                List<NodeId> sources = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    sources.add(readNode(body));
                }
                yield new RecoveryRequest.Install(object, epoch, node, point, sources);
            }
            case PeerFrameDescriptor.RECOVERY_CATCH_UP ->
                new RecoveryRequest.CatchUp(object, epoch, node, readNode(body));
            case PeerFrameDescriptor.RECOVERY_DROP -> new RecoveryRequest.Drop(object, epoch, node, readNode(body));
            default -> throw unknownKind("recovery request", kind);
        };
    }

    private static int readKind(ByteBuf body, String what) {
        need(body, 1, what + " kind");
        return body.readUnsignedByte();
    }

    private static Epoch readEpoch(ByteBuf body) {
        return Epoch.of(readLong(body)); // a negative one: IllegalArgumentException, malformed
    }

    private static LogPosition readPosition(ByteBuf body) {
        return new LogPosition(readEpoch(body), readLong(body));
    }

    private static EpochHistory readHistory(ByteBuf body) {
        int count = readCount(body, 2 * Long.BYTES, "epoch history");
        long[] pairs = new long[2 * count];
        for (int i = 0; i < pairs.length; i++) {
            pairs[i] = body.readLong();
        }
        return EpochHistory.of(pairs); // out of order: IllegalArgumentException, malformed
    }

    private static List<Record> readRecords(ByteBuf body) {
        int count = readCount(body, PeerFrameDescriptor.RECORD_HEADER_LENGTH, "record list");
        List<Record> records = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int kind = readKind(body, "record");
            Epoch epoch = readEpoch(body);
            long offset = readLong(body);
            records.add(
                    switch (kind) {
                        case PeerFrameDescriptor.RECORD_EPOCH_START -> new Record.EpochStart(epoch, offset);
                        case PeerFrameDescriptor.RECORD_MESSAGE -> readMessage(body, epoch, offset);
                        case PeerFrameDescriptor.RECORD_SETTLE -> new Record.Settle(epoch, offset, readSettled(body));
                        case PeerFrameDescriptor.RECORD_RETURNED ->
                            new Record.Returned(epoch, offset, readSettled(body));
                        case PeerFrameDescriptor.RECORD_DEAD_LETTERED -> {
                            int reason = readKind(body, "dead-letter reason");
                            yield new Record.DeadLettered(epoch, offset, readSettled(body), reason);
                        }
                        default -> throw unknownKind("record", kind);
                    });
        }
        return records;
    }

    private static Record.Message readMessage(ByteBuf body, Epoch epoch, long offset) {
        PublishId id = new PublishId(readLong(body), readLong(body));
        long timestampMs = readLong(body);
        return new Record.Message(epoch, offset, id, ByteBuffer.wrap(readBytes(body)), timestampMs);
    }

    private static PeerProtocolException unknownKind(String what, int kind) {
        return new PeerProtocolException(Reason.MALFORMED, "unknown " + what + " kind 0x" + Integer.toHexString(kind));
    }

    private static PeerProtocolException truncated(ByteBuf body, long octets, String what) {
        return new PeerProtocolException(
                Reason.TRUNCATED,
                "body ends before its " + what + ": " + octets + " octets needed, " + body.readableBytes() + " left");
    }

    private static PeerProtocolException unknownType(int type) {
        return new PeerProtocolException(Reason.UNKNOWN_TYPE, "unknown frame type 0x" + Integer.toHexString(type));
    }
}
