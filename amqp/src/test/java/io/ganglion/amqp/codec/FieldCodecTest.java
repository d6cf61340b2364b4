package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.ShortString;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class FieldCodecTest {
    /** A table of every type, in tag order; the bytes come from an independent struct.pack oracle. */
    private static final String EVERY_TYPE_TABLE = """
            00000082
            01 74 74 01
            01 62 62 ff
            01 42 42 ff
            01 73 73 fffe
            01 75 75 ffff
            01 49 49 fffffffd
            01 69 69 ffffffff
            01 6c 6c fffffffffffffffc
            01 66 66 3fc00000
            01 64 64 c002000000000000
            01 44 44 02 00003039
            01 53 53 00000002 6869
            01 78 78 00000002 0001
            01 41 41 00000008 49 00000001 56 74 00
            01 54 54 000000006553f100
            01 46 46 00000003 01 6b 56
            01 56 56
            """;

    static LongStream seeds() {
        return LongStream.range(0, 300);
    }

    private static FieldTable everyType() {
        return FieldTable.builder()
                .put("t", new FieldValue.Bool(true))
                .put("b", new FieldValue.Int8((byte) -1))
                .put("B", new FieldValue.UInt8(255))
                .put("s", new FieldValue.Int16((short) -2))
                .put("u", new FieldValue.UInt16(65535))
                .put("I", new FieldValue.Int32(-3))
                .put("i", new FieldValue.UInt32(4294967295L))
                .put("l", new FieldValue.Int64(-4))
                .put("f", new FieldValue.Float32(1.5f))
                .put("d", new FieldValue.Float64(-2.25))
                .put("D", new FieldValue.Decimal(2, 12345))
                .put("S", FieldValue.of("hi"))
                .put("x", new FieldValue.Bytes(LongString.copyOf(new byte[] {0, 1})))
                .put(
                        "A",
                        new FieldValue.Array(
                                List.of(new FieldValue.Int32(1), FieldValue.VOID, new FieldValue.Bool(false))))
                .put("T", new FieldValue.Timestamp(1_700_000_000L))
                .put("F", FieldTable.builder().put("k", FieldValue.VOID).build())
                .put("V", FieldValue.VOID)
                .build();
    }

    private static byte[] encode(FieldTable table) {
        ByteBuf out = Unpooled.buffer();
        FieldCodec.writeTable(out, table);
        return ByteBufUtilities.toArray(out);
    }

    private static FieldTable decode(byte[] bytes) {
        ByteBuf in = Unpooled.wrappedBuffer(bytes);
        FieldTable table = FieldCodec.readTable(in);
        assertThat(in.isReadable()).as("table consumed exactly").isFalse();
        return table;
    }

    @Test
    void shouldEncodeEveryFieldTypeByteForByte() {
        assertThat(Hex.of(encode(everyType()))).isEqualTo(Hex.normalize(EVERY_TYPE_TABLE));
    }

    @Test
    void shouldDecodeEveryFieldType() {
        assertThat(decode(Hex.bytes(EVERY_TYPE_TABLE))).isEqualTo(everyType());
    }

    @Test
    void shouldDecodeCapitalLAsSignedInt64LikeRabbitMq() {
        FieldTable table = decode(Hex.bytes("0000000b 01 6e 4c ffffffffffffffff"));

        assertThat(table.get("n")).contains(new FieldValue.Int64(-1));
        assertThat(Hex.of(encode(table)))
                .as("written back as 'l', as RabbitMQ writes it")
                .isEqualTo("0000000b016e6cffffffffffffffff");
    }

    @Test
    void shouldReadAnyNonZeroBoolOctetAsTrue() {
        assertThat(decode(Hex.bytes("00000004 01 62 74 02")).get("b")).contains(new FieldValue.Bool(true));
    }

    @Test
    void shouldKeepEntryOrderAndRepeatedNames() {
        FieldTable table =
                FieldTable.builder().put("z", 1).put("a", 2).put("z", 3).build();

        FieldTable decoded = decode(encode(table));

        assertThat(decoded).isEqualTo(table);
        assertThat(decoded.get("z")).as("first entry wins, as in RabbitMQ").contains(new FieldValue.Int32(1));
    }

    @Test
    void shouldEncodeEmptyTableAsZeroLength() {
        assertThat(Hex.of(encode(FieldTable.EMPTY))).isEqualTo("00000000");
        assertThat(decode(Hex.bytes("00000000"))).isEqualTo(FieldTable.EMPTY);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripGeneratedTables(long seed) {
        FieldTable table = new Gen(seed).table();

        byte[] bytes = encode(table);
        FieldTable decoded = decode(bytes);

        assertThat(decoded).as("seed %d", seed).isEqualTo(table);
        assertThat(encode(decoded)).as("seed %d re-encodes byte for byte", seed).isEqualTo(bytes);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripGeneratedShortStrings(long seed) {
        String text = new Gen(seed).shortstr();
        ByteBuf buffer = Unpooled.buffer();

        FieldCodec.writeShortstr(buffer, text);

        assertThat((int) buffer.getUnsignedByte(0)).as("seed %d", seed).isEqualTo(ShortString.utf8Length(text));
        assertThat(FieldCodec.readShortstr(buffer)).as("seed %d", seed).isEqualTo(text);
    }

    @Test
    void shouldRefuseUnknownTypeTagWithFrameError() {
        assertThatThrownBy(() -> decode(Hex.bytes("00000003 01 6b 5a")))
                .isInstanceOfSatisfying(
                        FrameErrorException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR))
                .hasMessageContaining("'Z'");
    }

    @Test
    void shouldRefuseTableLongerThanItsBufferWithFrameError() {
        assertThatThrownBy(() -> decode(Hex.bytes("00000010 01 6b 56")))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("truncated");
    }

    @Test
    void shouldRefuseValueOverrunningItsTableWithFrameError() {
        // The table says 4 octets, but its Int32 needs 7 after the name: the value must not read past the table.
        assertThatThrownBy(() -> decode(Hex.bytes("00000004 01 6b 49 00 00000001")))
                .isInstanceOf(FrameErrorException.class);
    }

    @Test
    void shouldRefuseEveryCutInsideAnEntryWithFrameError() {
        byte[] full = Hex.bytes(EVERY_TYPE_TABLE);
        int decoded = 0;
        for (int cut = 4; cut < full.length; cut++) {
            // the table's entries cut after (cut - 4) octets, its length saying so
            ByteBuf in = Unpooled.buffer();
            in.writeInt(cut - 4);
            in.writeBytes(full, 4, cut - 4);
            try {
                FieldCodec.readTable(in);
                decoded++;
            } catch (FrameErrorException expected) {
                assertThat(expected.replyCode()).isEqualTo(ReplyCode.FRAME_ERROR);
            } catch (RuntimeException unexpected) {
                throw new AssertionError("cut at " + cut + " escaped as " + unexpected, unexpected);
            }
        }
        assertThat(decoded).as("only the cuts between the 17 entries decode").isEqualTo(17);
    }

    @Test
    void shouldRefuseMalformedUtf8InNamesWithFrameError() {
        assertThatThrownBy(() -> decode(Hex.bytes("00000004 02 c328 56")))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("UTF-8");
    }

    @Test
    void shouldRefuseNestingDeeperThanTheLimitWithFrameError() {
        int levels = FrameDescriptor.MAX_FIELD_NESTING_DEPTH + 2;
        ByteBuf nested = Unpooled.buffer();
        nested.writeInt(0); // the innermost array, empty
        for (int i = 0; i < levels; i++) {
            ByteBuf outer = Unpooled.buffer();
            outer.writeInt(nested.readableBytes() + 1);
            outer.writeByte('A');
            outer.writeBytes(nested);
            nested = outer;
        }

        ByteBuf frame = nested;
        assertThatThrownBy(() -> FieldCodec.readArray(frame))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("nested deeper");
    }

    @Test
    void shouldDecodeNestingUpToTheLimit() {
        FieldValue value = new FieldValue.Array(List.of());
        for (int i = 0; i < FrameDescriptor.MAX_FIELD_NESTING_DEPTH; i++) {
            value = new FieldValue.Array(List.of(value));
        }
        FieldTable table = FieldTable.builder().put("deep", value).build();

        assertThat(decode(encode(table))).isEqualTo(table);
    }

    @Test
    void shouldSurviveDeeplyNestedHostileInputWithoutStackOverflow() {
        // 100 000 nested arrays fit in a 500 KB frame; the depth limit must stop the recursion early.
        int levels = 100_000;
        ByteBuf in = Unpooled.buffer(levels * 5 + 4);
        for (int i = 0; i < levels; i++) {
            in.writeInt((levels - i) * 5);
            in.writeByte('A');
        }
        in.writeInt(0);

        assertThatThrownBy(() -> FieldCodec.readArray(in))
                .isInstanceOf(FrameErrorException.class)
                .hasMessageContaining("nested deeper");
    }

    @Test
    void shouldRefuseShortStringOver255OctetsWithSyntaxError() {
        String name = "é".repeat(128); // 256 octets of UTF-8

        assertThatThrownBy(() -> encode(FieldTable.builder().put(name, true).build()))
                .isInstanceOfSatisfying(
                        SyntaxErrorException.class,
                        e -> assertThat(e.replyCode()).isEqualTo(ReplyCode.SYNTAX_ERROR))
                .hasMessageContaining("256 octets");
    }

    @Test
    void shouldAcceptShortStringOfExactly255Octets() {
        String text = "a".repeat(255);
        ByteBuf buffer = Unpooled.buffer();

        FieldCodec.writeShortstr(buffer, text);

        assertThat(FieldCodec.readShortstr(buffer)).isEqualTo(text);
    }

    @Test
    void shouldRefuseEncodingNestingDeeperThanTheLimitWithSyntaxError() {
        FieldTable table = FieldTable.builder().put("k", true).build();
        for (int i = 0; i <= FrameDescriptor.MAX_FIELD_NESTING_DEPTH + 1; i++) {
            table = FieldTable.builder().put("k", table).build();
        }
        FieldTable deep = table;

        assertThatThrownBy(() -> encode(deep)).isInstanceOf(SyntaxErrorException.class);
    }
}
