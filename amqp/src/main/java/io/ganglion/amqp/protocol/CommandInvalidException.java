package io.ganglion.amqp.protocol;

/** {@code 503 COMMAND_INVALID}: the peer sent a method the broker does not accept. A hard error. */
public sealed class CommandInvalidException extends AmqpException permits UnknownMethodException {
    public CommandInvalidException(String explanation, int classId, int methodId) {
        super(ReplyCode.COMMAND_INVALID, explanation, classId, methodId, null);
    }
}
