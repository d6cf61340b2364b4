package io.ganglion.amqp.codec;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A content header frame: {@link FrameDescriptor#FRAME_HEADER}. Never on channel 0.
 *
 * @param header the decoded header
 * @param payload the header's payload octets as received (class, weight, body size, property flags, properties), a
 *     heap buffer not to be modified; a publish's message record and its deliveries carry these octets as they are
 */
public record HeaderFrame(int channel, ContentHeader header, ByteBuffer payload) implements Frame {
    public HeaderFrame {
        FrameDescriptor.checkChannel(channel);
        Objects.requireNonNull(header, "header");
        Objects.requireNonNull(payload, "payload");
    }

    /**
     * A header frame with {@code header}'s own encoding as its payload.
     *
     * @throws io.ganglion.amqp.protocol.SyntaxErrorException when a short string property is longer than 255 octets
     */
    public HeaderFrame(int channel, ContentHeader header) {
        this(channel, header, ContentHeaderCodec.encoded(header));
    }

    /** Equal by channel and decoded header: two encodings of the same properties are the same frame. */
    @Override
    public boolean equals(Object other) {
        return this == other
                || other instanceof HeaderFrame that && channel == that.channel && header.equals(that.header);
    }

    @Override
    public int hashCode() {
        return 31 * header.hashCode() + channel;
    }
}
