package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_BODY;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_END;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_HEADER_LENGTH;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_OVERHEAD;
import static io.ganglion.amqp.codec.FrameDescriptor.PROTOCOL_HEADER_LENGTH;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.FrameTooLargeException;
import io.ganglion.amqp.protocol.InternalErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Turns the octets a client sends into a {@link ProtocolHeader} and then {@link Frame}s.
 *
 * <pre>
 *   PROTOCOL_HEADER ──8 octets, ours──> FRAMES ──fault that loses frame sync──> DISCARDING
 *         │                               │  ^
 *         └──8 octets, not ours──> DISCARDING  └──fault with sync intact (fired, decoding goes on)
 * </pre>
 *
 * <p>Faults are not thrown: each is fired down the pipeline, unwrapped, with
 * {@link ChannelHandlerContext#fireExceptionCaught}, after every frame before it, so the connection sees the typed
 * {@link AmqpException} with its reply code and can answer with {@code connection.close}. Two kinds:
 *
 * <ul>
 *   <li>The framing is lost ({@link FrameTooLargeException} on a declared size over the limit, or a bad frame end):
 *       nothing after can be trusted, so the decoder discards all further input, as RabbitMQ stops reading.
 *   <li>One frame's payload is bad (unknown frame type or method, malformed arguments, content on channel 0...): the
 *       frame is skipped and decoding goes on, so the connection still sees the client's {@code connection.close-ok}.
 * </ul>
 *
 * <p>The frame size limit is checked on the frame header, before the payload is buffered. It starts at
 * {@link FrameDescriptor#FRAME_MIN_SIZE} (RabbitMQ's initial frame max) and is raised to the negotiated
 * {@code frame_max} with {@link #frameMax(int)} on {@code tune-ok}. Like RabbitMQ we accept a payload up to
 * {@code frame_max}, 8 octets more than the spec allows, since clients commonly miscount.
 *
 * <p>Body frames are retained slices of the received buffer, not copies.
 *
 * <p>Implementation notes: one instance per connection, used on its event loop only; {@link #frameMax(int)} must be
 * called there too. Decodes one frame per {@code decode} call so that a fault fired mid-batch follows the frames
 * before it.
 */
public final class AmqpFrameDecoder extends ByteToMessageDecoder {
    private enum State {
        PROTOCOL_HEADER,
        FRAMES,
        DISCARDING
    }

    private State state;
    private int frameMax;

    /** A server-side decoder: expects the protocol header, then frames under the initial frame size limit. */
    public AmqpFrameDecoder() {
        this(true, FrameDescriptor.FRAME_MIN_SIZE);
    }

    /**
     * @param expectProtocolHeader whether the protocol header comes first (a server); false to start with frames
     * @param frameMax the frame size limit: 0 for none, else at least 4096
     */
    public AmqpFrameDecoder(boolean expectProtocolHeader, int frameMax) {
        this.state = expectProtocolHeader ? State.PROTOCOL_HEADER : State.FRAMES;
        this.frameMax = FrameDescriptor.checkFrameMax(frameMax);
    }

    /** The frame size limit in force: {@code frame_max}, 0 for none. */
    public int frameMax() {
        return frameMax;
    }

    /**
     * Sets the frame size limit, on {@code tune-ok}. On the event loop.
     *
     * @throws IllegalArgumentException when it is neither 0 nor at least 4096
     */
    public void frameMax(int frameMax) {
        this.frameMax = FrameDescriptor.checkFrameMax(frameMax);
    }

    /** Whether the decoder lost frame sync or refused the protocol header and now ignores all input. */
    public boolean isDiscarding() {
        return state == State.DISCARDING;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        switch (state) {
            case PROTOCOL_HEADER -> decodeProtocolHeader(in, out);
            case FRAMES -> decodeFrame(ctx, in, out);
            case DISCARDING -> in.skipBytes(in.readableBytes());
        }
    }

    private void decodeProtocolHeader(ByteBuf in, List<Object> out) {
        if (in.readableBytes() < PROTOCOL_HEADER_LENGTH) {
            return;
        }
        if (FrameDescriptor.isSupportedProtocolHeader(in, in.readerIndex())) {
            in.skipBytes(PROTOCOL_HEADER_LENGTH);
            state = State.FRAMES;
            out.add(new ProtocolHeader.Accepted());
        } else {
            byte[] received = new byte[PROTOCOL_HEADER_LENGTH];
            in.readBytes(received);
            discard(in);
            out.add(new ProtocolHeader.Rejected(received));
        }
    }

    private void decodeFrame(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < FRAME_HEADER_LENGTH) {
            return;
        }
        int start = in.readerIndex();
        int type = FrameDescriptor.frameType(in, start);
        int channel = FrameDescriptor.channel(in, start);
        long size = FrameDescriptor.payloadSize(in, start);
        long limit = FrameDescriptor.payloadLimit(frameMax);
        if (size > limit) {
            discard(in);
            ctx.fireExceptionCaught(new FrameTooLargeException(size, limit));
            return;
        }
        int length = (int) size + FRAME_OVERHEAD;
        if (in.readableBytes() < length) {
            return;
        }
        int end = in.getUnsignedByte(start + length - 1);
        if (end != FRAME_END) {
            discard(in);
            ctx.fireExceptionCaught(badFrameEnd(end, type, channel));
            return;
        }
        ByteBuf payload = in.slice(start + FRAME_HEADER_LENGTH, (int) size);
        in.skipBytes(length);
        Frame frame;
        try {
            frame = FrameCodec.decode(type, channel, payload);
        } catch (AmqpException e) {
            ctx.fireExceptionCaught(e);
            return;
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(internalError(type, channel, e));
            return;
        }
        out.add(frame);
    }

    private void discard(ByteBuf in) {
        state = State.DISCARDING;
        in.skipBytes(in.readableBytes());
    }

    private static FrameErrorException badFrameEnd(int end, int type, int channel) {
        return new FrameErrorException("invalid frame end marker 0x" + Integer.toHexString(end) + " on a frame of type "
                + type + ", channel " + channel);
    }

    private static InternalErrorException internalError(int type, int channel, RuntimeException cause) {
        String kind = type == FRAME_BODY ? "body" : "type " + type;
        return new InternalErrorException("failed to decode a frame of " + kind + " on channel " + channel, cause);
    }
}
