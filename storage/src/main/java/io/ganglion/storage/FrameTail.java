package io.ganglion.storage;

import java.nio.ByteBuffer;

/**
 * The frames of a replica's newest records, oldest first, by index: a growable ring. Holds the records the segment
 * writer has not written yet, so reads can serve them from memory. Owned by the replica's shard thread; the frames
 * are shared read-only with the journal and segment writers.
 */
final class FrameTail {
    private ByteBuffer[] frames = new ByteBuffer[16];
    private int head;
    private int size;
    private long bytes;

    int size() {
        return size;
    }

    /** Bytes of the frames held. */
    long bytes() {
        return bytes;
    }

    /** The frame at {@code index}, 0 being the oldest. */
    ByteBuffer get(int index) {
        return frames[(head + index) & (frames.length - 1)];
    }

    void addLast(ByteBuffer frame) {
        if (size == frames.length) {
            ByteBuffer[] grown = new ByteBuffer[size * 2];
            for (int i = 0; i < size; i++) {
                grown[i] = get(i);
            }
            frames = grown;
            head = 0;
        }
        frames[(head + size) & (frames.length - 1)] = frame;
        size++;
        bytes += frame.limit();
    }

    /** Drops the {@code count} oldest frames. */
    void removeFirst(int count) {
        for (int i = 0; i < count; i++) {
            bytes -= frames[head].limit();
            frames[head] = null;
            head = (head + 1) & (frames.length - 1);
        }
        size -= count;
    }

    /** Drops the {@code count} newest frames. */
    void removeLast(int count) {
        for (int i = 0; i < count; i++) {
            size--;
            int index = (head + size) & (frames.length - 1);
            bytes -= frames[index].limit();
            frames[index] = null;
        }
    }

    void clear() {
        removeFirst(size);
        if (frames.length > 1024) {
            frames = new ByteBuffer[16];
            head = 0;
        }
    }
}
