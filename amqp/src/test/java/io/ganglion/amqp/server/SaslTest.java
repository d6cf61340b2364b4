package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.ReplyCode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SaslTest {
    private static LongString bytes(String text) {
        return LongString.of(text);
    }

    /** AMQPLAIN as clients write it: table entries, no table length. */
    private static LongString amqplain(String loginTag, String login, String password) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        entry(out, "LOGIN", loginTag, login);
        entry(out, "PASSWORD", "S", password);
        return LongString.copyOf(out.toByteArray());
    }

    private static void entry(ByteArrayOutputStream out, String name, String tag, String value) {
        byte[] valueBytes = value.getBytes(StandardCharsets.UTF_8);
        out.write(name.length());
        out.writeBytes(name.getBytes(StandardCharsets.US_ASCII));
        out.write(tag.charAt(0));
        out.write(valueBytes.length >>> 24);
        out.write(valueBytes.length >>> 16);
        out.write(valueBytes.length >>> 8);
        out.write(valueBytes.length);
        out.writeBytes(valueBytes);
    }

    @Test
    void shouldReadPlainUserAndPassword() {
        assertThat(Sasl.parse("PLAIN", bytes("\0guest\0s3cr\u00e9t")))
                .isEqualTo(new Sasl.Credentials("guest", "s3cr\u00e9t"));
    }

    @Test
    void shouldAcceptAnEmptyPlainPassword() {
        assertThat(Sasl.parse("PLAIN", bytes("\0guest\0"))).isEqualTo(new Sasl.Credentials("guest", ""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "guest\0guest", "admin\0guest\0guest", "\0guest", "\0guest\0pass\0extra"})
    void shouldRefuseAMalformedPlainResponseWith502(String response) {
        assertThatThrownBy(() -> Sasl.parse("PLAIN", bytes(response)))
                .isInstanceOfSatisfying(AmqpException.class, e -> {
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR);
                    assertThat(e.replyText()).doesNotContain("guest");
                });
    }

    @Test
    void shouldReadAmqplainWithoutATableLength() {
        assertThat(Sasl.parse("AMQPLAIN", amqplain("S", "guest", "guest")))
                .isEqualTo(new Sasl.Credentials("guest", "guest"));
    }

    @Test
    void shouldRefuseAmqplainWhoseLoginIsNotALongString() {
        assertThatThrownBy(() -> Sasl.parse("AMQPLAIN", amqplain("x", "guest", "guest")))
                .isInstanceOfSatisfying(
                        AmqpException.class,
                        e -> assertThat(e.replyText())
                                .isEqualTo("SYNTAX_ERROR - AMQPLAIN auth info is missing LOGIN or PASSWORD field"));
    }

    @Test
    void shouldRefuseAmqplainThatIsNotATable() {
        assertThatThrownBy(() -> Sasl.parse("AMQPLAIN", bytes("\5LOGINS\0\0\0\77short")))
                .isInstanceOfSatisfying(
                        AmqpException.class, e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR));
    }

    @Test
    void shouldRefuseAMechanismNotOfferedWith503() {
        assertThatThrownBy(() -> Sasl.parse("EXTERNAL", LongString.EMPTY))
                .isInstanceOfSatisfying(
                        AmqpException.class, e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.COMMAND_INVALID));
    }

    @Test
    void shouldKeepThePasswordOutOfToString() {
        assertThat(new Sasl.Credentials("guest", "hunter2").toString()).doesNotContain("hunter2");
    }
}
