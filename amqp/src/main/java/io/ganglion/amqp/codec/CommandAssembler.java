package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.UnexpectedFrameException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Collects the frames of one channel into {@link Command}s: a method frame alone, or a content method frame, one
 * content header frame and body frames until the header's body size is reached. Pure: no IO, no clock, no threads.
 *
 * <pre>
 *            method without content ──> MethodCommand
 *   METHOD ──method with content──> HEADER ──header, body size 0──> ContentCommand
 *                                     │
 *                                     └──header, body size n──> BODY ──bodies summing to n──> ContentCommand
 * </pre>
 *
 * Faults, as RabbitMQ's {@code rabbit_command_assembler} reports them:
 *
 * <ul>
 *   <li>{@code 505 UNEXPECTED_FRAME}: a header or body frame where a method is expected; anything but a header (or a
 *       header with a weight other than 0) where a header is expected; a header of another class than the method's;
 *       anything but a body frame where a body is expected, a method frame included (content may not interleave with
 *       methods on a channel).
 *   <li>{@code 501 FRAME_ERROR}: a body size over the limit ({@link FrameDescriptor#MAX_BODY_SIZE}, RabbitMQ's
 *       {@code ?MAX_MSG_SIZE}); a body frame longer than what remains of the body.
 * </ul>
 *
 * Faults raised while content is pending carry the content method's class and method ids.
 *
 * <p>Implementation notes: owned by one thread (the channel's); not thread-safe. Between frames it holds the body parts
 * received so far, each one reference. A fault or {@link #release()} releases them and returns the assembler to
 * awaiting a method.
 */
public final class CommandAssembler {
    private enum State {
        METHOD,
        HEADER,
        BODY
    }

    private final int channel;
    private final long maxBodySize;
    private final List<ByteBuf> parts = new ArrayList<>(2);

    private State state = State.METHOD;
    private Method method;
    private BasicProperties properties;
    private ByteBuffer header;
    private long remaining;

    /** An assembler for {@code channel} with RabbitMQ's body size limit. */
    public CommandAssembler(int channel) {
        this(channel, FrameDescriptor.MAX_BODY_SIZE);
    }

    public CommandAssembler(int channel, long maxBodySize) {
        this.channel = FrameDescriptor.checkChannel(channel);
        if (maxBodySize < 0) {
            throw new IllegalArgumentException("maxBodySize must not be negative, was " + maxBodySize);
        }
        this.maxBodySize = maxBodySize;
    }

    public int channel() {
        return channel;
    }

    /** Whether a content method is waiting for its header or body. */
    public boolean isAssembling() {
        return state != State.METHOD;
    }

    /**
     * Feeds the next frame of this channel and returns the command it completes, if any. Takes ownership of a
     * {@link BodyFrame}'s reference whatever the outcome; the returned command owns its body.
     *
     * @throws AmqpException the protocol fault ({@code 505} or {@code 501}, see the class comment); partial content
     *     is then released and the assembler awaits a method again
     * @throws IllegalArgumentException when the frame belongs to another channel (the frame is released)
     */
    public Optional<Command> accept(Frame frame) {
        if (frame.channel() != channel) {
            release(frame);
            throw new IllegalArgumentException("frame of channel " + frame.channel() + " fed to channel " + channel);
        }
        return switch (state) {
            case METHOD -> onMethodExpected(frame);
            case HEADER -> onHeaderExpected(frame);
            case BODY -> onBodyExpected(frame);
        };
    }

    /** Drops any partial content, releasing its buffers; for a channel that closes. */
    public void release() {
        for (ByteBuf part : parts) {
            part.release();
        }
        reset();
    }

    private Optional<Command> onMethodExpected(Frame frame) {
        if (!(frame instanceof MethodFrame methodFrame)) {
            throw fail(frame, new UnexpectedFrameException("expected method frame, got non method frame instead"));
        }
        Method next = methodFrame.method();
        if (!next.hasContent()) {
            return Optional.of(new MethodCommand(channel, next));
        }
        method = next;
        state = State.HEADER;
        return Optional.empty();
    }

    private Optional<Command> onHeaderExpected(Frame frame) {
        if (!(frame instanceof HeaderFrame headerFrame) || headerFrame.header().weight() != 0) {
            throw fail(
                    frame,
                    unexpected("expected content header for class " + method.classId()
                            + ", got non content header frame instead"));
        }
        ContentHeader header = headerFrame.header();
        if (header.classId() != method.classId()) {
            throw fail(
                    frame,
                    unexpected("expected content header for class " + method.classId() + ", got one for class "
                            + header.classId() + " instead"));
        }
        if (Long.compareUnsigned(header.bodySize(), maxBodySize) > 0) {
            throw fail(
                    frame,
                    new FrameErrorException(
                            "content body size " + Long.toUnsignedString(header.bodySize())
                                    + " exceeds maximum allowed size " + maxBodySize,
                            method.classId(),
                            method.methodId()));
        }
        properties = header.properties();
        this.header = headerFrame.payload();
        if (header.bodySize() == 0) {
            return complete();
        }
        remaining = header.bodySize();
        state = State.BODY;
        return Optional.empty();
    }

    private Optional<Command> onBodyExpected(Frame frame) {
        if (!(frame instanceof BodyFrame bodyFrame)) {
            throw fail(frame, unexpected("expected content body, got non content body frame instead"));
        }
        ByteBuf part = bodyFrame.content();
        int size = part.readableBytes();
        if (size > remaining) {
            throw fail(
                    frame,
                    new FrameErrorException(
                            "content body frame exceeds remaining content size", method.classId(), method.methodId()));
        }
        if (size == 0) {
            part.release();
        } else {
            parts.add(part);
        }
        remaining -= size;
        return remaining == 0 ? complete() : Optional.empty();
    }

    private Optional<Command> complete() {
        ByteBuf body = switch (parts.size()) {
            case 0 -> Unpooled.EMPTY_BUFFER;
            case 1 -> parts.getFirst();
            default -> Unpooled.wrappedBuffer(parts.size(), parts.toArray(ByteBuf[]::new));
        };
        ContentCommand command = new ContentCommand(channel, method, header, properties, body);
        reset();
        return Optional.of(command);
    }

    private void reset() {
        parts.clear();
        state = State.METHOD;
        method = null;
        properties = null;
        header = null;
        remaining = 0;
    }

    private UnexpectedFrameException unexpected(String explanation) {
        return new UnexpectedFrameException(explanation, method.classId(), method.methodId());
    }

    /** Releases the offending frame and any partial content, and returns {@code fault} to throw. */
    private AmqpException fail(Frame frame, AmqpException fault) {
        release(frame);
        release();
        return fault;
    }

    private static void release(Frame frame) {
        if (frame instanceof BodyFrame body) {
            body.release();
        }
    }
}
