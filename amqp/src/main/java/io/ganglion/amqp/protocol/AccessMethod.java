package io.ganglion.amqp.protocol;

/**
 * The methods of class access ({@link ClassId#ACCESS}). Access tickets: gone from 0-9-1, but RabbitMQ still answers
 * {@code access.request} with ticket 1.
 */
public sealed interface AccessMethod extends Method {
    /** {@code access.request}: requests an access ticket. */
    record Request(String realm, boolean exclusive, boolean passive, boolean active, boolean write, boolean read)
            implements AccessMethod {
        public Request {
            Check.present(realm, "realm");
        }

        @Override
        public MethodId id() {
            return MethodId.ACCESS_REQUEST;
        }
    }

    /** {@code access.request-ok}: grants an access ticket. */
    record RequestOk(int ticket) implements AccessMethod {
        public RequestOk {
            Check.ushort(ticket, "ticket");
        }

        @Override
        public MethodId id() {
            return MethodId.ACCESS_REQUEST_OK;
        }
    }
}
