package io.ganglion.amqp.protocol;

/**
 * A protocol fault raised by a peer, carrying the reply code it must be answered with and, where a method caused it,
 * that method's class and method ids (for the {@code class-id} and {@code method-id} fields of the close).
 *
 * <p>Faults are triggered by remote input, so they do not fill in a stack trace: an attacker must not be able to make
 * the broker walk its stack at will, and the stack of a decoder says nothing the message does not. A fault wrapping an
 * unexpected exception keeps it as its cause.
 */
public abstract class AmqpException extends RuntimeException {
    private final ReplyCode replyCode;
    private final int classId;
    private final int methodId;

    protected AmqpException(ReplyCode replyCode, String explanation, int classId, int methodId, Throwable cause) {
        super(explanation, cause, false, false);
        this.replyCode = replyCode;
        this.classId = classId;
        this.methodId = methodId;
    }

    public ReplyCode replyCode() {
        return replyCode;
    }

    /** The class id of the method that caused the fault, 0 when no method did. */
    public int classId() {
        return classId;
    }

    /** The method id of the method that caused the fault, 0 when no method did. */
    public int methodId() {
        return methodId;
    }

    /** What went wrong, without the reply code's name. */
    public String explanation() {
        return getMessage();
    }

    /** The text to send in the close: {@code "FRAME_ERROR - ..."}, cut to fit a short string. */
    public String replyText() {
        return replyCode.replyText(explanation());
    }

    /** Whether the fault closes the connection (a hard error) rather than only the channel. */
    public boolean isHardError() {
        return replyCode.isHardError();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + ": " + replyCode.code() + " " + replyText()
                + (classId == 0 && methodId == 0 ? "" : " (class " + classId + ", method " + methodId + ")");
    }
}
