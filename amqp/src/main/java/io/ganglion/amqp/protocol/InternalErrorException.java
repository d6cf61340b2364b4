package io.ganglion.amqp.protocol;

/**
 * {@code 541 INTERNAL_ERROR}: the broker failed in a way the input does not explain, a bug. The decoder turns any
 * unexpected exception into this fault so the connection closes with a reply code instead of an unchecked crash. A
 * hard error.
 */
public final class InternalErrorException extends AmqpException {
    public InternalErrorException(String explanation, Throwable cause) {
        super(ReplyCode.INTERNAL_ERROR, explanation, 0, 0, cause);
    }
}
