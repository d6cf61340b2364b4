package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ContentHeaderCodecTest {
    /** A content header frame with all 14 properties; from an independent struct.pack oracle. */
    static final String ALL_PROPERTIES_FRAME = """
            02 0001 00000063
            003c 0000 0000000000000005 fffc
            0a 746578742f706c61696e
            04 677a6970
            0000000d 07 782d7265747279 49 00000003
            02
            05
            04 636f7272
            07 7265706c696573
            05 3630303030
            03 6d2d31
            000000006553f100
            05 6f72646572
            05 6775657374
            03 617070
            02 6331
            ce
            """;

    static LongStream seeds() {
        return LongStream.range(0, 300);
    }

    static BasicProperties allProperties() {
        return BasicProperties.builder()
                .contentType("text/plain")
                .contentEncoding("gzip")
                .headers(FieldTable.builder().put("x-retry", 3).build())
                .deliveryMode(BasicProperties.PERSISTENT)
                .priority(5)
                .correlationId("corr")
                .replyTo("replies")
                .expiration("60000")
                .messageId("m-1")
                .timestamp(1_700_000_000L)
                .type("order")
                .userId("guest")
                .appId("app")
                .clusterId("c1")
                .build();
    }

    private static byte[] encode(ContentHeader header) {
        ByteBuf out = Unpooled.buffer();
        ContentHeaderCodec.encode(out, header);
        return ByteBufUtilities.toArray(out);
    }

    private static ContentHeader decode(String hex) {
        return ContentHeaderCodec.decode(Hex.buffer(hex));
    }

    @Test
    void shouldEncodeHeaderFrameWithAllPropertiesByteForByte() {
        ByteBuf out = Unpooled.buffer();

        FrameCodec.writeHeaderFrame(out, 1, ContentHeader.basic(5, allProperties()));

        assertThat(Hex.of(ByteBufUtilities.toArray(out))).isEqualTo(Hex.normalize(ALL_PROPERTIES_FRAME));
    }

    @Test
    void shouldDecodeHeaderWithAllProperties() {
        String payload = Hex.normalize(ALL_PROPERTIES_FRAME).substring(14, 14 + 2 * 0x63);

        assertThat(decode(payload)).isEqualTo(ContentHeader.basic(5, allProperties()));
    }

    @Test
    void shouldEncodeNoPropertiesAsZeroFlags() {
        assertThat(Hex.of(encode(ContentHeader.basic(0, BasicProperties.EMPTY))))
                .isEqualTo("003c00000000000000000000" + "0000");
    }

    @Test
    void shouldKeepAnEmptyStringApartFromAnAbsentProperty() {
        BasicProperties properties =
                BasicProperties.builder().contentType("").priority(0).build();

        byte[] bytes = encode(ContentHeader.basic(1, properties));
        ContentHeader decoded = ContentHeaderCodec.decode(Unpooled.wrappedBuffer(bytes));

        assertThat(Hex.of(bytes)).endsWith("8800" + "00" + "00");
        assertThat(decoded.properties()).isEqualTo(properties);
        assertThat(decoded.properties().contentEncoding()).isNull();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripGeneratedProperties(long seed) {
        Gen gen = new Gen(seed);
        ContentHeader header = ContentHeader.basic(gen.longlong(), gen.properties());

        byte[] bytes = encode(header);
        ContentHeader decoded = ContentHeaderCodec.decode(Unpooled.wrappedBuffer(bytes));

        assertThat(decoded).as("seed %d", seed).isEqualTo(header);
        assertThat(encode(decoded)).as("seed %d re-encodes byte for byte", seed).isEqualTo(bytes);
    }

    @Test
    void shouldIgnoreUnusedFlagBitLikeRabbitMq() {
        assertThat(decode("003c 0000 0000000000000000 8002 00").properties())
                .isEqualTo(BasicProperties.builder().contentType("").build());
    }

    @Test
    void shouldReadContinuationFlagWords() {
        assertThat(decode("003c 0000 0000000000000000 8001 0000 00").properties())
                .isEqualTo(BasicProperties.builder().contentType("").build());
    }

    @Test
    void shouldRefuseFlagsForPropertiesBasicDoesNotHaveWithFrameError() {
        assertThatThrownBy(() -> decode("003c 0000 0000000000000000 8001 8000 00"))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("unknown properties");
    }

    @Test
    void shouldRefuseHeaderShorterThan14OctetsWithFrameError() {
        assertThatThrownBy(() -> decode("003c 0000 0000000000000000 00"))
                .isInstanceOfSatisfying(
                        FrameErrorException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR));
    }

    @Test
    void shouldRefuseEveryTruncationOfThePropertiesWithFrameError() {
        byte[] full = Hex.bytes(Hex.normalize(ALL_PROPERTIES_FRAME).substring(14, 14 + 2 * 0x63));
        for (int length = 14; length < full.length; length++) {
            ByteBuf truncated = Unpooled.wrappedBuffer(full, 0, length);
            assertThatThrownBy(() -> ContentHeaderCodec.decode(truncated))
                    .as("truncated to %d octets", length)
                    .isInstanceOf(FrameErrorException.class);
        }
    }

    @Test
    void shouldRefuseOctetsAfterTheLastPropertyWithFrameError() {
        assertThatThrownBy(() -> decode("003c 0000 0000000000000000 0000 ff"))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("after the last property");
    }

    @Test
    void shouldLeavePropertiesOfAnotherClassUndecoded() {
        ContentHeader header = decode("000a 0000 0000000000000003 ffff 0102");

        assertThat(header.classId()).isEqualTo(10);
        assertThat(header.bodySize()).isEqualTo(3);
        assertThat(header.properties()).isEqualTo(BasicProperties.EMPTY);
    }

    @Test
    void shouldRefuseOverlongPropertyWithSyntaxError() {
        BasicProperties properties =
                BasicProperties.builder().messageId("m".repeat(300)).build();

        assertThatThrownBy(() -> encode(ContentHeader.basic(0, properties))).isInstanceOf(SyntaxErrorException.class);
    }

    @Test
    void shouldRefuseDeliveryModeOutsideAnOctet() {
        assertThatThrownBy(() -> BasicProperties.builder().deliveryMode(256).build())
                .isInstanceOf(IllegalArgumentException.class);
    }
}
