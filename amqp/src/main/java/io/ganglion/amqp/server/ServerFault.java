package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.ReplyCode;

/**
 * A protocol fault the connection or a channel raises itself, with any reply code: the {@code protocol} package has
 * typed faults only for the codes the codec raises. Soft codes close the channel, hard codes the connection. Ids of 0
 * mean "the method being processed", filled in by whoever sends the close.
 */
final class ServerFault extends AmqpException {
    ServerFault(ReplyCode replyCode, String explanation, int classId, int methodId) {
        super(replyCode, explanation, classId, methodId, null);
    }

    ServerFault(ReplyCode replyCode, String explanation) {
        this(replyCode, explanation, 0, 0);
    }

    static ServerFault of(ReplyCode replyCode, Method method, String explanation) {
        return new ServerFault(replyCode, explanation, method.classId(), method.methodId());
    }

    static ServerFault preconditionFailed(String explanation) {
        return new ServerFault(ReplyCode.PRECONDITION_FAILED, explanation);
    }

    static ServerFault notImplemented(String explanation) {
        return new ServerFault(ReplyCode.NOT_IMPLEMENTED, explanation);
    }

    /** RabbitMQ's answer to a method it does not handle in a channel, such as one only the server sends. */
    static ServerFault unimplemented(Method method) {
        return of(ReplyCode.COMMAND_INVALID, method, "unimplemented method");
    }
}
