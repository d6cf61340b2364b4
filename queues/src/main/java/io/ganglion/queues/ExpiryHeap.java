package io.ganglion.queues;

import java.util.Arrays;

/**
 * A binary min-heap of (expiry time, offset) pairs in two primitive arrays: the order in which a queue's messages
 * expire. Entries are not removed when their message leaves the queue another way; the {@link QueueMachine} skips
 * them when they come up, and rebuilds the heap when they outnumber the live ones.
 */
final class ExpiryHeap {
    private long[] times = new long[16];
    private long[] offsets = new long[16];
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The earliest time in the heap; only when not empty. */
    long peekTime() {
        return times[0];
    }

    /** The offset of the earliest entry; only when not empty. */
    long peekOffset() {
        return offsets[0];
    }

    void push(long time, long offset) {
        if (size == times.length) {
            times = Arrays.copyOf(times, size * 2);
            offsets = Arrays.copyOf(offsets, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (times[parent] <= time) {
                break;
            }
            times[i] = times[parent];
            offsets[i] = offsets[parent];
            i = parent;
        }
        times[i] = time;
        offsets[i] = offset;
    }

    /** Removes the earliest entry; only when not empty. */
    void pop() {
        size--;
        if (size == 0) {
            return;
        }
        long time = times[size];
        long offset = offsets[size];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && times[child + 1] < times[child]) {
                child++;
            }
            if (times[child] >= time) {
                break;
            }
            times[i] = times[child];
            offsets[i] = offsets[child];
            i = child;
        }
        times[i] = time;
        offsets[i] = offset;
    }

    void clear() {
        size = 0;
    }
}
