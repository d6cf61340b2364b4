package io.ganglion.amqp.protocol;

/** The methods of class queue ({@link ClassId#QUEUE}). Work with queues. */
public sealed interface QueueMethod extends Method {
    /**
     * {@code queue.declare}: creates a queue, or checks that it exists ({@code passive}). An empty name asks the server
     * for one. Reserved: {@code ticket}.
     */
    record Declare(
            int ticket,
            String queue,
            boolean passive,
            boolean durable,
            boolean exclusive,
            boolean autoDelete,
            boolean nowait,
            FieldTable arguments)
            implements QueueMethod {
        public Declare {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Declare(
                String queue,
                boolean passive,
                boolean durable,
                boolean exclusive,
                boolean autoDelete,
                boolean nowait,
                FieldTable arguments) {
            this(0, queue, passive, durable, exclusive, autoDelete, nowait, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_DECLARE;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code queue.declare-ok}: the queue's name and its message and consumer counts. */
    record DeclareOk(String queue, long messageCount, long consumerCount) implements QueueMethod {
        public DeclareOk {
            Check.present(queue, "queue");
            Check.uint(messageCount, "messageCount");
            Check.uint(consumerCount, "consumerCount");
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_DECLARE_OK;
        }
    }

    /** {@code queue.bind}: binds a queue to an exchange. Reserved: {@code ticket}. */
    record Bind(int ticket, String queue, String exchange, String routingKey, boolean nowait, FieldTable arguments)
            implements QueueMethod {
        public Bind {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
            Check.present(exchange, "exchange");
            Check.present(routingKey, "routingKey");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Bind(String queue, String exchange, String routingKey, boolean nowait, FieldTable arguments) {
            this(0, queue, exchange, routingKey, nowait, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_BIND;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code queue.bind-ok}: the binding exists. */
    record BindOk() implements QueueMethod {
        @Override
        public MethodId id() {
            return MethodId.QUEUE_BIND_OK;
        }
    }

    /** {@code queue.purge}: removes all ready messages from a queue. Reserved: {@code ticket}. */
    record Purge(int ticket, String queue, boolean nowait) implements QueueMethod {
        public Purge {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
        }

        /** With the reserved fields at the values clients send. */
        public Purge(String queue, boolean nowait) {
            this(0, queue, nowait);
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_PURGE;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code queue.purge-ok}: how many messages the purge removed. */
    record PurgeOk(long messageCount) implements QueueMethod {
        public PurgeOk {
            Check.uint(messageCount, "messageCount");
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_PURGE_OK;
        }
    }

    /** {@code queue.delete}: deletes a queue. Reserved: {@code ticket}. */
    record Delete(int ticket, String queue, boolean ifUnused, boolean ifEmpty, boolean nowait) implements QueueMethod {
        public Delete {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
        }

        /** With the reserved fields at the values clients send. */
        public Delete(String queue, boolean ifUnused, boolean ifEmpty, boolean nowait) {
            this(0, queue, ifUnused, ifEmpty, nowait);
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_DELETE;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code queue.delete-ok}: how many messages the deleted queue held. */
    record DeleteOk(long messageCount) implements QueueMethod {
        public DeleteOk {
            Check.uint(messageCount, "messageCount");
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_DELETE_OK;
        }
    }

    /** {@code queue.unbind}: removes a binding (no {@code nowait}: always synchronous). Reserved: {@code ticket}. */
    record Unbind(int ticket, String queue, String exchange, String routingKey, FieldTable arguments)
            implements QueueMethod {
        public Unbind {
            Check.ushort(ticket, "ticket");
            Check.present(queue, "queue");
            Check.present(exchange, "exchange");
            Check.present(routingKey, "routingKey");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Unbind(String queue, String exchange, String routingKey, FieldTable arguments) {
            this(0, queue, exchange, routingKey, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.QUEUE_UNBIND;
        }
    }

    /** {@code queue.unbind-ok}: the binding is gone. */
    record UnbindOk() implements QueueMethod {
        @Override
        public MethodId id() {
            return MethodId.QUEUE_UNBIND_OK;
        }
    }
}
