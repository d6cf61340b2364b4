package io.ganglion.amqp.protocol;

/**
 * A method frame whose class id and method id name no AMQP 0-9-1 method.
 *
 * <p>RabbitMQ's reader has no clean answer here: {@code lookup_method_name/1} exits and the connection drops without a
 * {@code connection.close}. For a method it knows but does not handle it closes with {@code 503 COMMAND_INVALID}
 * ("unimplemented method"). We answer an unknown method the same way, so the client learns why, with the same reply
 * code RabbitMQ uses for methods it does not implement.
 */
public final class UnknownMethodException extends CommandInvalidException {
    public UnknownMethodException(int classId, int methodId) {
        super("unknown method: class " + classId + ", method " + methodId, classId, methodId);
    }
}
