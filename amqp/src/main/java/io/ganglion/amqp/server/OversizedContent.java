package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.BodyFrame;
import io.ganglion.amqp.codec.Frame;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.codec.HeaderFrame;
import io.ganglion.amqp.codec.MethodFrame;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ClassId;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.MethodId;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.UnexpectedFrameException;
import java.util.function.Consumer;

/**
 * A channel's guard against publishes over {@code max_message_size}. RabbitMQ assembles the whole body and then refuses
 * it; the channel refuses it from the content header and discards the body frames as they come, so an oversized
 * message is never buffered. Sizes above the codec's hard limit are left to the assembler, which answers {@code 501}
 * as RabbitMQ's does, before any {@code 406}. On the connection's event loop.
 */
final class OversizedContent {
    private final long maxMessageSize;
    /** The content method whose header comes next, checked against the limit before assembling. */
    private Method awaitingHeaderOf;
    /** Body octets of an oversized publish still to discard. */
    private long skipping;

    OversizedContent(long maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    /**
     * Whether {@code frame} is taken away from the assembler: the content header of an oversized publish ({@code
     * refuse} gets the fault first, to take its turn behind the channel's earlier commands) or a body frame of one,
     * discarded.
     *
     * @throws UnexpectedFrameException a frame other than a body while the oversized body is discarded
     * @throws FrameErrorException a body frame longer than what remains of the oversized body
     */
    boolean intercept(Frame frame, Consumer<ServerFault> refuse) {
        if (skipping > 0) {
            skip(frame);
            return true;
        }
        if (awaitingHeaderOf != null && frame instanceof HeaderFrame header && oversized(header)) {
            long size = header.header().bodySize();
            awaitingHeaderOf = null;
            skipping = size;
            refuse.accept(new ServerFault(
                    ReplyCode.PRECONDITION_FAILED,
                    "message size " + Long.toUnsignedString(size) + " is larger than configured max size "
                            + maxMessageSize,
                    ClassId.BASIC,
                    MethodId.BASIC_PUBLISH.methodId()));
            return true;
        }
        return false;
    }

    /** The assembler saw {@code frame}: a method frame without its command complete awaits its header. */
    void assembled(Frame frame, boolean commandComplete) {
        awaitingHeaderOf = !commandComplete && frame instanceof MethodFrame methodFrame ? methodFrame.method() : null;
    }

    private boolean oversized(HeaderFrame header) {
        long size = header.header().bodySize();
        return awaitingHeaderOf instanceof BasicMethod.Publish
                && header.header().classId() == ClassId.BASIC
                && header.header().weight() == 0
                && Long.compareUnsigned(size, maxMessageSize) > 0
                && Long.compareUnsigned(size, FrameDescriptor.MAX_BODY_SIZE) <= 0;
    }

    private void skip(Frame frame) {
        if (!(frame instanceof BodyFrame body)) {
            skipping = 0;
            throw new UnexpectedFrameException(
                    "expected content body, got non content body frame instead",
                    ClassId.BASIC,
                    MethodId.BASIC_PUBLISH.methodId());
        }
        int size = body.content().readableBytes();
        body.release();
        if (size > skipping) {
            skipping = 0;
            throw new FrameErrorException(
                    "content body frame exceeds remaining content size",
                    ClassId.BASIC,
                    MethodId.BASIC_PUBLISH.methodId());
        }
        skipping -= size;
    }
}
