package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FrameScannerTest {
    @TempDir
    Path dir;

    @Test
    void shouldVisitFramesAcrossChunkBoundariesAndStopAtEndOfFile() throws IOException {
        SplittableRandom random = new SplittableRandom(5);
        Path file = dir.resolve("frames");
        List<Long> offsets = new ArrayList<>();
        long size;
        try (FileChannel channel = open(file)) {
            long position = 0;
            for (long offset = 0; position < 3 * (1 << 20); offset++) {
                // sizes up to 300 KiB so frames straddle the 1 MiB reads, and some exceed a small first buffer
                ByteBuffer frame = RecordDescriptor.encode(
                        1, 1, offset, 0, RecordType.DATA, ByteBuffer.allocate(random.nextInt(0, 300 * 1024)));
                position += channel.write(frame, position);
                offsets.add(offset);
            }
            size = position;
        }
        List<Long> seen = new ArrayList<>();
        try (FileChannel channel = open(file)) {
            FrameScanner.Result result = FrameScanner.scan(channel, 0, 1 << 20, (buffer, at, position) -> {
                seen.add(RecordDescriptor.offset(buffer, at));
                return true;
            });
            assertThat(result).isEqualTo(new FrameScanner.Result(size, FrameScanner.Stop.END_OF_FILE));
        }
        assertThat(seen).isEqualTo(offsets);
    }

    @Test
    void shouldStopAtZeroesOfPreallocatedFile() throws IOException {
        Path file = dir.resolve("prealloc");
        try (FileChannel channel = open(file)) {
            channel.write(ByteBuffer.allocate(4096), 0);
            ByteBuffer frame = RecordDescriptor.encode(1, 1, 0, 0, RecordType.DATA, ByteBuffer.allocate(10));
            channel.write(frame, 0);
            FrameScanner.Result result = FrameScanner.scan(channel, 0, 4096, (buffer, at, position) -> true);
            assertThat(result).isEqualTo(new FrameScanner.Result(54, FrameScanner.Stop.ZERO));
        }
    }

    @Test
    void shouldStopAtTornAndCorruptFramesAndRefusedOnes() throws IOException {
        Path file = dir.resolve("torn");
        ByteBuffer frame = RecordDescriptor.encode(1, 1, 0, 0, RecordType.DATA, ByteBuffer.allocate(10));
        try (FileChannel channel = open(file)) {
            channel.write(frame.duplicate(), 0);
            channel.write(frame.duplicate().limit(30), 54);
            assertThat(FrameScanner.scan(channel, 0, 4096, (buffer, at, position) -> true))
                    .isEqualTo(new FrameScanner.Result(54, FrameScanner.Stop.TRUNCATED));
            channel.write(ByteBuffer.wrap(new byte[] {1}), 50);
            assertThat(FrameScanner.scan(channel, 0, 4096, (buffer, at, position) -> true))
                    .isEqualTo(new FrameScanner.Result(0, FrameScanner.Stop.CORRUPT));
            assertThat(FrameScanner.scan(channel, 0, 4096, (buffer, at, position) -> false))
                    .isEqualTo(new FrameScanner.Result(0, FrameScanner.Stop.CORRUPT));
        }
    }

    private static FileChannel open(Path file) throws IOException {
        return FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }
}
