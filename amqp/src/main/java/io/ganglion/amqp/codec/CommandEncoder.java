package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_BODY;
import static io.ganglion.amqp.codec.FrameDescriptor.FRAME_END;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Encodes a whole {@link Command} into its frames: the method frame, and for content a header frame and body frames of
 * at most {@code frame_max - 8} payload octets each. A zero-length body gets no body frame, as RabbitMQ and the Java
 * client send it.
 *
 * <p>A command that carries its header's octets (a publish as received, a delivery as stored) has them written as they
 * are; one built from properties has its header encoded here.
 *
 * <p>A body of more than {@link #COPY_THRESHOLD} octets is not copied: the result is a composite of the frame headers
 * and retained slices of the body. A smaller one is copied into one buffer, which is cheaper than a composite.
 */
public final class CommandEncoder {
    /** Bodies up to this size are copied into the frame buffer rather than sliced. */
    public static final int COPY_THRESHOLD = 2048;

    private CommandEncoder() {}

    /**
     * The frames of {@code command} under {@code frameMax} (0 for no limit). The command is not released; the result
     * holds its own references to the body.
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string is longer than 255 octets
     * @throws IllegalArgumentException when {@code frameMax} is neither 0 nor at least 4096
     */
    public static ByteBuf encode(ByteBufAllocator alloc, Command command, int frameMax) {
        FrameDescriptor.checkFrameMax(frameMax);
        ByteBuf head = alloc.buffer();
        try {
            return switch (command) {
                case MethodCommand c -> {
                    FrameCodec.writeMethodFrame(head, c.channel(), c.method());
                    yield head;
                }
                case ContentCommand c -> encodeContent(alloc, head, c, frameMax);
            };
        } catch (RuntimeException e) {
            head.release();
            throw e;
        }
    }

    private static ByteBuf encodeContent(ByteBufAllocator alloc, ByteBuf head, ContentCommand command, int frameMax) {
        int channel = command.channel();
        ByteBuf body = command.body();
        int length = body.readableBytes();
        FrameCodec.writeMethodFrame(head, channel, command.method());
        if (command.hasHeaderOctets()) {
            FrameCodec.writeHeaderFrame(head, channel, command.header());
        } else {
            FrameCodec.writeHeaderFrame(
                    head, channel, new ContentHeader(command.method().classId(), 0, length, command.properties()));
        }
        if (length == 0) {
            return head;
        }
        int chunk = FrameDescriptor.maxBodyPayload(frameMax);
        if (length <= COPY_THRESHOLD) {
            int size;
            for (int offset = 0; offset < length; offset += size) {
                size = Math.min(chunk, length - offset);
                FrameCodec.writeFrameHeader(head, FRAME_BODY, channel, size);
                head.writeBytes(body, body.readerIndex() + offset, size);
                head.writeByte(FRAME_END);
            }
            return head;
        }
        int frames = (length - 1) / chunk + 1;
        // Nothing below throws short of running out of memory: the faults (over-long short strings) come above.
        CompositeByteBuf out = alloc.compositeBuffer(2 * frames + 1);
        FrameCodec.writeFrameHeader(head, FRAME_BODY, channel, Math.min(chunk, length));
        out.addComponent(true, head);
        int size;
        for (int offset = 0; offset < length; offset += size) {
            size = Math.min(chunk, length - offset);
            out.addComponent(true, body.retainedSlice(body.readerIndex() + offset, size));
            int next = offset + size;
            boolean last = next >= length;
            ByteBuf tail = alloc.buffer(last ? 1 : 1 + FrameDescriptor.FRAME_HEADER_LENGTH);
            tail.writeByte(FRAME_END);
            if (!last) {
                FrameCodec.writeFrameHeader(tail, FRAME_BODY, channel, Math.min(chunk, length - next));
            }
            out.addComponent(true, tail);
        }
        return out;
    }
}
