package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CommandEncoderTest {
    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;
    private static final BasicMethod.Deliver DELIVER = new BasicMethod.Deliver("ctag", 42, true, "", "q");

    private static ByteBuf body(int size, long seed) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return Unpooled.wrappedBuffer(bytes);
    }

    /** Splits encoded octets back into frames with the decoder, checking every frame is well formed. */
    private static List<Frame> frames(ByteBuf encoded) {
        EmbeddedChannel channel = new EmbeddedChannel(new AmqpFrameDecoder(false, 0));
        channel.writeInbound(encoded);
        List<Frame> frames = new ArrayList<>();
        for (Object frame = channel.readInbound(); frame != null; frame = channel.readInbound()) {
            frames.add((Frame) frame);
        }
        channel.finishAndReleaseAll();
        return frames;
    }

    private static int bodyPayload(Frame frame) {
        return ((BodyFrame) frame).content().readableBytes();
    }

    @Test
    void shouldEncodeContentCommandByteForByte() {
        ContentCommand command = new ContentCommand(
                1,
                new BasicMethod.Publish("amq.direct", "rk", true, false),
                ContentHeaderCodecTest.allProperties(),
                Unpooled.copiedBuffer("hello", java.nio.charset.StandardCharsets.US_ASCII));

        ByteBuf encoded = CommandEncoder.encode(ALLOC, command, 4096);

        assertThat(Hex.of(ByteBufUtilities.toArray(encoded)))
                .isEqualTo(Hex.normalize(MethodCodecTest.PUBLISH_FRAME
                        + ContentHeaderCodecTest.ALL_PROPERTIES_FRAME
                        + "03 0001 00000005 68656c6c6f ce"));
        command.release();
    }

    @Test
    void shouldSplitBodyAtFrameMaxMinusEight() {
        ContentCommand command = new ContentCommand(1, DELIVER, BasicProperties.EMPTY, body(10_000, 1));

        List<Frame> frames = frames(CommandEncoder.encode(ALLOC, command, 4096));

        assertThat(frames).hasSize(5);
        assertThat(frames.get(0)).isEqualTo(new MethodFrame(1, DELIVER));
        assertThat(frames.get(1)).isEqualTo(new HeaderFrame(1, ContentHeader.basic(10_000, BasicProperties.EMPTY)));
        assertThat(bodyPayload(frames.get(2))).isEqualTo(4088);
        assertThat(bodyPayload(frames.get(3))).isEqualTo(4088);
        assertThat(bodyPayload(frames.get(4))).isEqualTo(10_000 - 2 * 4088);
        frames.forEach(io.netty.util.ReferenceCountUtil::release);
        command.release();
    }

    @Test
    void shouldWriteNoBodyFrameForAnEmptyBody() {
        ContentCommand command = new ContentCommand(1, DELIVER, BasicProperties.EMPTY, Unpooled.EMPTY_BUFFER);

        List<Frame> frames = frames(CommandEncoder.encode(ALLOC, command, 4096));

        assertThat(frames)
                .containsExactly(
                        new MethodFrame(1, DELIVER), new HeaderFrame(1, ContentHeader.basic(0, BasicProperties.EMPTY)));
    }

    @Test
    void shouldWriteOneBodyFrameWhenTheBodyFillsAFrameExactly() {
        ContentCommand command = new ContentCommand(1, DELIVER, BasicProperties.EMPTY, body(4088, 2));

        List<Frame> frames = frames(CommandEncoder.encode(ALLOC, command, 4096));

        assertThat(frames).hasSize(3);
        assertThat(bodyPayload(frames.get(2))).isEqualTo(4088);
        frames.forEach(io.netty.util.ReferenceCountUtil::release);
        command.release();
    }

    @ParameterizedTest(name = "body of {0} octets")
    @ValueSource(ints = {1, 100, CommandEncoder.COPY_THRESHOLD, CommandEncoder.COPY_THRESHOLD + 1, 8176, 8177, 65_536})
    void shouldCarryTheBodyUnchangedWhetherCopiedOrSliced(int size) {
        ByteBuf body = body(size, size);
        ContentCommand command = new ContentCommand(3, DELIVER, BasicProperties.EMPTY, body.retainedDuplicate());

        ByteBuf encoded = CommandEncoder.encode(ALLOC, command, 4096);
        command.release();
        List<Frame> frames = frames(encoded);

        ByteBuf reassembled = Unpooled.buffer();
        for (Frame frame : frames.subList(2, frames.size())) {
            assertThat(bodyPayload(frame)).isLessThanOrEqualTo(4088);
            reassembled.writeBytes(((BodyFrame) frame).content());
            ((BodyFrame) frame).release();
        }
        assertThat(frames).hasSize(2 + (size - 1) / 4088 + 1);
        assertThat(reassembled).isEqualTo(body);
        body.release();
    }

    @Test
    void shouldSliceLargeBodiesInsteadOfCopyingThem() {
        ByteBuf body = body(10_000, 3);
        ContentCommand command = new ContentCommand(1, DELIVER, BasicProperties.EMPTY, body);

        ByteBuf encoded = CommandEncoder.encode(ALLOC, command, 4096);

        assertThat(encoded).isInstanceOf(CompositeByteBuf.class);
        assertThat(((CompositeByteBuf) encoded).numComponents()).isEqualTo(2 * 3 + 1);
        assertThat(body.refCnt()).as("each slice holds a reference").isEqualTo(1 + 3);
        encoded.release();
        command.release();
        assertThat(body.refCnt()).isZero();
    }

    @Test
    void shouldEncodeAMethodCommandAsOneFrame() {
        ByteBuf encoded = CommandEncoder.encode(ALLOC, new MethodCommand(2, new ChannelMethod.CloseOk()), 4096);

        assertThat(Hex.of(ByteBufUtilities.toArray(encoded))).isEqualTo("0100020000000400140029ce");
    }

    @Test
    void shouldReleaseNothingAndLeakNothingWhenEncodingFails() {
        ByteBuf body = body(10, 4);
        ContentCommand command = new ContentCommand(
                1, new BasicMethod.Publish("", "k".repeat(256), false, false), BasicProperties.EMPTY, body);

        assertThatThrownBy(() -> CommandEncoder.encode(ALLOC, command, 4096)).isInstanceOf(SyntaxErrorException.class);
        assertThat(body.refCnt()).as("the command still owns its body").isEqualTo(1);
        command.release();
    }

    @Test
    void shouldRefuseContentMethodsInAMethodCommand() {
        assertThatThrownBy(() -> new MethodCommand(1, DELIVER)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldWriteFramesAndCommandsThroughTheEncoderHandler() {
        AmqpFrameEncoder encoder = new AmqpFrameEncoder();
        EmbeddedChannel channel = new EmbeddedChannel(encoder);
        encoder.frameMax(131_072);
        ByteBuf body = body(100_000, 5);

        channel.writeOutbound(HeartbeatFrame.INSTANCE);
        channel.writeOutbound(new ContentCommand(1, DELIVER, BasicProperties.EMPTY, body.retainedDuplicate()));
        channel.writeOutbound(FrameDescriptor.protocolHeader());

        assertThat(Hex.of(ByteBufUtilities.toArray(channel.readOutbound())))
                .isEqualTo(Hex.normalize("08 0000 00000000 ce"));
        List<Frame> frames = frames(channel.readOutbound());
        assertThat(frames).hasSize(3);
        assertThat(((BodyFrame) frames.get(2)).content()).isEqualTo(body);
        frames.forEach(io.netty.util.ReferenceCountUtil::release);
        assertThat(Hex.of(ByteBufUtilities.toArray(channel.readOutbound()))).isEqualTo("414d515000000901");
        assertThat(channel.finishAndReleaseAll()).isFalse();
        assertThat(body.refCnt()).as("the written command was released").isEqualTo(1);
        body.release();
    }

    @Test
    void shouldFailTheWriteOnAnOverlongShortString() {
        EmbeddedChannel channel = new EmbeddedChannel(new AmqpFrameEncoder());

        assertThatThrownBy(() ->
                        channel.writeOutbound(new MethodFrame(1, new ChannelMethod.Close(406, "x".repeat(300), 0, 0))))
                .isInstanceOf(EncoderException.class)
                .hasCauseInstanceOf(SyntaxErrorException.class);
        channel.finishAndReleaseAll();
    }

    @Test
    void shouldEncodeABodyFrameByCopying() {
        ByteBuf out = Unpooled.buffer();
        BodyFrame frame = new BodyFrame(1, Unpooled.copiedBuffer(new byte[] {'h', 'i'}));

        FrameCodec.encode(out, frame);

        assertThat(Hex.of(ByteBufUtilities.toArray(out))).isEqualTo("03000100000002" + "6869" + "ce");
        frame.release();
    }
}
