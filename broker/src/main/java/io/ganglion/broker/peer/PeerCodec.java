package io.ganglion.broker.peer;

import static io.ganglion.broker.peer.PeerFrameDescriptor.BODY_OFFSET;
import static io.ganglion.broker.peer.PeerFrameDescriptor.HEADER_LENGTH;
import static io.ganglion.broker.peer.PeerFrameDescriptor.MIN_LENGTH;

import io.ganglion.broker.peer.PeerProtocolException.Reason;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.MessageToByteEncoder;
import java.util.List;

/**
 * The one codec of the peer link: every {@link PeerMessage} to a frame and back, in the layout of {@link
 * PeerFrameDescriptor}.
 *
 * <pre>
 *   bytes ──decode──> PeerMessage ... ──fault──> PeerProtocolException thrown, then DISCARDING (all input skipped)
 *   PeerMessage ──encode──> one frame, in a buffer of exactly its size
 * </pre>
 *
 * <p>Decoding faults are thrown as {@link PeerProtocolException} with a {@link Reason}; Netty passes it to {@code
 * exceptionCaught} after every message decoded before it. The size limit is checked on the length field, before the
 * body is buffered, so a peer cannot make us hold more than one max-size frame. After a fault the framing can no
 * longer be trusted, so the decoder skips all further input; the connection handler closes the link.
 *
 * <p>Encoding a message whose frame would exceed the max frame length fails the write with an {@code
 * EncoderException} (caused by {@link IllegalArgumentException}): the peer would refuse it anyway.
 *
 * <p>Decoded messages own fresh arrays copied out of the frame; nothing refers to the channel's buffers after decode.
 *
 * <p>Implementation notes: a {@link CombinedChannelDuplexHandler} of a {@link Decoder} and an {@link Encoder}, as
 * Netty's own codecs are. One instance per channel (not sharable: the decoder holds the cumulation and the state), used
 * on the channel's event loop only. The static {@link #encode(PeerMessage, ByteBuf)}, {@link #decodeBody} and {@link
 * #encodedLength} are pure and usable anywhere; they delegate to {@link PeerFrameWriter} and
 * {@link PeerFrameReader}.
 */
public final class PeerCodec extends CombinedChannelDuplexHandler<PeerCodec.Decoder, PeerCodec.Encoder> {
    private final int maxFrameLength;

    /** A codec for frames up to {@link PeerFrameDescriptor#DEFAULT_MAX_FRAME_LENGTH}. */
    public PeerCodec() {
        this(PeerFrameDescriptor.DEFAULT_MAX_FRAME_LENGTH);
    }

    /**
     * @param maxFrameLength the largest length field accepted and sent
     * @throws IllegalArgumentException when outside what {@link PeerFrameDescriptor#checkMaxFrameLength} allows
     */
    public PeerCodec(int maxFrameLength) {
        this.maxFrameLength = PeerFrameDescriptor.checkMaxFrameLength(maxFrameLength);
        init(new Decoder(maxFrameLength), new Encoder(maxFrameLength));
    }

    public int maxFrameLength() {
        return maxFrameLength;
    }

    /** Whether a fault was seen and all further input is skipped. On the event loop. */
    public boolean isDiscarding() {
        return inboundHandler().discarding;
    }

    /** The inbound half: frames to messages. */
    static final class Decoder extends ByteToMessageDecoder {
        private final int maxFrameLength;
        private boolean discarding;

        Decoder(int maxFrameLength) {
            this.maxFrameLength = maxFrameLength;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (discarding) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (in.readableBytes() < HEADER_LENGTH) {
                return;
            }
            int start = in.readerIndex();
            long length = PeerFrameDescriptor.length(in, start);
            if (length < MIN_LENGTH) {
                throw discard(
                        in,
                        new PeerProtocolException(
                                Reason.BAD_LENGTH, "frame length " + length + " is below " + MIN_LENGTH));
            }
            if (length > maxFrameLength) {
                throw discard(
                        in,
                        new PeerProtocolException(
                                Reason.TOO_LONG,
                                "frame length " + length + " exceeds the max frame length " + maxFrameLength));
            }
            int frameSize = PeerFrameDescriptor.frameSize((int) length);
            if (in.readableBytes() < frameSize) {
                return;
            }
            int type = PeerFrameDescriptor.type(in, start);
            ByteBuf body = in.slice(start + BODY_OFFSET, (int) length - PeerFrameDescriptor.TYPE_LENGTH);
            in.skipBytes(frameSize);
            try {
                out.add(decodeBody(type, body));
            } catch (PeerProtocolException e) {
                throw discard(in, e);
            }
        }

        private PeerProtocolException discard(ByteBuf in, PeerProtocolException fault) {
            discarding = true;
            in.skipBytes(in.readableBytes());
            return fault;
        }
    }

    /** The outbound half: messages to frames, each in a buffer of exactly its size. */
    static final class Encoder extends MessageToByteEncoder<PeerMessage> {
        private final int maxFrameLength;

        Encoder(int maxFrameLength) {
            super(PeerMessage.class);
            this.maxFrameLength = maxFrameLength;
        }

        @Override
        protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, PeerMessage message, boolean preferDirect) {
            int length = encodedLength(message);
            if (length > maxFrameLength) {
                throw PeerFrameWriter.tooLongToSend(message, length, maxFrameLength);
            }
            int size = PeerFrameDescriptor.frameSize(length);
            return preferDirect ? ctx.alloc().ioBuffer(size) : ctx.alloc().heapBuffer(size);
        }

        @Override
        protected void encode(ChannelHandlerContext ctx, PeerMessage message, ByteBuf out) {
            PeerCodec.encode(message, out);
        }
    }

    /**
     * Writes {@code message} as one frame at {@code out}'s writer index. Does not check the max frame length.
     *
     * @throws IllegalArgumentException when a string is longer than {@link PeerFrameDescriptor#STRING_MAX_LENGTH}
     *     octets; {@code out} may then hold part of the frame
     */
    public static void encode(PeerMessage message, ByteBuf out) {
        PeerFrameWriter.encode(message, out);
    }

    /** The length field {@link #encode} writes for {@code message}: type and body octets. */
    public static int encodedLength(PeerMessage message) {
        return PeerFrameWriter.encodedLength(message);
    }

    /**
     * Decodes one frame's body of type {@code type}: all of {@code body}'s readable octets, which it consumes.
     *
     * @throws PeerProtocolException with {@link Reason#UNKNOWN_TYPE}, {@link Reason#TRUNCATED} or {@link
     *     Reason#MALFORMED}; {@code body}'s reader index is then unspecified
     */
    public static PeerMessage decodeBody(int type, ByteBuf body) {
        return PeerFrameReader.decodeBody(type, body);
    }
}
