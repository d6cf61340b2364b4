package io.ganglion.broker.peer;

import static io.ganglion.broker.peer.PeerFrameDescriptor.LENGTH_FIELD_LENGTH;
import static io.ganglion.broker.peer.PeerFrameDescriptor.STRING_MAX_LENGTH;

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
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.Record;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The encoding half of {@link PeerCodec}: every {@link PeerMessage} to one frame in the layout of {@link
 * PeerFrameDescriptor}, and the frame's length computed without writing it. Pure; {@link PeerCodec} holds the public
 * entry points.
 */
final class PeerFrameWriter {
    private PeerFrameWriter() {}

    /**
     * Writes {@code message} as one frame at {@code out}'s writer index. Does not check the max frame length.
     *
     * @throws IllegalArgumentException when a string is longer than {@link PeerFrameDescriptor#STRING_MAX_LENGTH}
     *     octets; {@code out} may then hold part of the frame
     */
    static void encode(PeerMessage message, ByteBuf out) {
        int start = out.writerIndex();
        out.writeInt(0); // patched below, once the body's length is known
        out.writeByte(PeerFrameDescriptor.typeOf(message));
        switch (message) {
            case Hello m -> writeHello(out, m);
            case Heartbeat m -> writeHeartbeat(out, m);
            case Forward m -> writeForward(out, m);
            case ForwardOutcome m -> writeForwardOutcome(out, m);
            case Append m -> writeAppend(out, m);
            case Progress m -> writeProgress(out, m);
            case SealRequest m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
            }
            case SealReply m -> writeSealReply(out, m);
            case InstallRequest m -> writeInstallRequest(out, m);
            case InstallReply m -> writeInstallReply(out, m);
            case DropReply m -> writeDropReply(out, m);
            case Fetch m -> writeFetch(out, m);
            case FetchReply m -> writeFetchReply(out, m);
            case Replication m -> {
                writeObject(out, m.object());
                writeReplication(out, m.message());
            }
            case RecoveryCommand m -> writeRecovery(out, m.request());
            case PublishToHome m -> writePublishToHome(out, m);
            case PublishToHomeOutcome m -> writePublishToHomeOutcome(out, m);
            case Subscribe m -> writeSubscribe(out, m);
            case Deliver m -> writeDeliver(out, m);
            case Settle m -> writeSettle(out, m);
            case CancelConsumer m -> {
                out.writeLong(m.queueId());
                out.writeLong(m.consumerId());
            }
            case ConsumerCancelled m -> out.writeLong(m.consumerId());
            case QueueCall m -> writeQueueCall(out, m);
            case QueueReply m -> writeQueueReply(out, m);
        }
        out.setInt(start, out.writerIndex() - start - LENGTH_FIELD_LENGTH);
    }

    /** The length field {@link #encode} writes for {@code message}: type and body octets. */
    static int encodedLength(PeerMessage message) {
        long body = switch (message) {
            case Hello m -> stringLength(m.clusterName()) + nodeLength(m.node()) + Long.BYTES;
            case Heartbeat m -> nodeLength(m.node()) + Long.BYTES + 1 + Long.BYTES;
            case Forward m ->
                nodeLength(m.origin())
                        + 3L * Long.BYTES
                        + objectLength(m.object())
                        + Integer.BYTES
                        + m.payload().length;
            case ForwardOutcome m -> 2L * Long.BYTES + objectLength(m.object()) + 1 + stringLength(m.reason());
            case Append m -> objectLength(m.object()) + 3L * Long.BYTES + byteListLength(m.records());
            case Progress m -> objectLength(m.object()) + 3L * Long.BYTES + nodeLength(m.node());
            case SealRequest m -> objectLength(m.object()) + Long.BYTES;
            case SealReply m -> objectLength(m.object()) + 4L * Long.BYTES + nodeLength(m.node());
            case InstallRequest m -> objectLength(m.object()) + 3L * Long.BYTES + nodeLength(m.source());
            case InstallReply m ->
                objectLength(m.object()) + Long.BYTES + nodeLength(m.node()) + 1 + stringLength(m.reason());
            case DropReply m -> objectLength(m.object()) + Long.BYTES + nodeLength(m.node()) + nodeLength(m.follower());
            case Fetch m -> objectLength(m.object()) + Long.BYTES + Integer.BYTES;
            case FetchReply m ->
                objectLength(m.object())
                        + Long.BYTES
                        + byteListLength(m.records())
                        + Integer.BYTES
                        + (long) m.epochs().size() * Long.BYTES;
            case Replication m -> objectLength(m.object()) + replicationLength(m.message());
            case RecoveryCommand m -> recoveryLength(m.request());
            case PublishToHome m -> 4L * Long.BYTES + Integer.BYTES + m.message().length;
            case PublishToHomeOutcome m -> Long.BYTES + Integer.BYTES + stringLength(m.text());
            case Subscribe m -> 4L * Long.BYTES + stringLength(m.tag()) + 3 + Integer.BYTES;
            case Deliver m -> 2L * Long.BYTES + 1 + Integer.BYTES + m.message().length;
            case Settle m -> Long.BYTES + Integer.BYTES + (long) m.offsets().size() * Long.BYTES + Integer.BYTES;
            case CancelConsumer m -> 2L * Long.BYTES;
            case ConsumerCancelled m -> Long.BYTES;
            case QueueCall m -> 2L * Long.BYTES + 2L * Integer.BYTES;
            case QueueReply m ->
                Long.BYTES
                        + Integer.BYTES
                        + stringLength(m.text())
                        + 3L * Long.BYTES
                        + 1
                        + Integer.BYTES
                        + m.message().length;
        };
        long length = PeerFrameDescriptor.TYPE_LENGTH + body;
        return length > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) length;
    }

    private static void writeHello(ByteBuf out, Hello m) {
        writeString(out, m.clusterName());
        writeNode(out, m.node());
        out.writeLong(m.incarnation().value());
    }

    private static void writeHeartbeat(ByteBuf out, Heartbeat m) {
        writeNode(out, m.node());
        out.writeLong(m.incarnation().value());
        writeBoolean(out, m.draining());
        out.writeLong(m.sentAtMillis());
    }

    private static void writeForward(ByteBuf out, Forward m) {
        writeNode(out, m.origin());
        out.writeLong(m.publisherId());
        out.writeLong(m.sequence());
        out.writeLong(m.epoch());
        writeObject(out, m.object());
        writeBytes(out, m.payload());
    }

    private static void writeForwardOutcome(ByteBuf out, ForwardOutcome m) {
        out.writeLong(m.publisherId());
        out.writeLong(m.sequence());
        writeObject(out, m.object());
        writeBoolean(out, m.confirmed());
        writeString(out, m.reason());
    }

    private static void writeAppend(ByteBuf out, Append m) {
        writeObject(out, m.object());
        out.writeLong(m.epoch());
        out.writeLong(m.firstOffset());
        writeByteList(out, m.records());
        out.writeLong(m.commitOffset());
    }

    private static void writeProgress(ByteBuf out, Progress m) {
        writeObject(out, m.object());
        out.writeLong(m.epoch());
        writeNode(out, m.node());
        out.writeLong(m.incarnation().value());
        out.writeLong(m.durableOffset());
    }

    private static void writeSealReply(ByteBuf out, SealReply m) {
        writeObject(out, m.object());
        out.writeLong(m.sealedEpoch());
        out.writeLong(m.lastEpoch());
        out.writeLong(m.lastOffset());
        out.writeLong(m.durableOffset());
        writeNode(out, m.node());
    }

    private static void writeInstallRequest(ByteBuf out, InstallRequest m) {
        writeObject(out, m.object());
        out.writeLong(m.epoch());
        out.writeLong(m.recoveryPointEpoch());
        out.writeLong(m.recoveryPointOffset());
        writeNode(out, m.source());
    }

    private static void writeInstallReply(ByteBuf out, InstallReply m) {
        writeObject(out, m.object());
        out.writeLong(m.epoch());
        writeNode(out, m.node());
        writeBoolean(out, m.ok());
        writeString(out, m.reason());
    }

    private static void writeDropReply(ByteBuf out, DropReply m) {
        writeObject(out, m.object());
        out.writeLong(m.epoch());
        writeNode(out, m.node());
        writeNode(out, m.follower());
    }

    private static void writeFetch(ByteBuf out, Fetch m) {
        writeObject(out, m.object());
        out.writeLong(m.fromOffset());
        out.writeInt(m.maxBytes());
    }

    private static void writeFetchReply(ByteBuf out, FetchReply m) {
        writeObject(out, m.object());
        out.writeLong(m.fromOffset());
        writeByteList(out, m.records());
        out.writeInt(m.epochs().size());
        for (long epoch : m.epochs()) {
            out.writeLong(epoch);
        }
    }

    private static void writePublishToHome(ByteBuf out, PublishToHome m) {
        out.writeLong(m.publisher());
        out.writeLong(m.sequence());
        out.writeLong(m.after());
        out.writeLong(m.queueId());
        writeBytes(out, m.message());
    }

    private static void writePublishToHomeOutcome(ByteBuf out, PublishToHomeOutcome m) {
        out.writeLong(m.sequence());
        out.writeInt(m.replyCode());
        writeString(out, m.text());
    }

    private static void writeSubscribe(ByteBuf out, Subscribe m) {
        out.writeLong(m.requestId());
        out.writeLong(m.queueId());
        out.writeLong(m.consumerId());
        writeString(out, m.tag());
        writeBoolean(out, m.noAck());
        writeBoolean(out, m.exclusive());
        out.writeInt(m.prefetch());
        out.writeByte(m.start().kind().ordinal());
        out.writeLong(m.start().value());
    }

    private static void writeDeliver(ByteBuf out, Deliver m) {
        out.writeLong(m.consumerId());
        out.writeLong(m.offset());
        writeBoolean(out, m.redelivered());
        writeBytes(out, m.message());
    }

    private static void writeSettle(ByteBuf out, Settle m) {
        out.writeLong(m.queueId());
        out.writeInt(m.offsets().size());
        for (long offset : m.offsets()) {
            out.writeLong(offset);
        }
        out.writeInt(m.settlement());
    }

    private static void writeQueueCall(ByteBuf out, QueueCall m) {
        out.writeLong(m.requestId());
        out.writeLong(m.queueId());
        out.writeInt(m.op());
        out.writeInt(m.flags());
    }

    private static void writeQueueReply(ByteBuf out, QueueReply m) {
        out.writeLong(m.requestId());
        out.writeInt(m.replyCode());
        writeString(out, m.text());
        out.writeLong(m.count());
        out.writeLong(m.consumers());
        out.writeLong(m.offset());
        writeBoolean(out, m.redelivered());
        writeBytes(out, m.message());
    }

    private static void writeString(ByteBuf out, String value) {
        int length = ByteBufUtil.utf8Bytes(value);
        if (length > STRING_MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "string of " + length + " UTF-8 octets exceeds the peer link's " + STRING_MAX_LENGTH);
        }
        out.writeShort(length);
        ByteBufUtil.reserveAndWriteUtf8(out, value, length);
    }

    private static void writeNode(ByteBuf out, NodeId node) {
        writeString(out, node.value());
    }

    private static void writeObject(ByteBuf out, ObjectId object) {
        writeString(out, object.vhost());
        writeString(out, object.name());
    }

    private static void writeBoolean(ByteBuf out, boolean value) {
        out.writeByte(value ? 1 : 0);
    }

    private static void writeBytes(ByteBuf out, byte[] value) {
        out.writeInt(value.length);
        out.writeBytes(value);
    }

    private static void writeByteList(ByteBuf out, List<byte[]> values) {
        out.writeInt(values.size());
        for (byte[] value : values) {
            writeBytes(out, value);
        }
    }

    private static long stringLength(String value) {
        return Short.BYTES + ByteBufUtil.utf8Bytes(value);
    }

    private static long nodeLength(NodeId node) {
        return stringLength(node.value());
    }

    private static long objectLength(ObjectId object) {
        return stringLength(object.vhost()) + stringLength(object.name());
    }

    private static long byteListLength(List<byte[]> values) {
        long length = Integer.BYTES;
        for (byte[] value : values) {
            length += Integer.BYTES + value.length;
        }
        return length;
    }

    private static void writeReplication(ByteBuf out, io.ganglion.replication.PeerMessage message) {
        switch (message) {
            case io.ganglion.replication.PeerMessage.Replicate m -> {
                out.writeByte(PeerFrameDescriptor.REPLICATION_REPLICATE);
                out.writeLong(m.epoch().value());
                out.writeLong(m.truncateFrom());
                writeRecords(out, m.records());
                out.writeLong(m.sentMs());
                out.writeLong(m.discardBelow());
            }
            case io.ganglion.replication.PeerMessage.Progress m -> {
                out.writeByte(PeerFrameDescriptor.REPLICATION_PROGRESS);
                out.writeLong(m.epoch().value());
                out.writeLong(m.incarnation().value());
                writeHistory(out, m.history());
                out.writeLong(m.end());
                out.writeLong(m.durable());
                writeBoolean(out, m.resync());
                out.writeLong(m.echoMs());
            }
            case io.ganglion.replication.PeerMessage.Fetch m -> {
                out.writeByte(PeerFrameDescriptor.REPLICATION_FETCH);
                out.writeLong(m.installEpoch().value());
                writeHistory(out, m.history());
                out.writeLong(m.end());
                writePosition(out, m.upTo());
            }
            case io.ganglion.replication.PeerMessage.FetchReply m -> {
                out.writeByte(PeerFrameDescriptor.REPLICATION_FETCH_REPLY);
                out.writeLong(m.installEpoch().value());
                out.writeLong(m.truncateFrom());
                writeRecords(out, m.records());
            }
            case io.ganglion.replication.PeerMessage.Snapshot m -> {
                out.writeByte(PeerFrameDescriptor.REPLICATION_SNAPSHOT);
                out.writeLong(m.epoch().value());
                out.writeLong(m.start());
                writeHistory(out, m.history());
            }
        }
    }

    private static long replicationLength(io.ganglion.replication.PeerMessage message) {
        return 1
                + switch (message) {
                    case io.ganglion.replication.PeerMessage.Replicate m ->
                        4L * Long.BYTES + recordsLength(m.records());
                    case io.ganglion.replication.PeerMessage.Progress m ->
                        2L * Long.BYTES + historyLength(m.history()) + 3L * Long.BYTES + 1;
                    case io.ganglion.replication.PeerMessage.Fetch m ->
                        Long.BYTES + historyLength(m.history()) + Long.BYTES + 2L * Long.BYTES;
                    case io.ganglion.replication.PeerMessage.FetchReply m ->
                        2L * Long.BYTES + recordsLength(m.records());
                    case io.ganglion.replication.PeerMessage.Snapshot m -> 2L * Long.BYTES + historyLength(m.history());
                };
    }

    private static void writeRecovery(ByteBuf out, RecoveryRequest request) {
        out.writeByte(
                switch (request) {
                    case RecoveryRequest.Seal r -> PeerFrameDescriptor.RECOVERY_SEAL;
                    case RecoveryRequest.Install r -> PeerFrameDescriptor.RECOVERY_INSTALL;
                    case RecoveryRequest.CatchUp r -> PeerFrameDescriptor.RECOVERY_CATCH_UP;
                    case RecoveryRequest.Drop r -> PeerFrameDescriptor.RECOVERY_DROP;
                });
        writeObject(out, request.object());
        switch (request) {
            case RecoveryRequest.Seal r -> {
                out.writeLong(r.epoch().value());
                writeNode(out, r.node());
            }
            case RecoveryRequest.Install r -> {
                out.writeLong(r.epoch().value());
                writeNode(out, r.node());
                writePosition(out, r.point());
                out.writeInt(r.sources().size());
                for (NodeId source : r.sources()) {
                    writeNode(out, source);
                }
            }
            case RecoveryRequest.CatchUp r -> {
                out.writeLong(r.epoch().value());
                writeNode(out, r.node());
                writeNode(out, r.owner());
            }
            case RecoveryRequest.Drop r -> {
                out.writeLong(r.epoch().value());
                writeNode(out, r.node());
                writeNode(out, r.follower());
            }
        }
    }

    private static long recoveryLength(RecoveryRequest request) {
        long common = 1 + objectLength(request.object()) + Long.BYTES + nodeLength(request.node());
        return common
                + switch (request) {
                    case RecoveryRequest.Seal r -> 0L;
                    case RecoveryRequest.Install r -> {
                        long sources = Integer.BYTES;
                        for (NodeId source : r.sources()) {
                            sources += nodeLength(source);
                        }
                        yield 2L * Long.BYTES + sources;
                    }
                    case RecoveryRequest.CatchUp r -> nodeLength(r.owner());
                    case RecoveryRequest.Drop r -> nodeLength(r.follower());
                };
    }

    private static void writePosition(ByteBuf out, LogPosition position) {
        out.writeLong(position.epoch().value());
        out.writeLong(position.offset());
    }

    private static void writeHistory(ByteBuf out, EpochHistory history) {
        List<long[]> entries = history.entries();
        out.writeInt(entries.size());
        for (long[] entry : entries) {
            out.writeLong(entry[0]);
            out.writeLong(entry[1]);
        }
    }

    private static long historyLength(EpochHistory history) {
        return Integer.BYTES + (long) history.entries().size() * 2 * Long.BYTES;
    }

    private static void writeRecords(ByteBuf out, List<Record> records) {
        out.writeInt(records.size());
        for (Record record : records) {
            switch (record) {
                case Record.EpochStart r -> {
                    out.writeByte(PeerFrameDescriptor.RECORD_EPOCH_START);
                    out.writeLong(r.epoch().value());
                    out.writeLong(r.offset());
                }
                case Record.Message r -> {
                    out.writeByte(PeerFrameDescriptor.RECORD_MESSAGE);
                    out.writeLong(r.epoch().value());
                    out.writeLong(r.offset());
                    out.writeLong(r.id().publisher());
                    out.writeLong(r.id().sequence());
                    out.writeLong(r.timestampMs());
                    ByteBuffer body = r.body().duplicate();
                    out.writeInt(body.remaining());
                    out.writeBytes(body);
                }
                case Record.Settle r -> {
                    writeRecordHeader(out, PeerFrameDescriptor.RECORD_SETTLE, r);
                    writeLongs(out, r.settled());
                }
                case Record.DeadLettered r -> {
                    writeRecordHeader(out, PeerFrameDescriptor.RECORD_DEAD_LETTERED, r);
                    out.writeByte(r.reason());
                    writeLongs(out, r.offsets());
                }
                case Record.Returned r -> {
                    writeRecordHeader(out, PeerFrameDescriptor.RECORD_RETURNED, r);
                    writeLongs(out, r.returned());
                }
            }
        }
    }

    private static void writeRecordHeader(ByteBuf out, int kind, Record record) {
        out.writeByte(kind);
        out.writeLong(record.epoch().value());
        out.writeLong(record.offset());
    }

    /** A record's offsets: their count, then each. */
    private static void writeLongs(ByteBuf out, long[] values) {
        out.writeInt(values.length);
        for (long value : values) {
            out.writeLong(value);
        }
    }

    private static long recordsLength(List<Record> records) {
        long length = Integer.BYTES;
        for (Record record : records) {
            length += PeerFrameDescriptor.RECORD_HEADER_LENGTH
                    + switch (record) {
                        case Record.EpochStart r -> 0L;
                        case Record.Message r ->
                            3L * Long.BYTES + Integer.BYTES + r.body().remaining();
                        case Record.Settle r -> Integer.BYTES + (long) r.settled().length * Long.BYTES;
                        case Record.Returned r -> Integer.BYTES + (long) r.returned().length * Long.BYTES;
                        case Record.DeadLettered r -> 1L + Integer.BYTES + (long) r.offsets().length * Long.BYTES;
                    };
        }
        return length;
    }

    static IllegalArgumentException tooLongToSend(PeerMessage message, int length, int maxFrameLength) {
        return new IllegalArgumentException("a " + PeerFrameDescriptor.name(PeerFrameDescriptor.typeOf(message))
                + " frame of length " + length + " exceeds the max frame length " + maxFrameLength);
    }
}
