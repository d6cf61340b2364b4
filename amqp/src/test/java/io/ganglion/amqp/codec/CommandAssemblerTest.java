package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.UnexpectedFrameException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CommandAssemblerTest {
    private static final BasicMethod.Publish PUBLISH = new BasicMethod.Publish("", "q", false, false);
    private static final BasicProperties PERSISTENT =
            BasicProperties.builder().deliveryMode(BasicProperties.PERSISTENT).build();

    private final CommandAssembler assembler = new CommandAssembler(1);

    private static BodyFrame body(String text) {
        return new BodyFrame(1, Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
    }

    private static HeaderFrame header(long bodySize) {
        return new HeaderFrame(1, ContentHeader.basic(bodySize, PERSISTENT));
    }

    @Test
    void shouldEmitAMethodWithoutContentAtOnce() {
        QueueMethod.Purge purge = new QueueMethod.Purge("q", false);

        assertThat(assembler.accept(new MethodFrame(1, purge))).contains(new MethodCommand(1, purge));
        assertThat(assembler.isAssembling()).isFalse();
    }

    @Test
    void shouldAssembleMethodHeaderAndBodiesIntoOneCommand() {
        assertThat(assembler.accept(new MethodFrame(1, PUBLISH))).isEmpty();
        assertThat(assembler.accept(header(11))).isEmpty();
        assertThat(assembler.accept(body("hello "))).isEmpty();
        assertThat(assembler.isAssembling()).isTrue();

        Optional<Command> command = assembler.accept(body("world"));

        assertThat(command).hasValueSatisfying(c -> {
            ContentCommand content = (ContentCommand) c;
            assertThat(content.channel()).isEqualTo(1);
            assertThat(content.method()).isEqualTo(PUBLISH);
            assertThat(content.properties()).isEqualTo(PERSISTENT);
            assertThat(content.body().toString(StandardCharsets.US_ASCII)).isEqualTo("hello world");
            assertThat(content.body()).as("the frames' slices, not a copy").isInstanceOf(CompositeByteBuf.class);
            content.release();
        });
        assertThat(assembler.isAssembling()).isFalse();
    }

    @Test
    void shouldHandOnASingleBodyFrameBufferItself() {
        BodyFrame frame = body("hello");
        ByteBuf received = frame.content();
        assembler.accept(new MethodFrame(1, PUBLISH));
        assembler.accept(header(5));

        ContentCommand command = (ContentCommand) assembler.accept(frame).orElseThrow();

        assertThat(command.body()).isSameAs(received);
        command.release();
        assertThat(received.refCnt()).isZero();
    }

    @Test
    void shouldCompleteAtTheHeaderWhenTheBodyIsEmpty() {
        assembler.accept(new MethodFrame(1, PUBLISH));

        ContentCommand command = (ContentCommand) assembler.accept(header(0)).orElseThrow();

        assertThat(command.body().readableBytes()).isZero();
        assertThat(assembler.isAssembling()).isFalse();
    }

    @Test
    void shouldAcceptEmptyBodyFramesBeforeTheEnd() {
        assembler.accept(new MethodFrame(1, PUBLISH));
        assembler.accept(header(2));
        BodyFrame empty = body("");

        assertThat(assembler.accept(empty)).isEmpty();
        assertThat(empty.refCnt()).as("an empty part is dropped at once").isZero();
        ContentCommand command = (ContentCommand) assembler.accept(body("ok")).orElseThrow();
        assertThat(command.body().toString(StandardCharsets.US_ASCII)).isEqualTo("ok");
        command.release();
    }

    @Test
    void shouldRefuseABodyFrameWithoutAHeaderWithUnexpectedFrame() {
        BodyFrame frame = body("x");

        assertThatThrownBy(() -> assembler.accept(frame)).isInstanceOfSatisfying(UnexpectedFrameException.class, e -> {
            assertThat(e.replyCode()).isEqualTo(ReplyCode.UNEXPECTED_FRAME);
            assertThat(e.isHardError()).isTrue();
        });
        assertThat(frame.refCnt()).isZero();
    }

    @Test
    void shouldRefuseAHeaderWithoutAMethodWithUnexpectedFrame() {
        assertThatThrownBy(() -> assembler.accept(header(1))).isInstanceOf(UnexpectedFrameException.class);
    }

    @Test
    void shouldRefuseAMethodWhereAHeaderIsExpectedWithUnexpectedFrameCarryingTheContentMethod() {
        assembler.accept(new MethodFrame(1, PUBLISH));

        assertThatThrownBy(() -> assembler.accept(new MethodFrame(1, PUBLISH)))
                .isInstanceOfSatisfying(UnexpectedFrameException.class, e -> {
                    assertThat(e.classId()).isEqualTo(60);
                    assertThat(e.methodId()).isEqualTo(40);
                    assertThat(e.explanation())
                            .isEqualTo("expected content header for class 60, got non content header frame instead");
                });
        assertThat(assembler.isAssembling()).as("reset after a fault").isFalse();
    }

    @Test
    void shouldRefuseAMethodInterleavedWithContentWithUnexpectedFrameAndReleaseTheParts() {
        BodyFrame first = body("hel");
        assembler.accept(new MethodFrame(1, PUBLISH));
        assembler.accept(header(5));
        assembler.accept(first);

        assertThatThrownBy(() -> assembler.accept(new MethodFrame(1, new BasicMethod.Ack(1, false))))
                .isInstanceOf(UnexpectedFrameException.class)
                .hasMessage("expected content body, got non content body frame instead");
        assertThat(first.refCnt()).as("partial content released").isZero();
        assertThat(assembler.isAssembling()).isFalse();
    }

    @Test
    void shouldRefuseAHeaderOfAnotherClassWithUnexpectedFrame() {
        assembler.accept(new MethodFrame(1, PUBLISH));

        assertThatThrownBy(
                        () -> assembler.accept(new HeaderFrame(1, new ContentHeader(50, 0, 1, BasicProperties.EMPTY))))
                .isInstanceOf(UnexpectedFrameException.class)
                .hasMessage("expected content header for class 60, got one for class 50 instead");
    }

    @Test
    void shouldRefuseAHeaderWithAWeightWithUnexpectedFrameLikeRabbitMq() {
        assembler.accept(new MethodFrame(1, PUBLISH));

        assertThatThrownBy(
                        () -> assembler.accept(new HeaderFrame(1, new ContentHeader(60, 1, 1, BasicProperties.EMPTY))))
                .isInstanceOf(UnexpectedFrameException.class);
    }

    @Test
    void shouldRefuseABodyLongerThanTheHeaderSaidWithFrameError() {
        BodyFrame first = body("hello");
        BodyFrame second = body("world!");
        assembler.accept(new MethodFrame(1, PUBLISH));
        assembler.accept(header(10));
        assembler.accept(first);

        assertThatThrownBy(() -> assembler.accept(second)).isInstanceOfSatisfying(FrameErrorException.class, e -> {
            assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
            assertThat(e.explanation()).isEqualTo("content body frame exceeds remaining content size");
        });
        assertThat(first.refCnt()).isZero();
        assertThat(second.refCnt()).isZero();
    }

    @Test
    void shouldRefuseABodySizeOverTheLimitWithFrameError() {
        CommandAssembler small = new CommandAssembler(1, 1000);
        small.accept(new MethodFrame(1, PUBLISH));

        assertThatThrownBy(() -> small.accept(header(1001)))
                .isInstanceOf(FrameErrorException.class)
                .hasMessage("content body size 1001 exceeds maximum allowed size 1000");
    }

    @Test
    void shouldRefuseABodySizeWithTheTopBitSetWithFrameError() {
        assembler.accept(new MethodFrame(1, PUBLISH));

        assertThatThrownBy(() -> assembler.accept(header(-1))).isInstanceOf(FrameErrorException.class);
    }

    @Test
    void shouldRefuseAFrameOfAnotherChannelAsAProgrammingErrorAndReleaseIt() {
        BodyFrame stray = new BodyFrame(2, Unpooled.copiedBuffer(new byte[] {1}));

        assertThatThrownBy(() -> assembler.accept(stray)).isInstanceOf(IllegalArgumentException.class);
        assertThat(stray.refCnt()).isZero();
    }

    @Test
    void shouldReleasePartialContentWhenTheChannelCloses() {
        BodyFrame first = body("hel");
        assembler.accept(new MethodFrame(1, PUBLISH));
        assembler.accept(header(5));
        assembler.accept(first);

        assembler.release();

        assertThat(first.refCnt()).isZero();
        assertThat(assembler.isAssembling()).isFalse();
    }

    @Test
    void shouldAssembleTheNextCommandAfterAFault() {
        assembler.accept(new MethodFrame(1, PUBLISH));
        assertThatThrownBy(() -> assembler.accept(body("x"))).isInstanceOf(UnexpectedFrameException.class);

        assertThat(assembler.accept(new MethodFrame(1, new BasicMethod.Ack(3, true))))
                .contains(new MethodCommand(1, new BasicMethod.Ack(3, true)));
    }
}
