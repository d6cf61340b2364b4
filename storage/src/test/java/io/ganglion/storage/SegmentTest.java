package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentTest {
    @TempDir
    Path dir;

    @Test
    void shouldIndexAppendsAndReadWholeFramesWithinBudget() throws IOException {
        Segment segment = segmentWith(100, 10, 20);
        assertThat(segment.nextOffset()).isEqualTo(110);
        assertThat(segment.size()).isEqualTo(10 * 64);
        ByteBuffer three = segment.read(103, Long.MAX_VALUE, 3 * 64 + 10);
        assertThat(three.limit()).isEqualTo(3 * 64);
        assertThat(RecordDescriptor.offset(three, 0)).isEqualTo(103);
        assertThat(segment.read(109, 109, 1).limit()).isEqualTo(64);
        segment.close();
    }

    @Test
    void shouldTruncateFileAndIndex() throws IOException {
        Segment segment = segmentWith(0, 10, 20);
        segment.truncateBefore(4);
        assertThat(segment.nextOffset()).isEqualTo(4);
        assertThat(Files.size(segment.path())).isEqualTo(4 * 64);
        segment.append(frame(4, 1));
        assertThat(segment.nextOffset()).isEqualTo(5);
        segment.close();
    }

    @Test
    void shouldRecoverIndexAndStopAtForeignOrMisplacedRecord() throws IOException {
        Segment segment = segmentWith(50, 5, 8);
        segment.append(frame(57, 8)); // not the next offset
        segment.close();
        Segment reopened = Segment.open(segment.path(), 50, FileIo.DEFAULT);
        FrameScanner.Result result = reopened.recover(1, 4096, (epoch, offset) -> {});
        assertThat(result.stop()).isEqualTo(FrameScanner.Stop.CORRUPT);
        assertThat(result.end()).isEqualTo(5 * 52);
        assertThat(reopened.nextOffset()).isEqualTo(55);
        FrameScanner.Result foreign = reopened.recover(2, 4096, (epoch, offset) -> {});
        assertThat(foreign.end()).isZero();
        reopened.close();
    }

    /** A new segment starting at {@code first} holding {@code count} records of {@code payload} bytes each. */
    private Segment segmentWith(long first, int count, int payload) throws IOException {
        Segment segment = Segment.create(dir, first, FileIo.DEFAULT);
        for (long offset = first; offset < first + count; offset++) {
            segment.append(frame(offset, payload));
        }
        return segment;
    }

    private static ByteBuffer frame(long offset, int payload) {
        return RecordDescriptor.encode(1, 1, offset, 0, RecordType.DATA, ByteBuffer.allocate(payload));
    }
}
