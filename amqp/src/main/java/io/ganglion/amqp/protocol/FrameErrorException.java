package io.ganglion.amqp.protocol;

/**
 * {@code 501 FRAME_ERROR}: the peer sent a frame that cannot be decoded. A bad frame end, a truncated or overlong
 * method, a bad field table type tag, malformed UTF-8 in a short string. A hard error.
 */
public sealed class FrameErrorException extends AmqpException permits FrameTooLargeException {
    public FrameErrorException(String explanation) {
        this(explanation, 0, 0);
    }

    public FrameErrorException(String explanation, int classId, int methodId) {
        super(ReplyCode.FRAME_ERROR, explanation, classId, methodId, null);
    }

    protected FrameErrorException(String explanation, int classId, int methodId, Throwable cause) {
        super(ReplyCode.FRAME_ERROR, explanation, classId, methodId, cause);
    }
}
