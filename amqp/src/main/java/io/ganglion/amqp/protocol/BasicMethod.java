package io.ganglion.amqp.protocol;

/**
 * The methods of class basic ({@link ClassId#BASIC}). Publish, consume, get and settle messages; RabbitMQ adds nack.
 */
public sealed interface BasicMethod extends Method {
    /**
     * {@code basic.qos}: sets the prefetch window, per consumer or (with {@code global}) per channel in RabbitMQ's
     * reading.
     */
    record Qos(long prefetchSize, int prefetchCount, boolean global) implements BasicMethod {
        public Qos {
            Check.uint(prefetchSize, "prefetchSize");
            Check.ushort(prefetchCount, "prefetchCount");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_QOS;
        }
    }

    /** {@code basic.qos-ok}: the prefetch window is set. */
    record QosOk() implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_QOS_OK;
        }
    }

    /** {@code basic.consume}: starts a consumer. An empty tag asks the server for one. Reserved: {@code ticket}. */
    record Consume(
            int ticket,
            String queue,
            String consumerTag,
            boolean noLocal,
            boolean noAck,
            boolean exclusive,
            boolean nowait,
            FieldTable arguments)
            implements BasicMethod {
        public Consume {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
            Check.present(consumerTag, "consumerTag");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Consume(
                String queue,
                String consumerTag,
                boolean noLocal,
                boolean noAck,
                boolean exclusive,
                boolean nowait,
                FieldTable arguments) {
            this(0, queue, consumerTag, noLocal, noAck, exclusive, nowait, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_CONSUME;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code basic.consume-ok}: the consumer's tag. */
    record ConsumeOk(String consumerTag) implements BasicMethod {
        public ConsumeOk {
            Check.present(consumerTag, "consumerTag");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_CONSUME_OK;
        }
    }

    /** {@code basic.cancel}: cancels a consumer; RabbitMQ also sends it to a client whose queue went away. */
    record Cancel(String consumerTag, boolean nowait) implements BasicMethod {
        public Cancel {
            Check.present(consumerTag, "consumerTag");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_CANCEL;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code basic.cancel-ok}: the consumer is cancelled. */
    record CancelOk(String consumerTag) implements BasicMethod {
        public CancelOk {
            Check.present(consumerTag, "consumerTag");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_CANCEL_OK;
        }
    }

    /** {@code basic.publish}: publishes a message: content follows. Reserved: {@code ticket}. */
    record Publish(int ticket, String exchange, String routingKey, boolean mandatory, boolean immediate)
            implements BasicMethod {
        public Publish {
            Check.ushort(ticket, "ticket");
            Check.present(exchange, "exchange");
            Check.present(routingKey, "routingKey");
        }

        /** With the reserved fields at the values clients send. */
        public Publish(String exchange, String routingKey, boolean mandatory, boolean immediate) {
            this(0, exchange, routingKey, mandatory, immediate);
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_PUBLISH;
        }
    }

    /** {@code basic.return}: returns an unroutable mandatory message: content follows. */
    record Return(int replyCode, String replyText, String exchange, String routingKey) implements BasicMethod {
        public Return {
            Check.ushort(replyCode, "replyCode");
            Check.present(replyText, "replyText");
            Check.present(exchange, "exchange");
            Check.present(routingKey, "routingKey");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_RETURN;
        }
    }

    /** {@code basic.deliver}: delivers a message to a consumer: content follows. */
    record Deliver(String consumerTag, long deliveryTag, boolean redelivered, String exchange, String routingKey)
            implements BasicMethod {
        public Deliver {
            Check.present(consumerTag, "consumerTag");
            Check.present(exchange, "exchange");
            Check.present(routingKey, "routingKey");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_DELIVER;
        }
    }

    /** {@code basic.get}: fetches one message. Reserved: {@code ticket}. */
    record Get(int ticket, String queue, boolean noAck) implements BasicMethod {
        public Get {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
        }

        /** With the reserved fields at the values clients send. */
        public Get(String queue, boolean noAck) {
            this(0, queue, noAck);
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_GET;
        }
    }

    /** {@code basic.get-ok}: the fetched message: content follows. */
    record GetOk(long deliveryTag, boolean redelivered, String exchange, String routingKey, long messageCount)
            implements BasicMethod {
        public GetOk {
            Check.present(exchange, "exchange");
            Check.present(routingKey, "routingKey");
            Check.uint(messageCount, "messageCount");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_GET_OK;
        }
    }

    /** {@code basic.get-empty}: the queue had no message to fetch. Reserved: {@code clusterId}. */
    record GetEmpty(String clusterId) implements BasicMethod {
        public GetEmpty {
            Check.present(clusterId, "clusterId");
        }

        /** With the reserved fields at the values clients send. */
        public GetEmpty() {
            this("");
        }

        @Override
        public MethodId id() {
            return MethodId.BASIC_GET_EMPTY;
        }
    }

    /**
     * {@code basic.ack}: acknowledges one delivery or, with {@code multiple}, all up to it; in confirm mode, confirms
     * publishes.
     */
    record Ack(long deliveryTag, boolean multiple) implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_ACK;
        }
    }

    /** {@code basic.reject}: rejects one delivery. */
    record Reject(long deliveryTag, boolean requeue) implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_REJECT;
        }
    }

    /** {@code basic.recover-async}: redelivers unacknowledged messages, without a reply (deprecated). */
    record RecoverAsync(boolean requeue) implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_RECOVER_ASYNC;
        }
    }

    /** {@code basic.recover}: redelivers unacknowledged messages. */
    record Recover(boolean requeue) implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_RECOVER;
        }
    }

    /** {@code basic.recover-ok}: the recover is done. */
    record RecoverOk() implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_RECOVER_OK;
        }
    }

    /**
     * {@code basic.nack}: rabbitMQ extension: rejects one or (with {@code multiple}) many deliveries; in confirm mode,
     * refuses publishes.
     */
    record Nack(long deliveryTag, boolean multiple, boolean requeue) implements BasicMethod {
        @Override
        public MethodId id() {
            return MethodId.BASIC_NACK;
        }
    }
}
