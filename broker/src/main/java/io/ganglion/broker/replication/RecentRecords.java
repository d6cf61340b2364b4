package io.ganglion.broker.replication;

import io.ganglion.broker.Shard;
import io.ganglion.replication.Record;

/**
 * The newest records of one replica's log, kept in heap, so that feeding a follower that is a few hundred records
 * behind and handing a committed message to a consumer do not read storage back. Records are immutable (their bodies
 * are read-only views), so holding them is safe.
 *
 * <p>What it holds is always a contiguous range ending at the log's last offset: an append that does not follow the
 * range (an install, a reseed) starts it again, a truncate cuts it, and a record that does not fit drops the oldest.
 * Its bytes count against the shard's budget for recent payloads ({@link Shard#reserveRecent}), shared with the
 * shard's other logs, and against {@code maxBytes} of its own. Shard thread only.
 */
final class RecentRecords {
    private final Shard shard;
    /** The ring starts this small and doubles up to its max as records come. */
    private static final int INITIAL_RECORDS = 64;

    private final int maxRecords;
    private final long maxBytes;
    private Record[] ring;
    private int head;
    private int size;
    private long bytes;

    RecentRecords(Shard shard, int maxRecords, long maxBytes) {
        if (maxRecords < 1 || Integer.bitCount(maxRecords) != 1) {
            throw new IllegalArgumentException("maxRecords must be a power of two: " + maxRecords);
        }
        this.shard = shard;
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
        this.ring = new Record[Math.min(maxRecords, INITIAL_RECORDS)];
    }

    /** Records that {@code record} was appended to the log, right after everything appended before it. */
    void appended(Record record) {
        if (size > 0 && last().offset() + 1 != record.offset()) {
            clear();
        }
        long need = record.size();
        if (need > maxBytes) {
            clear();
            return;
        }
        if (size == ring.length && ring.length < maxRecords) {
            grow();
        }
        while (size > 0 && (size == ring.length || bytes + need > maxBytes)) {
            dropFirst();
        }
        while (!shard.reserveRecent(need)) {
            if (size == 0) {
                return; // the shard's budget is taken by others: the log serves the reads
            }
            dropFirst();
        }
        ring[(head + size) & (ring.length - 1)] = record;
        size++;
        bytes += need;
    }

    /** The record at {@code offset}, or null when it is not held. */
    Record get(long offset) {
        if (size == 0) {
            return null;
        }
        long first = ring[head].offset();
        if (offset < first || offset >= first + size) {
            return null;
        }
        return ring[(head + (int) (offset - first)) & (ring.length - 1)];
    }

    /** Forgets the records at {@code from} and after (the log was truncated there). */
    void truncateFrom(long from) {
        while (size > 0 && last().offset() >= from) {
            int index = (head + size - 1) & (ring.length - 1);
            release(ring[index]);
            ring[index] = null;
            size--;
        }
    }

    /** Forgets everything and gives its bytes back to the shard. */
    void clear() {
        while (size > 0) {
            dropFirst();
        }
        head = 0;
    }

    /** The mean size of the records held ({@link Record#size()}), 256 when none are. */
    long averageBytes() {
        return size == 0 ? 256 : bytes / size;
    }

    int size() {
        return size;
    }

    private void grow() {
        Record[] larger = new Record[ring.length * 2];
        for (int i = 0; i < size; i++) {
            larger[i] = ring[(head + i) & (ring.length - 1)];
        }
        ring = larger;
        head = 0;
    }

    private Record last() {
        return ring[(head + size - 1) & (ring.length - 1)];
    }

    private void dropFirst() {
        release(ring[head]);
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        size--;
    }

    private void release(Record record) {
        bytes -= record.size();
        shard.releaseRecent(record.size());
    }
}
