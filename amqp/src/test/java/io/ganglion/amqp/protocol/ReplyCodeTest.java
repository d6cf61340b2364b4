package io.ganglion.amqp.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ReplyCodeTest {
    @Test
    void shouldNumberEveryReplyCodeAsTheSpec() {
        assertThat(Arrays.stream(ReplyCode.values()).mapToInt(ReplyCode::code))
                .containsExactly(
                        200, 311, 312, 313, 320, 402, 403, 404, 405, 406, 501, 502, 503, 504, 505, 506, 530, 540, 541);
    }

    @Test
    void shouldClassifySoftErrorsAsRabbitMqDoes() {
        assertThat(ReplyCode.values())
                .filteredOn(ReplyCode::isSoftError)
                .containsExactly(
                        ReplyCode.CONTENT_TOO_LARGE,
                        ReplyCode.NO_ROUTE,
                        ReplyCode.NO_CONSUMERS,
                        ReplyCode.ACCESS_REFUSED,
                        ReplyCode.NOT_FOUND,
                        ReplyCode.RESOURCE_LOCKED,
                        ReplyCode.PRECONDITION_FAILED);
    }

    @Test
    void shouldClassifyHardErrorsAsRabbitMqDoes() {
        assertThat(ReplyCode.values())
                .filteredOn(ReplyCode::isHardError)
                .containsExactly(
                        ReplyCode.CONNECTION_FORCED,
                        ReplyCode.INVALID_PATH,
                        ReplyCode.FRAME_ERROR,
                        ReplyCode.SYNTAX_ERROR,
                        ReplyCode.COMMAND_INVALID,
                        ReplyCode.CHANNEL_ERROR,
                        ReplyCode.UNEXPECTED_FRAME,
                        ReplyCode.RESOURCE_ERROR,
                        ReplyCode.NOT_ALLOWED,
                        ReplyCode.NOT_IMPLEMENTED,
                        ReplyCode.INTERNAL_ERROR);
    }

    @Test
    void shouldTreatReplySuccessAsNeitherError() {
        assertThat(ReplyCode.REPLY_SUCCESS.scope()).isEqualTo(ReplyCode.Scope.NONE);
        assertThat(ReplyCode.REPLY_SUCCESS.isHardError()).isFalse();
        assertThat(ReplyCode.REPLY_SUCCESS.isSoftError()).isFalse();
    }

    @Test
    void shouldLookUpCodesByNumber() {
        assertThat(ReplyCode.of(404)).contains(ReplyCode.NOT_FOUND);
        assertThat(ReplyCode.of(999)).isEmpty();
    }

    @Test
    void shouldFormatReplyTextAsRabbitMq() {
        assertThat(ReplyCode.NOT_FOUND.replyText("no queue 'q' in vhost '/'"))
                .isEqualTo("NOT_FOUND - no queue 'q' in vhost '/'");
    }

    @Test
    void shouldCutReplyTextToAShortString() {
        String text = ReplyCode.PRECONDITION_FAILED.replyText("é".repeat(200));

        assertThat(ShortString.utf8Length(text)).isLessThanOrEqualTo(255);
        assertThat(text).startsWith("PRECONDITION_FAILED - éé");
    }

    @Test
    void shouldCarryReplyCodeAndMethodInFaults() {
        AmqpException fault = new UnexpectedFrameException("expected content body", 60, 40);

        assertThat(fault.replyCode()).isEqualTo(ReplyCode.UNEXPECTED_FRAME);
        assertThat(fault.isHardError()).isTrue();
        assertThat(fault.replyText()).isEqualTo("UNEXPECTED_FRAME - expected content body");
        assertThat(fault.classId()).isEqualTo(60);
        assertThat(fault.methodId()).isEqualTo(40);
        assertThat(fault.getStackTrace())
                .as("peer-triggered faults carry no stack")
                .isEmpty();
    }

    @Test
    void shouldMapEveryCodecFaultToItsReplyCode() {
        assertThat(new FrameErrorException("x").replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
        assertThat(new FrameTooLargeException(5000, 4096).replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
        assertThat(new SyntaxErrorException("x").replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR);
        assertThat(new UnknownMethodException(60, 200).replyCode()).isEqualTo(ReplyCode.COMMAND_INVALID);
        assertThat(new UnexpectedFrameException("x").replyCode()).isEqualTo(ReplyCode.UNEXPECTED_FRAME);
        assertThat(new InternalErrorException("x", new IllegalStateException()).replyCode())
                .isEqualTo(ReplyCode.INTERNAL_ERROR);
    }
}
