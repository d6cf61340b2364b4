package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_BODY;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_END;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_HEADER;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_HEADER_LENGTH;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_HEARTBEAT;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_METHOD;

import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.UnexpectedFrameException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * Frame payloads to {@link Frame}s and frames to octets, with no Netty pipeline: the pure half of
 * {@link AmqpFrameDecoder} and {@link AmqpFrameEncoder}.
 */
public final class FrameCodec {
    private FrameCodec() {}

    /**
     * Decodes the payload of one frame whose framing (size and frame end) is already checked. A method or header
     * payload is consumed; a header frame keeps a copy of its payload octets (a few dozen, so that the message record
     * carries them as received without a re-encoding, and with no buffer to release); a body frame gets a retained
     * slice of {@code payload}, not a copy.
     *
     * <p>As in RabbitMQ: an unknown frame type or a heartbeat with a payload is a {@code 501 FRAME_ERROR}; a content
     * frame on channel 0 or a heartbeat on another channel is a {@code 505 UNEXPECTED_FRAME}.
     *
     * @throws io.ganglion.amqp.protocol.AmqpException the fault, with its reply code
     */
    public static Frame decode(int type, int channel, ByteBuf payload) {
        return switch (type) {
            case FRAME_METHOD -> new MethodFrame(channel, MethodCodec.decode(payload));
            case FRAME_HEADER -> {
                byte[] octets = ByteBufUtil.getBytes(payload);
                ContentHeader header = ContentHeaderCodec.decode(payload);
                if (channel == 0) {
                    throw contentOnChannelZero(type);
                }
                yield new HeaderFrame(channel, header, ByteBuffer.wrap(octets));
            }
            case FRAME_BODY -> {
                if (channel == 0) {
                    throw contentOnChannelZero(type);
                }
                yield new BodyFrame(channel, payload.retainedSlice());
            }
            case FRAME_HEARTBEAT -> {
                if (payload.isReadable()) {
                    throw heartbeatWithPayload(payload.readableBytes());
                }
                if (channel != 0) {
                    throw heartbeatOnChannel(channel);
                }
                yield HeartbeatFrame.INSTANCE;
            }
            default -> throw unknownFrameType(type);
        };
    }

    /**
     * Writes {@code frame} to {@code out}. A body frame's content is copied; {@link CommandEncoder} writes bodies
     * without copying. The frame is not released.
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string is longer than 255 octets
     */
    public static void encode(ByteBuf out, Frame frame) {
        switch (frame) {
            case MethodFrame f -> writeMethodFrame(out, f.channel(), f.method());
            case HeaderFrame f -> writeHeaderFrame(out, f.channel(), f.payload());
            case BodyFrame f -> {
                ByteBuf content = f.content();
                writeFrameHeader(out, FRAME_BODY, f.channel(), content.readableBytes());
                out.writeBytes(content, content.readerIndex(), content.readableBytes());
                out.writeByte(FRAME_END);
            }
            case HeartbeatFrame f -> writeHeartbeat(out);
        }
    }

    public static void writeMethodFrame(ByteBuf out, int channel, Method method) {
        int start = beginFrame(out, FRAME_METHOD, channel);
        MethodCodec.encode(out, method);
        endFrame(out, start);
    }

    public static void writeHeaderFrame(ByteBuf out, int channel, ContentHeader header) {
        int start = beginFrame(out, FRAME_HEADER, channel);
        ContentHeaderCodec.encode(out, header);
        endFrame(out, start);
    }

    /** Writes a header frame whose payload is {@code payload}'s octets, as they are. */
    public static void writeHeaderFrame(ByteBuf out, int channel, ByteBuffer payload) {
        writeFrameHeader(out, FRAME_HEADER, channel, payload.remaining());
        out.writeBytes(payload.duplicate());
        out.writeByte(FRAME_END);
    }

    public static void writeHeartbeat(ByteBuf out) {
        writeFrameHeader(out, FRAME_HEARTBEAT, 0, 0);
        out.writeByte(FRAME_END);
    }

    /** Writes type, channel and size: what precedes a payload of {@code size} octets. */
    public static void writeFrameHeader(ByteBuf out, int type, int channel, int size) {
        out.writeByte(type);
        out.writeShort(channel);
        out.writeInt(size);
    }

    /** Writes a frame header with size 0 and returns where the frame starts, for {@link #endFrame}. */
    private static int beginFrame(ByteBuf out, int type, int channel) {
        int start = out.writerIndex();
        writeFrameHeader(out, type, channel, 0);
        return start;
    }

    /** Fills in the size of the frame begun at {@code start} and writes the frame end. */
    private static void endFrame(ByteBuf out, int start) {
        out.setInt(start + FrameDescriptor.SIZE_OFFSET, out.writerIndex() - start - FRAME_HEADER_LENGTH);
        out.writeByte(FRAME_END);
    }

    private static UnexpectedFrameException contentOnChannelZero(int type) {
        return new UnexpectedFrameException("content frame of type " + type + " on channel 0");
    }

    private static FrameErrorException heartbeatWithPayload(int size) {
        return new FrameErrorException("heartbeat frame with a payload of " + size + " octets");
    }

    private static UnexpectedFrameException heartbeatOnChannel(int channel) {
        return new UnexpectedFrameException("heartbeat frame on channel " + channel);
    }

    private static FrameErrorException unknownFrameType(int type) {
        return new FrameErrorException("unknown frame type " + type);
    }
}
