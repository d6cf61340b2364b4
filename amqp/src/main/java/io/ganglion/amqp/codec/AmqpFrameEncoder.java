package io.ganglion.amqp.codec;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes {@link Frame}s and whole {@link Command}s as octets. A command's body is split into frames of at most
 * {@code frame_max - 8} payload octets ({@link CommandEncoder}); set the negotiated {@code frame_max} with
 * {@link #frameMax(int)}. Other messages, such as the {@link FrameDescriptor#protocolHeader()} buffer, pass through.
 *
 * <p>A fault while encoding (a short string over 255 octets) fails the write's promise with an
 * {@link io.netty.handler.codec.EncoderException} whose cause is the {@link io.ganglion.amqp.protocol.AmqpException}.
 * Written messages are released.
 *
 * <p>Implementation notes: one instance per connection, used on its event loop only.
 */
public final class AmqpFrameEncoder extends MessageToMessageEncoder<Object> {
    private int frameMax;

    /** An encoder splitting bodies for the smallest frame size a peer may choose, until {@link #frameMax(int)}. */
    public AmqpFrameEncoder() {
        this(FrameDescriptor.FRAME_MIN_SIZE);
    }

    public AmqpFrameEncoder(int frameMax) {
        this.frameMax = FrameDescriptor.checkFrameMax(frameMax);
    }

    public int frameMax() {
        return frameMax;
    }

    /**
     * Sets the negotiated {@code frame_max}, 0 for none. On the event loop.
     *
     * @throws IllegalArgumentException when it is neither 0 nor at least 4096
     */
    public void frameMax(int frameMax) {
        this.frameMax = FrameDescriptor.checkFrameMax(frameMax);
    }

    @Override
    public boolean acceptOutboundMessage(Object msg) {
        return msg instanceof Frame || msg instanceof Command;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) {
        if (msg instanceof Command command) {
            out.add(CommandEncoder.encode(ctx.alloc(), command, frameMax));
            return;
        }
        ByteBuf buffer = ctx.alloc().buffer();
        try {
            FrameCodec.encode(buffer, (Frame) msg);
        } catch (RuntimeException e) {
            buffer.release();
            throw e;
        }
        out.add(buffer);
    }
}
