package io.ganglion.broker.peer;

import static io.ganglion.broker.peer.PeerFrameDescriptor.BODY_OFFSET;
import static io.ganglion.broker.peer.PeerFrameDescriptor.HEADER_LENGTH;
import static io.ganglion.broker.peer.PeerFrameDescriptor.LENGTH_FIELD_LENGTH;
import static io.ganglion.broker.peer.PeerFrameDescriptor.MIN_LENGTH;
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
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.MessageToByteEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The one codec of the peer link: every {@link PeerMessage} to a frame and back, in the layout of {@link
 * PeerFrameDescriptor}.
 *
 * <pre>
 *   bytes ──decode──> PeerMessage ... ──fault──> PeerProtocolException thrown, then DISCARDING (all input skipped)
 *   PeerMessage ──encode──> one frame, in a buffer of exactly its size
 * </pre>
 *
 * <p>Decoding faults are thrown as {@link PeerProtocolException} with a {@link Reason}; Netty passes it to {@code
 * exceptionCaught} after every message decoded before it. The size limit is checked on the length field, before the
 * body is buffered, so a peer cannot make us hold more than one max-size frame. After a fault the framing can no
 * longer be trusted, so the decoder skips all further input; the connection handler closes the link.
 *
 * <p>Encoding a message whose frame would exceed the max frame length fails the write with an {@code
 * EncoderException} (caused by {@link IllegalArgumentException}): the peer would refuse it anyway.
 *
 * <p>Decoded messages own fresh arrays copied out of the frame; nothing refers to the channel's buffers after decode.
 *
 * <p>Implementation notes: a {@link CombinedChannelDuplexHandler} of a {@link Decoder} and an {@link Encoder}, as
 * Netty's own codecs are. One instance per channel (not sharable: the decoder holds the cumulation and the state), used
 * on the channel's event loop only. The static {@link #encode(PeerMessage, ByteBuf)}, {@link #decodeBody} and {@link
 * #encodedLength} are pure and usable anywhere.
 */
public final class PeerCodec extends CombinedChannelDuplexHandler<PeerCodec.Decoder, PeerCodec.Encoder> {
    private final int maxFrameLength;

    /** A codec for frames up to {@link PeerFrameDescriptor#DEFAULT_MAX_FRAME_LENGTH}. */
    public PeerCodec() {
        this(PeerFrameDescriptor.DEFAULT_MAX_FRAME_LENGTH);
    }

    /**
     * @param maxFrameLength the largest length field accepted and sent
     * @throws IllegalArgumentException when outside what {@link PeerFrameDescriptor#checkMaxFrameLength} allows
     */
    public PeerCodec(int maxFrameLength) {
        this.maxFrameLength = PeerFrameDescriptor.checkMaxFrameLength(maxFrameLength);
        init(new Decoder(maxFrameLength), new Encoder(maxFrameLength));
    }

    public int maxFrameLength() {
        return maxFrameLength;
    }

    /** Whether a fault was seen and all further input is skipped. On the event loop. */
    public boolean isDiscarding() {
        return inboundHandler().discarding;
    }

    /** The inbound half: frames to messages. */
    static final class Decoder extends ByteToMessageDecoder {
        private final int maxFrameLength;
        private boolean discarding;

        Decoder(int maxFrameLength) {
            this.maxFrameLength = maxFrameLength;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (discarding) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (in.readableBytes() < HEADER_LENGTH) {
                return;
            }
            int start = in.readerIndex();
            long length = PeerFrameDescriptor.length(in, start);
            if (length < MIN_LENGTH) {
                throw discard(
                        in,
                        new PeerProtocolException(
                                Reason.BAD_LENGTH, "frame length " + length + " is below " + MIN_LENGTH));
            }
            if (length > maxFrameLength) {
                throw discard(
                        in,
                        new PeerProtocolException(
                                Reason.TOO_LONG,
                                "frame length " + length + " exceeds the max frame length " + maxFrameLength));
            }
            int frameSize = PeerFrameDescriptor.frameSize((int) length);
            if (in.readableBytes() < frameSize) {
                return;
            }
            int type = PeerFrameDescriptor.type(in, start);
            ByteBuf body = in.slice(start + BODY_OFFSET, (int) length - PeerFrameDescriptor.TYPE_LENGTH);
            in.skipBytes(frameSize);
            try {
                out.add(decodeBody(type, body));
            } catch (PeerProtocolException e) {
                throw discard(in, e);
            }
        }

