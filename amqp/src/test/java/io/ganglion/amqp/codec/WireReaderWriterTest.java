package io.ganglion.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.FrameErrorException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class WireReaderWriterTest {
    static LongStream seeds() {
        return LongStream.range(0, 100);
    }

    @Test
    void shouldStartANinthConsecutiveBitInAFreshOctet() {
        ByteBuf out = Unpooled.buffer();
        WireWriter w = new WireWriter(out);
        for (int i = 0; i < 10; i++) {
            w.bit(i % 3 == 0); // bits 0, 3, 6, 9
        }
        w.octet(0x7f);
        w.bit(true);
        w.finish();

        assertThat(Hex.of(out)).isEqualTo("49" + "02" + "7f" + "01");
    }

    @Test
    void shouldWriteAnOctetForATrailingRunOfClearBits() {
        ByteBuf out = Unpooled.buffer();
        WireWriter w = new WireWriter(out);
        w.ushort(1);
        w.bit(false);
        w.finish();

        assertThat(Hex.of(out)).isEqualTo("0001" + "00");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldReadBackAnyMixOfBitsAndOtherFields(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int fields = 1 + random.nextInt(30);
        int[] kinds = new int[fields];
        long[] values = new long[fields];
        ByteBuf out = Unpooled.buffer();
        WireWriter w = new WireWriter(out);
        for (int i = 0; i < fields; i++) {
            kinds[i] = random.nextInt(3);
            switch (kinds[i]) {
                case 0 -> {
                    values[i] = random.nextInt(2);
                    w.bit(values[i] == 1);
                }
                case 1 -> {
                    values[i] = random.nextInt(256);
                    w.octet((int) values[i]);
                }
                default -> {
                    values[i] = random.nextLong();
                    w.longlong(values[i]);
                }
            }
        }
        w.finish();

        WireReader r = new WireReader(out);
        for (int i = 0; i < fields; i++) {
            long read = switch (kinds[i]) {
                case 0 -> r.bit() ? 1 : 0;
                case 1 -> r.octet();
                default -> r.longlong();
            };
            assertThat(read).as("seed %d field %d", seed, i).isEqualTo(values[i]);
        }
        r.end();
        assertThat(out.isReadable()).as("seed %d", seed).isFalse();
    }

    @Test
    void shouldRefuseReadingPastTheEndWithFrameError() {
        WireReader r = new WireReader(Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));

        assertThatThrownBy(r::uint).isInstanceOf(FrameErrorException.class).hasMessageContaining("needed 4");
    }
}
