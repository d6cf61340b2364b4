package io.ganglion.broker;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.QueueHandle;
import io.ganglion.queues.StreamStart;
import io.ganglion.queues.routing.ResourceName;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a stream's readers need at the stream's owner ({@link ReplicatedQueue}, one copy or several): the checks RabbitMQ makes of a stream consumer, where a reader
 * starts, and its deliveries, each with its offset in the {@code x-stream-offset} header.
 */
final class StreamSupport {
    /** How far back from the end {@code x-stream-offset: last} looks for a message past epoch starts. */
    private static final int LAST_MESSAGE_LOOK_BACK = 64;

    /** A read of a stream takes at most this many bytes of records at once; a reader reads on while it has credit. */
    static final int READ_BYTES = 1 << 20;

    private StreamSupport() {}

    /** A stream's log as a reader's start needs it. On the stream's shard. */
    interface Log {
        /** The oldest offset kept. */
        long first();

        /** The offset after the last one readers may read (the commit, or what is durable). */
        long next();

        /** Whether the record at {@code offset} is a message (not an epoch start). */
        boolean isMessage(long offset) throws IOException;

        /** The first offset from {@link #first()} on appended at or after {@code epochMillis}. */
        long firstAtOrAfter(long epochMillis) throws IOException;

        /** The time now by the clock that stamped the log's records. */
        long nowMillis();
    }

    /** What RabbitMQ refuses of a stream consumer, refused the same way. */
    static void checkConsumer(String queue, String vhost, boolean noAck, int prefetch) {
        if (noAck) {
            throw new BrokerFailure(
                    ReplyCode.NOT_IMPLEMENTED,
                    "automatic acknowledgement not supported by stream " + ResourceName.queue(vhost, queue));
        }
        if (prefetch < 1) {
            throw new BrokerFailure(
                    ReplyCode.PRECONDITION_FAILED,
                    "consumer prefetch count is not set for stream " + ResourceName.queue(vhost, queue)
                            + " (basic.qos with global=false before basic.consume)");
        }
    }

    /** 540 for what a stream does not do ({@code basic.get}, {@code queue.purge}), as RabbitMQ answers. */
    static BrokerFailure unsupported(String what, String queue, String vhost) {
        return new BrokerFailure(
                ReplyCode.NOT_IMPLEMENTED, what + " not supported by stream " + ResourceName.queue(vhost, queue));
    }

    /** The offset a new reader starts at: {@code start} resolved against {@code log} now. */
    static long from(StreamStart start, Log log, String queue) {
        long first = log.first();
        long next = log.next();
        try {
            return switch (start.kind()) {
                case FIRST -> first;
                case NEXT -> next;
                case OFFSET -> Math.min(Math.max(start.value(), first), next);
                case LAST -> lastMessage(log, first, next);
                case TIMESTAMP -> Math.min(Math.max(log.firstAtOrAfter(start.value()), first), next);
                case INTERVAL ->
                    Math.min(Math.max(log.firstAtOrAfter(Math.max(0, log.nowMillis() - start.value())), first), next);
            };
        } catch (IOException e) {
            throw new BrokerFailure(
                    ReplyCode.INTERNAL_ERROR, "cannot read stream '" + queue + "': " + e.getMessage(), e);
        }
    }

    private static long lastMessage(Log log, long first, long next) throws IOException {
        for (long offset = next - 1; offset >= first && offset >= next - LAST_MESSAGE_LOOK_BACK; offset--) {
            if (log.isMessage(offset)) {
                return offset;
            }
        }
        return next;
    }

    /**
     * A stream's message as a delivery of {@code queue}: {@code messageRecord} in the broker's message record form,
     * with its offset in the {@code x-stream-offset} header, as RabbitMQ adds it.
     */
    static Delivery delivery(QueueHandle queue, long offset, ByteBuffer messageRecord) {
        MessageRecord.Message decoded = MessageRecord.decodeMessage(messageRecord);
        BasicProperties properties = decoded.properties();
        FieldTable headers = properties.headers() == null ? FieldTable.EMPTY : properties.headers();
        BasicProperties withOffset = properties.toBuilder()
                .headers(headers.with("x-stream-offset", new FieldValue.Int64(offset)))
                .build();
        return new Delivery(
                queue,
                offset,
                false,
                decoded.exchange(),
                decoded.routingKey(),
                withOffset,
                Unpooled.wrappedBuffer(decoded.body()),
                0);
    }
}
