package io.ganglion.replication;

import io.ganglion.replication.ReplicaEffect.Confirm;

/**
 * The publishes an owner appended and has not confirmed yet, in offset order: a ring of offsets and ids. New publishes
 * come in offset order and go at the end; a re-send of one appended earlier goes in its place (rare), and one at an
 * offset already waiting replaces it.
 */
final class AwaitingConfirms {
    private long[] offsets = new long[16];
    private PublishId[] ids = new PublishId[16];
    private int head;
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    void put(long offset, PublishId id) {
        int at = size;
        while (at > 0 && offsetAt(at - 1) > offset) {
            at--;
        }
        if (at > 0 && offsetAt(at - 1) == offset) {
            ids[slot(at - 1)] = id;
            return;
        }
        if (size == offsets.length) {
            grow();
        }
        for (int i = size; i > at; i--) {
            offsets[slot(i)] = offsets[slot(i - 1)];
            ids[slot(i)] = ids[slot(i - 1)];
        }
        offsets[slot(at)] = offset;
        ids[slot(at)] = id;
        size++;
    }

    /** Removes every publish at or below {@code committed}, adding a {@link Confirm} for each, in offset order. */
    void confirmUpTo(long committed, Effects out) {
        while (size > 0 && offsets[head] <= committed) {
            out.add(new Confirm(ids[head], offsets[head]));
            ids[head] = null;
            head = (head + 1) & (offsets.length - 1);
            size--;
        }
    }

    private long offsetAt(int index) {
        return offsets[slot(index)];
    }

    private int slot(int index) {
        return (head + index) & (offsets.length - 1);
    }

    private void grow() {
        long[] largerOffsets = new long[offsets.length * 2];
        PublishId[] largerIds = new PublishId[offsets.length * 2];
        for (int i = 0; i < size; i++) {
            largerOffsets[i] = offsetAt(i);
            largerIds[i] = ids[slot(i)];
        }
        offsets = largerOffsets;
        ids = largerIds;
        head = 0;
    }
}
