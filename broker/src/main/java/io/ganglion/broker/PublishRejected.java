package io.ganglion.broker;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ReplyCode;

/**
 * A publish a queue refused for good: it is at its length limit with {@code x-overflow} {@code reject-publish} (or
 * {@code reject-publish-dlx}). The publisher gets a {@code basic.nack} when confirms are on; the broker that forwarded
 * it does not send it again ({@link #OUTCOME_CODE} on the peer link).
 */
final class PublishRejected extends AmqpException {
    /** The outcome code of a rejected publish on the peer link: no AMQP reply code, so no refusal is taken for it. */
    static final int OUTCOME_CODE = 1;

    PublishRejected(String explanation) {
        super(ReplyCode.PRECONDITION_FAILED, explanation, 0, 0, null);
    }
}
