package io.ganglion.broker;

import io.ganglion.amqp.server.DeliverySink;
import io.ganglion.queues.StreamStart;

/**
 * A consumer as a queue takes it, wherever its channel is: its tag, acknowledgement mode, exclusivity, prefetch (0 for
 * none), where a stream's reader starts (its {@code x-stream-offset}; a queue ignores it) and where deliveries go.
 */
record QueueConsumer(
        String tag, boolean noAck, boolean exclusive, int prefetch, StreamStart start, DeliverySink sink) {}
