package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RecordDescriptorTest {
    private static final int MAX = 1 << 20;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42, 20261129})
    void shouldRoundTripEveryField(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < 200; i++) {
            byte[] payload = new byte[random.nextInt(0, 300)];
            random.nextBytes(payload);
            long objectId = random.nextLong();
            long epoch = random.nextLong(0, Long.MAX_VALUE);
            long offset = random.nextLong(0, Long.MAX_VALUE);
            long timestamp = random.nextLong();
            RecordType type = RecordType.values()[random.nextInt(RecordType.values().length)];
            ByteBuffer frame =
                    RecordDescriptor.encode(objectId, epoch, offset, timestamp, type, ByteBuffer.wrap(payload));
            assertThat(RecordDescriptor.check(frame, 0, frame.limit(), MAX))
                    .as("seed %d record %d", seed, i)
                    .isEqualTo(RecordDescriptor.HEADER_LENGTH + payload.length);
            assertThat(RecordDescriptor.objectId(frame, 0)).isEqualTo(objectId);
            assertThat(RecordDescriptor.epoch(frame, 0)).isEqualTo(epoch);
            assertThat(RecordDescriptor.offset(frame, 0)).isEqualTo(offset);
            assertThat(RecordDescriptor.timestamp(frame, 0)).isEqualTo(timestamp);
            assertThat(RecordDescriptor.type(frame, 0)).isEqualTo(type);
            assertThat(RecordDescriptor.payload(frame, 0)).isEqualTo(ByteBuffer.wrap(payload));
        }
    }

    @Test
    void shouldDetectEveryFlippedBit() {
        ByteBuffer frame = RecordDescriptor.encode(7, 3, 99, 1234, RecordType.DATA, ByteBuffer.wrap(new byte[40]));
        for (int bit = 0; bit < frame.limit() * 8; bit++) {
            ByteBuffer copy =
                    ByteBuffer.allocate(frame.limit()).put(frame.duplicate()).flip();
            copy.put(bit / 8, (byte) (copy.get(bit / 8) ^ (1 << (bit % 8))));
            assertThat(RecordDescriptor.check(copy, 0, copy.limit(), MAX))
                    .as("bit %d flipped", bit)
                    .isLessThanOrEqualTo(0);
        }
    }

    @Test
    void shouldReportTornFrameAsTruncated() {
        ByteBuffer frame = RecordDescriptor.encode(7, 3, 99, 1234, RecordType.DATA, ByteBuffer.wrap(new byte[40]));
        for (int available = 4; available < frame.limit(); available++) {
            assertThat(RecordDescriptor.check(frame, 0, available, MAX)).isEqualTo(RecordDescriptor.TRUNCATED);
        }
        // the high bytes of a small big-endian length are zero: three of them cannot be told from the end of data
        assertThat(RecordDescriptor.check(frame, 0, 3, MAX)).isEqualTo(RecordDescriptor.ZERO);
        assertThat(RecordDescriptor.check(frame.duplicate().putInt(0, 0x01000000), 0, 3, MAX))
                .isEqualTo(RecordDescriptor.TRUNCATED);
    }

    @Test
    void shouldReportZeroesAsEndOfData() {
        ByteBuffer zeros = ByteBuffer.allocate(100);
        assertThat(RecordDescriptor.check(zeros, 0, 100, MAX)).isEqualTo(RecordDescriptor.ZERO);
        assertThat(RecordDescriptor.check(zeros, 0, 2, MAX)).isEqualTo(RecordDescriptor.ZERO);
    }

    @Test
    void shouldRejectFrameLongerThanMaximum() {
        ByteBuffer frame = RecordDescriptor.encode(1, 1, 1, 1, RecordType.DATA, ByteBuffer.wrap(new byte[100]));
        assertThat(RecordDescriptor.check(frame, 0, frame.limit(), 64)).isEqualTo(RecordDescriptor.CORRUPT);
    }

    @Test
    void shouldCheckFrameAtAnIndexInsideALargerBuffer() {
        ByteBuffer frame = RecordDescriptor.encode(5, 1, 8, 0, RecordType.EPOCH_START, ByteBuffer.wrap(new byte[3]));
        ByteBuffer larger = ByteBuffer.allocate(200);
        larger.put(17, frame, 0, frame.limit());
        assertThat(RecordDescriptor.check(larger, 17, 200 - 17, MAX)).isEqualTo(frame.limit());
        assertThat(RecordDescriptor.offset(larger, 17)).isEqualTo(8);
    }
}
