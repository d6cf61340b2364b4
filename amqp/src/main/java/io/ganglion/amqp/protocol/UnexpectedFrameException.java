package io.ganglion.amqp.protocol;

/**
 * {@code 505 UNEXPECTED_FRAME}: a well formed frame that may not come here, now. A body frame without a content header,
 * a method frame in the middle of content, a content header for another class, a heartbeat on a channel other than 0. A
 * hard error.
 */
public final class UnexpectedFrameException extends AmqpException {
    public UnexpectedFrameException(String explanation) {
        this(explanation, 0, 0);
    }

    public UnexpectedFrameException(String explanation, int classId, int methodId) {
        super(ReplyCode.UNEXPECTED_FRAME, explanation, classId, methodId, null);
    }
}
