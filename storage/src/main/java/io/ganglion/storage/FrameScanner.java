package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Reads frames from a file front to back in large chunks, checks each with {@link RecordDescriptor#check} and hands
 * it to a visitor, stopping at the first frame that is not whole and intact. Used by recovery for journal and
 * segment files alike; what a stop means (a clean end, a torn tail, damage) is the caller's call.
 */
final class FrameScanner {
    private static final int CHUNK = 1 << 20;

    /** Why a scan stopped. */
    enum Stop {
        /** The file ended exactly at a frame boundary. */
        END_OF_FILE,
        /** A zero length field: the written part of a preallocated file ended. */
        ZERO,
        /** A frame runs past the end of the file. */
        TRUNCATED,
        /** A frame is malformed, fails its CRC, or the visitor refused it. */
        CORRUPT
    }

    /** Receives each good frame; returns false to refuse it (the scan then stops as {@link Stop#CORRUPT}). */
    @FunctionalInterface
    interface Visitor {
        boolean accept(ByteBuffer buffer, int at, long filePosition) throws IOException;
    }

    /** @param end the file position of the first byte not accepted */
    record Result(long end, Stop stop) {}

    private FrameScanner() {}

    static Result scan(FileChannel channel, long from, int maxFrameLength, Visitor visitor) throws IOException {
        return scan(channel, from, channel.size(), maxFrameLength, visitor);
    }

    /** The same, reading the file only up to {@code end} (the file's size if it is shorter). */
    static Result scan(FileChannel channel, long from, long end, int maxFrameLength, Visitor visitor)
            throws IOException {
        long size = Math.min(end, channel.size());
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(CHUNK, Math.max(4096, size - from)));
        long position = from;
        while (true) {
            if (position >= size) {
                return new Result(position, Stop.END_OF_FILE);
            }
            buffer.clear();
            int want = (int) Math.min(buffer.capacity(), size - position);
            buffer.limit(want);
            int available = DurableFiles.readFully(channel, buffer, position);
            int at = 0;
            boolean moreInFile = position + available < size;
            while (at < available) {
                if (moreInFile && available - at < RecordDescriptor.HEADER_LENGTH) {
                    break; // the header continues past this chunk: read on from its start
                }
                int length = RecordDescriptor.check(buffer, at, available - at, maxFrameLength);
                if (length == RecordDescriptor.TRUNCATED && moreInFile) {
                    break; // the frame continues past this chunk: read on from its start
                }
                if (length <= 0) {
                    return new Result(position + at, stopFor(length));
                }
                if (!visitor.accept(buffer, at, position + at)) {
                    return new Result(position + at, Stop.CORRUPT);
                }
                at += length;
            }
            if (at == 0) {
                // one frame larger than the buffer: grow it to the frame's declared length
                int length = buffer.getInt(RecordDescriptor.LENGTH_OFFSET);
                buffer = ByteBuffer.allocate(Math.min(maxFrameLength, Math.max(length, buffer.capacity() * 2)));
            }
            position += at;
        }
    }

    private static Stop stopFor(int check) {
        return switch (check) {
            case RecordDescriptor.ZERO -> Stop.ZERO;
            case RecordDescriptor.TRUNCATED -> Stop.TRUNCATED;
            default -> Stop.CORRUPT;
        };
    }
}
