package io.ganglion.broker.peer;

import io.netty.handler.codec.DecoderException;
import java.util.Locale;
import java.util.Objects;

/**
 * A peer sent a frame we cannot decode, or a message its link's state forbids. The link it came on is closed; nothing
 * after it on that link can be trusted. Never thrown for a fault of ours.
 *
 * <p>It extends Netty's {@link DecoderException} so that {@code ByteToMessageDecoder} passes it down the pipeline as it
 * is, not wrapped.
 */
public final class PeerProtocolException extends DecoderException {
    private static final long serialVersionUID = 1L;

    /** What was wrong; its {@link #label()} is the {@code reason=} of the log line. */
    public enum Reason {
        /** The length field is below {@link PeerFrameDescriptor#MIN_LENGTH}: no room for the type. */
        BAD_LENGTH,
        /** The length field is above the link's max frame length. */
        TOO_LONG,
        /** No message has the type code. */
        UNKNOWN_TYPE,
        /** The body ends before the message does. */
        TRUNCATED,
        /** The body has the octets, but not a valid message: octets left over, a bool not 0 or 1, a bad value. */
        MALFORMED,
        /** A valid message the link's state forbids: anything before {@code Hello}, or a second {@code Hello}. */
        UNEXPECTED_MESSAGE;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Reason reason;

    public PeerProtocolException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public PeerProtocolException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
