package io.ganglion.amqp.protocol;

/** The methods of class confirm ({@link ClassId#CONFIRM}). RabbitMQ extension: publisher confirms. */
public sealed interface ConfirmMethod extends Method {
    /** {@code confirm.select}: puts the channel in confirm mode. */
    record Select(boolean nowait) implements ConfirmMethod {
        @Override
        public MethodId id() {
            return MethodId.CONFIRM_SELECT;
        }

        @Override
        public boolean isSynchronous() {
            return !nowait;
        }
    }

    /** {@code confirm.select-ok}: the channel is in confirm mode. */
    record SelectOk() implements ConfirmMethod {
        @Override
        public MethodId id() {
            return MethodId.CONFIRM_SELECT_OK;
        }
    }
}
