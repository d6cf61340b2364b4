package io.ganglion.amqp.protocol;

/**
 * A frame whose declared payload size exceeds the frame size in force (the small limit before {@code tune-ok}, then the
 * negotiated {@code frame_max}). Raised as soon as the frame header is read, before the payload is buffered. A
 * {@code 501 FRAME_ERROR}, as RabbitMQ raises it.
 */
public final class FrameTooLargeException extends FrameErrorException {
    private final long payloadSize;
    private final long limit;

    public FrameTooLargeException(long payloadSize, long limit) {
        super("frame payload of " + payloadSize + " octets exceeds the limit of " + limit + " octets", 0, 0, null);
        this.payloadSize = payloadSize;
        this.limit = limit;
    }

    /** The payload size the frame header declared. */
    public long payloadSize() {
        return payloadSize;
    }

    /** The largest payload accepted at the time. */
    public long limit() {
        return limit;
    }
}
