package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.FrameTooLargeException;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.UnexpectedFrameException;
import io.ganglion.amqp.protocol.UnknownMethodException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AmqpFrameDecoderTest {
    private static final String HEADER_0_9_1 = "414d515000000901";
    private static final String HEARTBEAT = "08 0000 00000000 ce";
    private static final String BODY_HELLO = "03 0001 00000005 68656c6c6f ce";

    private final AmqpFrameDecoder decoder = new AmqpFrameDecoder();
    private final EmbeddedChannel channel = new EmbeddedChannel(decoder);

    @AfterEach
    void finish() {
        channel.finishAndReleaseAll();
    }

    private List<Object> read() {
        List<Object> messages = new ArrayList<>();
        for (Object message = channel.readInbound(); message != null; message = channel.readInbound()) {
            messages.add(message);
        }
        return messages;
    }

    private void handshake() {
        channel.writeInbound(Hex.buffer(HEADER_0_9_1));
        assertThat(read()).containsExactly(new ProtocolHeader.Accepted());
    }

    private static ByteBuf frame(int type, int channel, String payloadHex) {
        byte[] payload = Hex.bytes(payloadHex);
        ByteBuf frame = Unpooled.buffer();
        FrameCodec.writeFrameHeader(frame, type, channel, payload.length);
        return frame.writeBytes(payload).writeByte(FrameDescriptor.FRAME_END);
    }

    private static ByteBuf bodyFrame(int channel, int size) {
        ByteBuf frame = Unpooled.buffer();
        FrameCodec.writeFrameHeader(frame, FrameDescriptor.FRAME_BODY, channel, size);
        return frame.writeZero(size).writeByte(FrameDescriptor.FRAME_END);
    }

    @Test
    void shouldAcceptTheAmqp091ProtocolHeader() {
        channel.writeInbound(Hex.buffer(HEADER_0_9_1));

        assertThat(read()).containsExactly(new ProtocolHeader.Accepted());
        assertThat(decoder.isDiscarding()).isFalse();
    }

    @Test
    void shouldAcceptTheAmqp09ProtocolHeaderLikeRabbitMq() {
        channel.writeInbound(Hex.buffer("414d515001010009"));

        assertThat(read()).containsExactly(new ProtocolHeader.Accepted());
    }

    @Test
    void shouldReportAWrongProtocolHeaderAndIgnoreWhatFollows() {
        channel.writeInbound(Hex.buffer("414d5150 00000900" + HEARTBEAT));

        assertThat(read()).containsExactly(new ProtocolHeader.Rejected(Hex.bytes("414d515000000900")));
        assertThat(decoder.isDiscarding()).isTrue();
        channel.writeInbound(Hex.buffer(HEARTBEAT));
        assertThat(read()).isEmpty();
    }

    @Test
    void shouldReportAnHttpRequestAsAWrongProtocolHeader() {
        channel.writeInbound(Unpooled.copiedBuffer("GET / HTTP/1.1\r\n", StandardCharsets.US_ASCII));

        assertThat(read()).containsExactly(new ProtocolHeader.Rejected("GET / HT".getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void shouldWaitForTheWholeProtocolHeader() {
        channel.writeInbound(Hex.buffer("414d5150"));
        assertThat(read()).isEmpty();

        channel.writeInbound(Hex.buffer("00000901"));
        assertThat(read()).containsExactly(new ProtocolHeader.Accepted());
    }

    @Test
    void shouldSendOurProtocolHeaderBytes() {
        assertThat(Hex.of(ByteBufUtilities.toArray(FrameDescriptor.protocolHeader())))
                .isEqualTo(HEADER_0_9_1);
    }

    @Test
    void shouldDecodeMethodFramesByteExact() {
        handshake();

        channel.writeInbound(Hex.buffer(MethodCodecTest.PUBLISH_FRAME + MethodCodecTest.START_FRAME));

        assertThat(read())
                .containsExactly(
                        new MethodFrame(1, new BasicMethod.Publish("amq.direct", "rk", true, false)),
                        new MethodFrame(0, MethodCodecTest.rabbitStyleStart()));
    }

    @Test
    void shouldDecodeHeaderBodyAndHeartbeatFrames() {
        handshake();

        channel.writeInbound(Hex.buffer(ContentHeaderCodecTest.ALL_PROPERTIES_FRAME + BODY_HELLO + HEARTBEAT));

        List<Object> frames = read();
        assertThat(frames.get(0))
                .isEqualTo(new HeaderFrame(1, ContentHeader.basic(5, ContentHeaderCodecTest.allProperties())));
        assertThat(frames.get(1)).isInstanceOfSatisfying(BodyFrame.class, body -> {
            assertThat(body.channel()).isEqualTo(1);
            assertThat(body.content().toString(StandardCharsets.US_ASCII)).isEqualTo("hello");
            body.release();
        });
        assertThat(frames.get(2)).isEqualTo(HeartbeatFrame.INSTANCE);
    }

    @Test
    void shouldDecodeFramesFedOneOctetAtATime() {
        handshake();
        byte[] bytes = Hex.bytes(MethodCodecTest.DELIVER_FRAME + HEARTBEAT + MethodCodecTest.QUEUE_DECLARE_FRAME);

        List<Object> frames = new ArrayList<>();
        for (byte b : bytes) {
            channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
            frames.addAll(read());
        }

        assertThat(frames).hasSize(3);
        assertThat(frames.get(0)).isEqualTo(new MethodFrame(1, new BasicMethod.Deliver("ctag", 42, true, "", "q")));
        assertThat(frames.get(1)).isEqualTo(HeartbeatFrame.INSTANCE);
        assertThat(frames.get(2)).isInstanceOf(MethodFrame.class);
    }

    @Test
    void shouldDecodeBodyAsARetainedSliceNotACopy() {
        handshake();
        ByteBuf received = Hex.buffer(BODY_HELLO);
        received.retain(); // keep a hand on the bytes the decoder was given

        channel.writeInbound(received);
        BodyFrame body = (BodyFrame) read().getFirst();
        received.setByte(7, 'j'); // the first payload octet, in the buffer the client's bytes arrived in

        assertThat(body.content().toString(StandardCharsets.US_ASCII))
                .as("the body shares the received memory")
                .isEqualTo("jello");
        body.release();
        received.release();
        assertThat(received.refCnt())
                .as("the slice held the only other reference")
                .isZero();
    }

    @Test
    void shouldEnforceTheInitialFrameSizeBeforeTheWholeFrameArrives() {
        handshake();

        // only the frame header of a frame of 4097 octets: refused before its payload is buffered
        ByteBuf header = Unpooled.buffer();
        FrameCodec.writeFrameHeader(header, FrameDescriptor.FRAME_BODY, 1, 4097);

        assertThatThrownBy(() -> channel.writeInbound(header))
                .isInstanceOfSatisfying(FrameTooLargeException.class, e -> {
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
                    assertThat(e.payloadSize()).isEqualTo(4097);
                    assertThat(e.limit()).isEqualTo(4096);
                });
        assertThat(decoder.isDiscarding()).isTrue();
    }

    @Test
    void shouldAcceptPayloadUpToFrameMaxLikeRabbitMq() {
        handshake();

        channel.writeInbound(bodyFrame(1, 4096));

        BodyFrame body = (BodyFrame) read().getFirst();
        assertThat(body.content().readableBytes()).isEqualTo(4096);
        body.release();
    }

    @Test
    void shouldEnforceTheNegotiatedFrameMaxAfterTuneOk() {
        handshake();
        decoder.frameMax(131_072);

        channel.writeInbound(bodyFrame(1, 100_000));
        BodyFrame body = (BodyFrame) read().getFirst();
        assertThat(body.content().readableBytes()).isEqualTo(100_000);
        body.release();

        assertThatThrownBy(() -> channel.writeInbound(bodyFrame(1, 131_073)))
                .isInstanceOf(FrameTooLargeException.class);
    }

    @Test
    void shouldRefuseAFrameMaxBelowTheMinimum() {
        assertThatThrownBy(() -> decoder.frameMax(4095)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseABadFrameEndAndStopDecoding() {
        handshake();

        assertThatThrownBy(() -> channel.writeInbound(Hex.buffer("08 0000 00000000 cf" + HEARTBEAT)))
                .isInstanceOfSatisfying(FrameErrorException.class, e -> {
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
                    assertThat(e.explanation()).contains("frame end");
                });
        assertThat(read()).as("nothing after a lost frame boundary").isEmpty();
        assertThat(decoder.isDiscarding()).isTrue();
    }

    @Test
    void shouldRefuseAnUnknownFrameTypeAndGoOnDecoding() {
        handshake();

        assertThatThrownBy(() -> channel.writeInbound(Hex.buffer("04 0001 00000001 00 ce" + HEARTBEAT)))
                .isInstanceOfSatisfying(FrameErrorException.class, e -> {
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
                    assertThat(e.explanation()).contains("unknown frame type 4");
                });
        assertThat(read()).as("frame sync is intact").containsExactly(HeartbeatFrame.INSTANCE);
    }

    @Test
    void shouldDeliverFramesBeforeAFaultFirst() {
        handshake();
        List<Object> seen = new ArrayList<>();
        channel.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                seen.add(msg);
            }

            @Override
            public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                seen.add(cause);
            }
        });

        channel.writeInbound(Hex.buffer(HEARTBEAT + "08 0000 00000000 00"));

        assertThat(seen).hasSize(2);
        assertThat(seen.get(0)).isEqualTo(HeartbeatFrame.INSTANCE);
        assertThat(seen.get(1)).isInstanceOf(FrameErrorException.class);
    }

    @Test
    void shouldRefuseAHeartbeatWithAPayloadWithFrameError() {
        handshake();

        assertThatThrownBy(() -> channel.writeInbound(Hex.buffer("08 0000 00000001 00 ce")))
                .isInstanceOf(FrameErrorException.class);
    }

    @Test
    void shouldRefuseAHeartbeatOnAChannelWithUnexpectedFrame() {
        handshake();

        assertThatThrownBy(() -> channel.writeInbound(Hex.buffer("08 0001 00000000 ce")))
                .isInstanceOfSatisfying(
                        UnexpectedFrameException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.UNEXPECTED_FRAME));
    }

    @Test
    void shouldRefuseContentOnChannelZeroWithUnexpectedFrame() {
        handshake();

        assertThatThrownBy(() -> channel.writeInbound(Hex.buffer("03 0000 00000001 00 ce")))
                .isInstanceOf(UnexpectedFrameException.class);
        assertThatThrownBy(() ->
                        channel.writeInbound(frame(FrameDescriptor.FRAME_HEADER, 0, "003c 0000 0000000000000000 0000")))
                .isInstanceOf(UnexpectedFrameException.class);
    }

    @Test
    void shouldRefuseAnUnknownMethodWithCommandInvalidAndGoOnDecoding() {
        handshake();

        assertThatThrownBy(() -> channel.writeInbound(frame(FrameDescriptor.FRAME_METHOD, 1, "003c 00c8")))
                .isInstanceOfSatisfying(
                        UnknownMethodException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.COMMAND_INVALID));
        channel.writeInbound(frame(FrameDescriptor.FRAME_METHOD, 0, "000a 0033"));
        assertThat(read()).containsExactly(new MethodFrame(0, new ConnectionMethod.CloseOk()));
    }

    @Test
    void shouldRefuseATruncatedMethodInsideAWholeFrameWithFrameError() {
        handshake();

        // channel.close with its reply text cut short: the frame is whole, the method is not
        assertThatThrownBy(() -> channel.writeInbound(frame(FrameDescriptor.FRAME_METHOD, 1, "0014 0028 0140 05 6279")))
                .isInstanceOfSatisfying(FrameErrorException.class, e -> {
                    assertThat(e.classId()).isEqualTo(20);
                    assertThat(e.methodId()).isEqualTo(40);
                });
    }

    @Test
    void shouldRefuseABadTableTypeTagInAMethodWithFrameErrorCarryingTheMethod() {
        handshake();
        String declare = Hex.normalize(MethodCodecTest.QUEUE_DECLARE_FRAME).replace("53000000067175", "5a000000067175");

        assertThatThrownBy(() -> channel.writeInbound(Hex.buffer(declare)))
                .isInstanceOfSatisfying(FrameErrorException.class, e -> {
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
                    assertThat(e.classId()).isEqualTo(50);
                    assertThat(e.methodId()).isEqualTo(10);
                    assertThat(e.replyText())
                            .isEqualTo("FRAME_ERROR - cannot decode queue.declare: unknown field value type tag 'Z'");
                });
    }

    @Test
    void shouldDropATruncatedFrameWhenTheConnectionCloses() {
        handshake();

        channel.writeInbound(Unpooled.wrappedBuffer(Hex.bytes(MethodCodecTest.PUBLISH_FRAME), 0, 20));

        assertThat(channel.finish()).as("nothing decoded, nothing thrown").isFalse();
    }

    @Test
    void shouldKeepAPartialFrameUntilTheRestArrives() {
        handshake();
        byte[] close = Hex.bytes("01 0001 0000000b 0014 0028 00c8 00 0000 0000 ce");

        channel.writeInbound(Unpooled.wrappedBuffer(close, 0, 9));
        assertThat(read()).isEmpty();
        channel.writeInbound(Unpooled.wrappedBuffer(close, 9, close.length - 9));

        assertThat(read()).containsExactly(new MethodFrame(1, new ChannelMethod.Close(200, "", 0, 0)));
    }

    @Test
    void shouldNeverLetAnUncheckedExceptionEscapeOnGarbage() {
        handshake();
        decoder.frameMax(0);
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        for (int i = 0; i < 2000; i++) {
            int type = new int[] {1, 2, 3, 8, 4}[random.nextInt(5)];
            byte[] payload = new byte[random.nextInt(40)];
            random.nextBytes(payload);
            if (type == 1 && payload.length >= 4) {
                // a known class and method, so the arguments get parsed
                payload[0] = 0;
                payload[1] = (byte) new int[] {10, 20, 40, 50, 60}[random.nextInt(5)];
                payload[2] = 0;
                payload[3] = (byte) (10 * (1 + random.nextInt(4)));
            }
            ByteBuf frame = Unpooled.buffer();
            FrameCodec.writeFrameHeader(frame, type, 1 + random.nextInt(3), payload.length);
            frame.writeBytes(payload).writeByte(FrameDescriptor.FRAME_END);
            try {
                channel.writeInbound(frame);
            } catch (AmqpException expected) {
                assertThat(expected.isHardError()).isTrue();
                assertThat(expected.replyCode()).isNotEqualTo(ReplyCode.INTERNAL_ERROR);
            }
            for (Object message = channel.readInbound(); message != null; message = channel.readInbound()) {
                io.netty.util.ReferenceCountUtil.release(message);
            }
        }
        assertThat(decoder.isDiscarding())
                .as("well framed garbage never loses frame sync")
                .isFalse();
    }
}
