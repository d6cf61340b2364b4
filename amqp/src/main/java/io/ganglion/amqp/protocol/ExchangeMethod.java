package io.ganglion.amqp.protocol;

/**
 * The methods of class exchange ({@link ClassId#EXCHANGE}). Work with exchanges, RabbitMQ's exchange-to-exchange
 * bindings included.
 */
public sealed interface ExchangeMethod extends Method {
    /**
     * {@code exchange.declare}: creates an exchange, or checks it exists ({@code passive}). Reserved: {@code ticket}.
     */
    record Declare(
            int ticket,
            String exchange,
            String type,
            boolean passive,
            boolean durable,
            boolean autoDelete,
            boolean internal,
            boolean nowait,
            FieldTable arguments)
            implements ExchangeMethod {
        public Declare {
            Check.ushort(ticket, "ticket");
            Check.present(exchange, "exchange");
            Check.present(type, "type");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Declare(
                String exchange,
                String type,
                boolean passive,
                boolean durable,
                boolean autoDelete,
                boolean internal,
                boolean nowait,
                FieldTable arguments) {
            this(0, exchange, type, passive, durable, autoDelete, internal, nowait, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_DECLARE;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code exchange.declare-ok}: the exchange is declared. */
    record DeclareOk() implements ExchangeMethod {
        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_DECLARE_OK;
        }
    }

    /** {@code exchange.delete}: deletes an exchange. Reserved: {@code ticket}. */
    record Delete(int ticket, String exchange, boolean ifUnused, boolean nowait) implements ExchangeMethod {
        public Delete {
            Check.ushort(ticket, "ticket");
            Check.present(exchange, "exchange");
        }

        /** With the reserved fields at the values clients send. */
        public Delete(String exchange, boolean ifUnused, boolean nowait) {
            this(0, exchange, ifUnused, nowait);
        }

        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_DELETE;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code exchange.delete-ok}: the exchange is deleted. */
    record DeleteOk() implements ExchangeMethod {
        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_DELETE_OK;
        }
    }

    /**
     * {@code exchange.bind}: rabbitMQ extension: binds exchange {@code destination} to exchange {@code source}.
     * Reserved: {@code ticket}.
     */
    record Bind(int ticket, String destination, String source, String routingKey, boolean nowait, FieldTable arguments)
            implements ExchangeMethod {
        public Bind {
            Check.ushort(ticket, "ticket");
            Check.present(destination, "destination");
            Check.present(source, "source");
            Check.present(routingKey, "routingKey");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Bind(String destination, String source, String routingKey, boolean nowait, FieldTable arguments) {
            this(0, destination, source, routingKey, nowait, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_BIND;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code exchange.bind-ok}: the exchange binding exists. */
    record BindOk() implements ExchangeMethod {
        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_BIND_OK;
        }
    }

    /**
     * {@code exchange.unbind}: rabbitMQ extension: removes an exchange-to-exchange binding. Reserved: {@code ticket}.
     */
    record Unbind(
            int ticket, String destination, String source, String routingKey, boolean nowait, FieldTable arguments)
            implements ExchangeMethod {
        public Unbind {
            Check.ushort(ticket, "ticket");
            Check.present(destination, "destination");
            Check.present(source, "source");
            Check.present(routingKey, "routingKey");
            Check.present(arguments, "arguments");
        }

        /** With the reserved fields at the values clients send. */
        public Unbind(String destination, String source, String routingKey, boolean nowait, FieldTable arguments) {
            this(0, destination, source, routingKey, nowait, arguments);
        }

        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_UNBIND;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code exchange.unbind-ok}: the exchange binding is gone (method id 51, as RabbitMQ numbers it). */
    record UnbindOk() implements ExchangeMethod {
        @Override
        public MethodId id() {
            return MethodId.EXCHANGE_UNBIND_OK;
        }
    }
}
