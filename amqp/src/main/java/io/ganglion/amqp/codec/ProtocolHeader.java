package io.ganglion.amqp.codec;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * What {@link AmqpFrameDecoder} makes of the 8 octets a client opens with. On {@link Accepted} the connection sends
 * {@code connection.start}; on {@link Rejected} it sends {@link FrameDescriptor#protocolHeader()} and closes, as
 * RabbitMQ does, and the decoder ignores everything after.
 */
public sealed interface ProtocolHeader {
    /** {@code "AMQP" 0 0 9 1}, or {@code "AMQP" 1 1 0 9} (0-9), which RabbitMQ also accepts and answers in 0-9-1. */
    record Accepted() implements ProtocolHeader {}

    /** Any other 8 octets: another protocol version, TLS on the plain port, an HTTP request. */
    record Rejected(byte[] received) implements ProtocolHeader {
        public Rejected {
            received = received.clone();
        }

        @Override
        public byte[] received() {
            return received.clone();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Rejected that && Arrays.equals(received, that.received);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(received);
        }

        @Override
        public String toString() {
            return "Rejected[received=" + HexFormat.of().formatHex(received) + "]";
        }
    }
}
