package io.ganglion.broker;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ReplyCode;

/**
 * A publish to a replicated queue this broker does not serve at the moment (its replica does not own the epoch yet, or
 * lost the role before the publish committed). Its outcome is decided by the queue's next owner, which finds it in its
 * log or appends it, so the broker sends it on with the same id instead of failing it; a client sees it as a nack
 * (internal error) only where that cannot be done.
 */
final class QueueMoved extends AmqpException {
    QueueMoved(String explanation) {
        super(ReplyCode.INTERNAL_ERROR, explanation, 0, 0, null);
    }
}
