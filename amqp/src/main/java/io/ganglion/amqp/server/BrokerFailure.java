package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ReplyCode;

/**
 * A refusal from the broker, with the reply code the channel or connection closes with: 404 for a missing queue, 406
 * for an inequivalent redeclare, 403 for a reserved name, 405 for another connection's exclusive queue, 541 for an
 * internal failure. Whether it closes the channel or the connection follows the reply code.
 */
public final class BrokerFailure extends AmqpException {
    public BrokerFailure(ReplyCode replyCode, String explanation) {
        super(replyCode, explanation, 0, 0, null);
    }

    public BrokerFailure(ReplyCode replyCode, String explanation, Throwable cause) {
        super(replyCode, explanation, 0, 0, cause);
    }
}