        private PeerProtocolException discard(ByteBuf in, PeerProtocolException fault) {
            discarding = true;
            in.skipBytes(in.readableBytes());
            return fault;
        }
    }

    /** The outbound half: messages to frames, each in a buffer of exactly its size. */
    static final class Encoder extends MessageToByteEncoder<PeerMessage> {
        private final int maxFrameLength;

        Encoder(int maxFrameLength) {
            super(PeerMessage.class);
            this.maxFrameLength = maxFrameLength;
        }

        @Override
        protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, PeerMessage message, boolean preferDirect) {
            int length = encodedLength(message);
            if (length > maxFrameLength) {
                throw tooLongToSend(message, length, maxFrameLength);
            }
            int size = PeerFrameDescriptor.frameSize(length);
            return preferDirect ? ctx.alloc().ioBuffer(size) : ctx.alloc().heapBuffer(size);
        }

        @Override
        protected void encode(ChannelHandlerContext ctx, PeerMessage message, ByteBuf out) {
            PeerCodec.encode(message, out);
        }
    }

    // ---------------------------------------------------------------------------------------------------- encoding

    /**
     * Writes {@code message} as one frame at {@code out}'s writer index. Does not check the max frame length.
     *
     * @throws IllegalArgumentException when a string is longer than {@link PeerFrameDescriptor#STRING_MAX_LENGTH}
     *     octets; {@code out} may then hold part of the frame
     */
    public static void encode(PeerMessage message, ByteBuf out) {
        int start = out.writerIndex();
        out.writeInt(0); // patched below, once the body's length is known
        out.writeByte(PeerFrameDescriptor.typeOf(message));
        switch (message) {
            case Hello m -> {
                writeString(out, m.clusterName());
                writeNode(out, m.node());
                out.writeLong(m.incarnation().value());
            }
            case Heartbeat m -> {
                writeNode(out, m.node());
                out.writeLong(m.incarnation().value());
                writeBoolean(out, m.draining());
                out.writeLong(m.sentAtMillis());
            }
            case Forward m -> {
                writeNode(out, m.origin());
                out.writeLong(m.publisherId());
                out.writeLong(m.sequence());
                out.writeLong(m.epoch());
                writeObject(out, m.object());
                writeBytes(out, m.payload());
            }
            case ForwardOutcome m -> {
                out.writeLong(m.publisherId());
                out.writeLong(m.sequence());
                writeObject(out, m.object());
                writeBoolean(out, m.confirmed());
                writeString(out, m.reason());
            }
            case Append m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
                out.writeLong(m.firstOffset());
                writeByteList(out, m.records());
                out.writeLong(m.commitOffset());
            }
            case Progress m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
                writeNode(out, m.node());
                out.writeLong(m.incarnation().value());
                out.writeLong(m.durableOffset());
            }
            case SealRequest m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
            }
            case SealReply m -> {
                writeObject(out, m.object());
                out.writeLong(m.sealedEpoch());
                out.writeLong(m.lastEpoch());
                out.writeLong(m.lastOffset());
                out.writeLong(m.durableOffset());
                writeNode(out, m.node());
            }
            case InstallRequest m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
                out.writeLong(m.recoveryPointEpoch());
                out.writeLong(m.recoveryPointOffset());
                writeNode(out, m.source());
            }
            case InstallReply m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
                writeNode(out, m.node());
                writeBoolean(out, m.ok());
                writeString(out, m.reason());
            }
            case DropReply m -> {
                writeObject(out, m.object());
                out.writeLong(m.epoch());
                writeNode(out, m.node());
                writeNode(out, m.follower());
            }
            case Fetch m -> {
                writeObject(out, m.object());
                out.writeLong(m.fromOffset());
                out.writeInt(m.maxBytes());
            }
            case FetchReply m -> {
                writeObject(out, m.object());
                out.writeLong(m.fromOffset());
                writeByteList(out, m.records());
                out.writeInt(m.epochs().size());
                for (long epoch : m.epochs()) {
                    out.writeLong(epoch);
                }
            }
            case Replication m -> {
                writeObject(out, m.object());
                writeReplication(out, m.message());
            }
            case RecoveryCommand m -> writeRecovery(out, m.request());
            case PublishToHome m -> {
                out.writeLong(m.publisher());
                out.writeLong(m.sequence());
                out.writeLong(m.queueId());
                writeBytes(out, m.message());
            }
            case PublishToHomeOutcome m -> {
                out.writeLong(m.sequence());
                out.writeInt(m.replyCode());
                writeString(out, m.text());
            }
            case Subscribe m -> {
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
            case Deliver m -> {
                out.writeLong(m.consumerId());
                out.writeLong(m.offset());
                writeBoolean(out, m.redelivered());
                writeBytes(out, m.message());
            }
            case Settle m -> {
                out.writeLong(m.queueId());
                out.writeInt(m.offsets().size());
                for (long offset : m.offsets()) {
                    out.writeLong(offset);
                }
                out.writeInt(m.settlement());
            }
            case CancelConsumer m -> {
                out.writeLong(m.queueId());
                out.writeLong(m.consumerId());
            }
            case ConsumerCancelled m -> out.writeLong(m.consumerId());
            case QueueCall m -> {
                out.writeLong(m.requestId());
                out.writeLong(m.queueId());
                out.writeInt(m.op());
                out.writeInt(m.flags());
            }
            case QueueReply m -> {
                out.writeLong(m.requestId());
                out.writeInt(m.replyCode());
                writeString(out, m.text());
                out.writeLong(m.count());
                out.writeLong(m.consumers());
                out.writeLong(m.offset());
                writeBoolean(out, m.redelivered());
                writeBytes(out, m.message());
            }
        }
        out.setInt(start, out.writerIndex() - start - LENGTH_FIELD_LENGTH);
    }

    /** The length field {@link #encode} writes for {@code message}: type and body octets. */
    public static int encodedLength(PeerMessage message) {
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
            case PublishToHome m -> 3L * Long.BYTES + Integer.BYTES + m.message().length;
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
                    ByteBuffer body = r.body().duplicate();
                    out.writeInt(body.remaining());
                    out.writeBytes(body);
                }
                case Record.Settle r -> {
                    out.writeByte(PeerFrameDescriptor.RECORD_SETTLE);
                    out.writeLong(r.epoch().value());
                    out.writeLong(r.offset());
                    out.writeLong(r.settled());
                }
            }
        }
    }

    private static long recordsLength(List<Record> records) {
        long length = Integer.BYTES;
        for (Record record : records) {
            length += PeerFrameDescriptor.RECORD_HEADER_LENGTH
                    + switch (record) {
                        case Record.EpochStart r -> 0L;
                        case Record.Message r ->
                            2L * Long.BYTES + Integer.BYTES + r.body().remaining();
                        case Record.Settle r -> (long) Long.BYTES;
                    };
        }
        return length;
    }

    private static IllegalArgumentException tooLongToSend(PeerMessage message, int length, int maxFrameLength) {
        return new IllegalArgumentException("a " + PeerFrameDescriptor.name(PeerFrameDescriptor.typeOf(message))
                + " frame of length " + length + " exceeds the max frame length " + maxFrameLength);
    }

    // ---------------------------------------------------------------------------------------------------- decoding

    /**
     * Decodes one frame's body of type {@code type}: all of {@code body}'s readable octets, which it consumes.
     *
     * @throws PeerProtocolException with {@link Reason#UNKNOWN_TYPE}, {@link Reason#TRUNCATED} or {@link
     *     Reason#MALFORMED}; {@code body}'s reader index is then unspecified
     */
    public static PeerMessage decodeBody(int type, ByteBuf body) {
        PeerMessage message;
        try {
            message = switch (type) {
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
                    new Progress(
                            readObject(body), readLong(body), readNode(body), readIncarnation(body), readLong(body));
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
                    new InstallRequest(
                            readObject(body), readLong(body), readLong(body), readLong(body), readNode(body));
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
                    new PublishToHome(readLong(body), readLong(body), readLong(body), readBytes(body));
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
                        case PeerFrameDescriptor.RECORD_MESSAGE ->
                            new Record.Message(
                                    epoch,
                                    offset,
                                    new PublishId(readLong(body), readLong(body)),
                                    ByteBuffer.wrap(readBytes(body)));
                        case PeerFrameDescriptor.RECORD_SETTLE -> new Record.Settle(epoch, offset, readLong(body));
                        default -> throw unknownKind("record", kind);
                    });
        }
        return records;
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
