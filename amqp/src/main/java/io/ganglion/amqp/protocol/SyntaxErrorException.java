package io.ganglion.amqp.protocol;

/**
 * {@code 502 SYNTAX_ERROR}: a field holds a value its type cannot carry, such as a short string of more than 255 octets
 * or a field table nested too deep to encode. Raised when encoding. A hard error.
 */
public final class SyntaxErrorException extends AmqpException {
    public SyntaxErrorException(String explanation) {
        this(explanation, 0, 0);
    }

    public SyntaxErrorException(String explanation, int classId, int methodId) {
        super(ReplyCode.SYNTAX_ERROR, explanation, classId, methodId, null);
    }
}
