package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.MethodId;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.ganglion.amqp.protocol.UnknownMethodException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class MethodCodecTest {
    static final String PUBLISH_FRAME = """
            01 0001 00000015
            003c 0028 0000 0a 616d712e646972656374 02 726b 01
            ce
            """;

    static final String DELIVER_FRAME = """
            01 0001 00000015
            003c 003c 04 63746167 000000000000002a 01 00 01 71
            ce
            """;

    /** connection.start as RabbitMQ sends it, with our product and version; from an independent struct.pack oracle. */
    static final String START_FRAME = """
            01 0000 0000010f
            000a 000a 00 09
            000000ea
              0c 6361706162696c6974696573 46 000000b1
                12 7075626c69736865725f636f6e6669726d73 74 01
                1a 65786368616e67655f65786368616e67655f62696e64696e6773 74 01
                0a 62617369632e6e61636b 74 01
                16 636f6e73756d65725f63616e63656c5f6e6f74696679 74 01
                12 636f6e6e656374696f6e2e626c6f636b6564 74 01
                1c 61757468656e7469636174696f6e5f6661696c7572655f636c6f7365 74 01
                10 7065725f636f6e73756d65725f716f73 74 01
                0f 6469726563745f7265706c795f746f 74 01
              07 70726f64756374 53 00000008 47616e676c696f6e
              07 76657273696f6e 53 00000005 302e312e30
            0000000e 504c41494e20414d51504c41494e
            00000005 656e5f5553
            ce
            """;

    static final String QUEUE_DECLARE_FRAME = """
            01 0001 0000002a
            0032 000a 0000 06 6f7264657273 0a
            00000018 0c 782d71756575652d74797065 53 00000006 71756f72756d
            ce
            """;

    static LongStream seeds() {
        return LongStream.range(0, 40);
    }

    static ConnectionMethod.Start rabbitStyleStart() {
        FieldTable capabilities = FieldTable.builder()
                .put("publisher_confirms", true)
                .put("exchange_exchange_bindings", true)
                .put("basic.nack", true)
                .put("consumer_cancel_notify", true)
                .put("connection.blocked", true)
                .put("authentication_failure_close", true)
                .put("per_consumer_qos", true)
                .put("direct_reply_to", true)
                .build();
        FieldTable serverProperties = FieldTable.builder()
                .put("capabilities", capabilities)
                .put("product", "Ganglion")
                .put("version", "0.1.0")
                .build();
        return new ConnectionMethod.Start(
                0, 9, serverProperties, LongString.of("PLAIN AMQPLAIN"), LongString.of("en_US"));
    }

    private static String frame(int channel, Method method) {
        ByteBuf out = Unpooled.buffer();
        FrameCodec.writeMethodFrame(out, channel, method);
        return Hex.of(ByteBufUtilities.toArray(out));
    }

    private static byte[] payload(Method method) {
        ByteBuf out = Unpooled.buffer();
        MethodCodec.encode(out, method);
        return ByteBufUtilities.toArray(out);
    }

    private static Method decodePayload(String hex) {
        return MethodCodec.decode(Hex.buffer(hex));
    }

    @Test
    void shouldEncodeConnectionStartWithServerPropertiesByteForByte() {
        assertThat(frame(0, rabbitStyleStart())).isEqualTo(Hex.normalize(START_FRAME));
    }

    @Test
    void shouldDecodeConnectionStartWithServerProperties() {
        ByteBuf frame = Hex.buffer(START_FRAME);

        Method method = MethodCodec.decode(frame.slice(7, frame.readableBytes() - 8));

        assertThat(method).isEqualTo(rabbitStyleStart());
        assertThat(((ConnectionMethod.Start) method).serverProperties().get("capabilities"))
                .hasValueSatisfying(capabilities -> assertThat(
                                ((FieldValue.Table) capabilities).value().get("publisher_confirms"))
                        .contains(new FieldValue.Bool(true)));
    }

    @Test
    void shouldEncodeBasicPublishByteForByte() {
        assertThat(frame(1, new BasicMethod.Publish("amq.direct", "rk", true, false)))
                .isEqualTo(Hex.normalize(PUBLISH_FRAME));
    }

    @Test
    void shouldEncodeBasicDeliverByteForByte() {
        assertThat(frame(1, new BasicMethod.Deliver("ctag", 42, true, "", "q")))
                .isEqualTo(Hex.normalize(DELIVER_FRAME));
    }

    @Test
    void shouldPackConsecutiveBitsIntoOneOctetLowBitFirst() {
        QueueMethod.Declare declare = new QueueMethod.Declare(
                "orders",
                false,
                true,
                false,
                true,
                false,
                FieldTable.builder().put("x-queue-type", "quorum").build());

        assertThat(frame(1, declare)).isEqualTo(Hex.normalize(QUEUE_DECLARE_FRAME));
        assertThat(decodePayload(Hex.normalize(QUEUE_DECLARE_FRAME).substring(14, 14 + 2 * 0x2a)))
                .isEqualTo(declare);
    }

    @Test
    void shouldIgnoreUnusedBitsOfABitOctetLikeRabbitMq() {
        // basic.ack, delivery tag 7, bit octet 0xfe: multiple is bit 0, clear; the other bits are unused.
        assertThat(decodePayload("003c 0050 0000000000000007 fe")).isEqualTo(new BasicMethod.Ack(7, false));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(MethodId.class)
    void shouldRoundTripEveryMethodOverSeeds(MethodId id) {
        for (long seed : seeds().toArray()) {
            Method method = MethodSamples.random(id, new Gen(seed));

            byte[] bytes = payload(method);
            Method decoded = MethodCodec.decode(Unpooled.wrappedBuffer(bytes));

            assertThat(decoded).as("%s seed %d", id, seed).isEqualTo(method);
            assertThat(payload(decoded))
                    .as("%s seed %d re-encodes byte for byte", id, seed)
                    .isEqualTo(bytes);
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldKeepClassAndMethodIdsOfEveryMethod(long seed) {
        for (MethodId id : MethodId.values()) {
            Method method = MethodSamples.random(id, new Gen(seed));

            ByteBuf bytes = Unpooled.wrappedBuffer(payload(method));

            assertThat(method.id()).as("seed %d", seed).isEqualTo(id);
            assertThat(bytes.getUnsignedShort(0)).as("%s class id", id).isEqualTo(id.classId());
            assertThat(bytes.getUnsignedShort(2)).as("%s method id", id).isEqualTo(id.methodId());
        }
    }

    @Test
    void shouldRefuseUnknownMethodWithCommandInvalid() {
        assertThatThrownBy(() -> decodePayload("003c 00c8 0000"))
                .isInstanceOfSatisfying(UnknownMethodException.class, e -> {
                    assertThat(e.replyCode()).isEqualTo(ReplyCode.COMMAND_INVALID);
                    assertThat(e.isHardError()).isTrue();
                    assertThat(e.classId()).isEqualTo(60);
                    assertThat(e.methodId()).isEqualTo(200);
                });
    }

    @Test
    void shouldRefuseUnknownClassWithCommandInvalid() {
        assertThatThrownBy(() -> decodePayload("0063 000a"))
                .isInstanceOfSatisfying(
                        UnknownMethodException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.COMMAND_INVALID));
    }

    @Test
    void shouldRefusePayloadWithoutIdsWithFrameError() {
        assertThatThrownBy(() -> decodePayload("003c 00"))
                .isInstanceOfSatisfying(
                        FrameErrorException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR));
    }

    @Test
    void shouldRefuseEveryTruncationOfAMethodWithFrameErrorCarryingItsIds() {
        byte[] full = Hex.bytes(Hex.normalize(QUEUE_DECLARE_FRAME).substring(14, 14 + 2 * 0x2a));
        for (int length = 4; length < full.length; length++) {
            ByteBuf truncated = Unpooled.wrappedBuffer(full, 0, length);
            int at = length;
            assertThatThrownBy(() -> MethodCodec.decode(truncated))
                    .as("truncated to %d octets", at)
                    .isInstanceOfSatisfying(FrameErrorException.class, e -> {
                        assertThat(e.classId()).isEqualTo(50);
                        assertThat(e.methodId()).isEqualTo(10);
                        assertThat(e.explanation()).startsWith("cannot decode queue.declare");
                    });
        }
    }

    @Test
    void shouldRefuseTrailingOctetsWithFrameErrorLikeRabbitMq() {
        assertThatThrownBy(() -> decodePayload("003c 0050 0000000000000007 01 00"))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("unexpected octets");
    }

    @Test
    void shouldRefuseMalformedUtf8InAQueueNameWithFrameError() {
        assertThatThrownBy(() -> decodePayload("0032 001e 0000 02 c328 00"))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("UTF-8");
    }

    @Test
    void shouldRefuseRoutingKeyOver255OctetsWithSyntaxErrorCarryingTheMethod() {
        Method publish = new BasicMethod.Publish("", "k".repeat(256), false, false);

        assertThatThrownBy(() -> payload(publish)).isInstanceOfSatisfying(SyntaxErrorException.class, e -> {
            assertThat(e.replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR);
            assertThat(e.classId()).isEqualTo(60);
            assertThat(e.methodId()).isEqualTo(40);
        });
    }

    @Test
    void shouldReportSynchronousMethodsAsRabbitMqDoes() {
        assertThat(new BasicMethod.Qos(0, 10, false).isSynchronous()).isTrue();
        assertThat(new BasicMethod.Publish("", "q", false, false).isSynchronous())
                .isFalse();
        assertThat(new QueueMethod.Declare("q", false, true, false, false, false, FieldTable.EMPTY).isSynchronous())
                .isTrue();
        assertThat(new QueueMethod.Declare("q", false, true, false, false, true, FieldTable.EMPTY).isSynchronous())
                .as("nowait")
                .isFalse();
        assertThat(new QueueMethod.Unbind("q", "x", "k", FieldTable.EMPTY).isSynchronous())
                .as("queue.unbind has no nowait")
                .isTrue();
        assertThat(new ConnectionMethod.CloseOk().isSynchronous()).isFalse();
    }

    @Test
    void shouldReportContentMethods() {
        assertThat(MethodId.values())
                .filteredOn(MethodId::hasContent)
                .containsExactlyInAnyOrder(
                        MethodId.BASIC_PUBLISH, MethodId.BASIC_RETURN, MethodId.BASIC_DELIVER, MethodId.BASIC_GET_OK);
    }
}
