package io.ganglion.metadata.ratis;

import io.ganglion.metadata.Rejection;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * What the state machine answers the proposer of one log entry, in the Ratis reply message.
 *
 * <pre>
 *   0                       accepted
 *   1 kind(1) message       rejected by the image, with the rejection
 *   2 reason                not applied: the entry did not decode, or applying it failed; the image is unchanged
 * </pre>
 */
sealed interface ProposalReply {

    record Accepted() implements ProposalReply {}

    record Rejected(Rejection rejection) implements ProposalReply {
        public Rejected {
            Objects.requireNonNull(rejection, "rejection");
        }
    }

    record NotApplied(String reason) implements ProposalReply {
        public NotApplied {
            Objects.requireNonNull(reason, "reason");
        }
    }

    byte ACCEPTED = 0;
    byte REJECTED = 1;
    byte NOT_APPLIED = 2;

    static byte[] encode(ProposalReply reply) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(32);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            switch (reply) {
                case Accepted a -> out.writeByte(ACCEPTED);
                case Rejected r -> {
                    out.writeByte(REJECTED);
                    out.writeByte(r.rejection().kind().ordinal());
                    out.writeUTF(truncated(r.rejection().message()));
                }
                case NotApplied n -> {
                    out.writeByte(NOT_APPLIED);
                    out.writeUTF(truncated(n.reason()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return bytes.toByteArray();
    }

    /**
     * Decodes a reply.
     *
     * @throws IOException if the bytes are not a reply this version writes
     */
    static ProposalReply decode(byte[] bytes) throws IOException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int tag = in.readUnsignedByte();
            ProposalReply reply = switch (tag) {
                case ACCEPTED -> new Accepted();
                case REJECTED -> {
                    int kind = in.readUnsignedByte();
                    if (kind >= Rejection.Kind.values().length) {
                        throw new IOException("unknown rejection kind " + kind);
                    }
                    yield new Rejected(new Rejection(Rejection.Kind.values()[kind], in.readUTF()));
                }
                case NOT_APPLIED -> new NotApplied(in.readUTF());
                default -> throw new IOException("unknown proposal reply tag " + tag);
            };
            if (in.available() > 0) {
                throw new IOException("trailing bytes after proposal reply " + reply);
            }
            return reply;
        }
    }

    /** Keeps a message within what {@link DataOutputStream#writeUTF} takes, whatever its characters. */
    private static String truncated(String message) {
        return message.length() > 16_000 ? message.substring(0, 16_000) + "…" : message;
    }
}
