package io.ganglion.storage;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Binary layout of a record: the one frame format of journal files and segment files. A log record is encoded once
 * and the same bytes are written to the replica's segment and to the journal.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  frame length (int32, header included)        |  0
 *  +---------------------------------------------------------------+
 *  |                  CRC32C (int32)                               |  4
 *  +---------------------------------------------------------------+
 *  |                  object id (int64)                            |  8
 *  +---------------------------------------------------------------+
 *  |                  epoch (int64)                                | 16
 *  +---------------------------------------------------------------+
 *  |                  offset (int64)                               | 24
 *  +---------------------------------------------------------------+
 *  |                  timestamp (int64, ms since the Unix epoch)   | 32
 *  +---------------+---------------+-------------------------------+
 *  |  type (int8)  | version (int8)|       reserved (int16, 0)     | 40
 *  +---------------+---------------+-------------------------------+
 *  |                  payload (frame length - 44 bytes)            | 44
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Integers are big-endian. The CRC32C covers the frame length field and every byte from the object id to the end
 * of the payload, so a torn or flipped length is caught as well as a flipped payload bit. A frame length of zero
 * marks the end of written data in a preallocated journal file.
 *
 * <p>For control records the offset field carries the argument: the last kept offset for {@link RecordType#TRUNCATE},
 * the discard point for {@link RecordType#DISCARD}, the snapshot offset for {@link RecordType#SNAPSHOT}; the epoch
 * field carries the sealed epoch for {@link RecordType#SEAL}.
 *
 * <p><b>Journal runs.</b> In a journal file every run of frames the writer wrote (what one batch put in one file) ends
 * with a {@link RecordType#COMMIT} frame of no payload: object id 0, the offset field the journal position where the
 * run starts, the epoch field how many frames the run has, the timestamp field the sum (int, wrapping, as an unsigned
 * value) of their CRC fields. Recovery replays a run only once its commit frame matches it ({@link #commitMatches}).
 * That is what lets a journal file be reused without zeroing it first: the frames of its previous use are whole and
 * pass their CRCs, but no commit frame of the previous use names a start position of the current use (positions only
 * grow), and a torn write that left an old page in the middle of a run changes the run's CRC sum.
 */
public final class RecordDescriptor {
    public static final int LENGTH_OFFSET = 0;
    public static final int CRC_OFFSET = 4;
    public static final int OBJECT_ID_OFFSET = 8;
    public static final int EPOCH_OFFSET = 16;
    public static final int OFFSET_OFFSET = 24;
    public static final int TIMESTAMP_OFFSET = 32;
    public static final int TYPE_OFFSET = 40;
    public static final int VERSION_OFFSET = 41;
    public static final int RESERVED_OFFSET = 42;
    public static final int HEADER_LENGTH = 44;

    public static final byte VERSION = 1;

    /** Frame length of a {@link RecordType#COMMIT} frame. */
    public static final int COMMIT_LENGTH = HEADER_LENGTH;

    /** Result of {@link #check}: the bytes at the position are zero (end of written data). */
    public static final int ZERO = 0;
    /** Result of {@link #check}: the frame runs past the available bytes (a torn write). */
    public static final int TRUNCATED = -1;
    /** Result of {@link #check}: the frame is malformed or its CRC does not match. */
    public static final int CORRUPT = -2;

    private RecordDescriptor() {}

    /** Frame length of a record with a payload of the given length. */
    public static int frameLength(int payloadLength) {
        return HEADER_LENGTH + payloadLength;
    }

    /**
     * Encodes one frame into a new heap buffer (position 0, limit the frame length). The payload's position and
     * limit are not changed.
     */
    public static ByteBuffer encode(
            long objectId, long epoch, long offset, long timestamp, RecordType type, ByteBuffer payload) {
        int payloadLength = payload.remaining();
        ByteBuffer frame = ByteBuffer.allocate(frameLength(payloadLength));
        frame.putInt(LENGTH_OFFSET, frame.capacity());
        frame.putLong(OBJECT_ID_OFFSET, objectId);
        frame.putLong(EPOCH_OFFSET, epoch);
        frame.putLong(OFFSET_OFFSET, offset);
        frame.putLong(TIMESTAMP_OFFSET, timestamp);
        frame.put(TYPE_OFFSET, type.code());
        frame.put(VERSION_OFFSET, VERSION);
        frame.putShort(RESERVED_OFFSET, (short) 0);
        frame.put(HEADER_LENGTH, payload, payload.position(), payloadLength);
        frame.putInt(CRC_OFFSET, crc(frame, 0, frame.capacity()));
        return frame;
    }

    /**
     * Encodes one frame at absolute index {@code at} of {@code into}, computing its CRC there: the way an append puts
     * a record straight into its replica's chunk, with no buffer of its own. The payload's position and limit are not
     * changed; the payload is
     * {@code prefix} then {@code body}.
     *
     * @param view a buffer over the same memory as {@code into} that nobody else uses (its position and limit change)
     * @param crc a checksum nobody else uses; reset here
     * @return the frame length
     */
    static int encode(
            ByteBuffer into,
            ByteBuffer view,
            int at,
            CRC32C crc,
            long objectId,
            long epoch,
            long offset,
            long timestamp,
            RecordType type,
            ByteBuffer prefix,
            ByteBuffer body) {
        int prefixLength = prefix.remaining();
        int length = frameLength(prefixLength + body.remaining());
        into.putInt(at + LENGTH_OFFSET, length);
        into.putLong(at + OBJECT_ID_OFFSET, objectId);
        into.putLong(at + EPOCH_OFFSET, epoch);
        into.putLong(at + OFFSET_OFFSET, offset);
        into.putLong(at + TIMESTAMP_OFFSET, timestamp);
        // type, version and reserved in one store
        into.putInt(at + TYPE_OFFSET, (type.code() & 0xff) << 24 | (VERSION & 0xff) << 16);
        into.put(at + HEADER_LENGTH, prefix, prefix.position(), prefixLength);
        into.put(at + HEADER_LENGTH + prefixLength, body, body.position(), body.remaining());
        crc.reset();
        view.limit(at + length).position(at + LENGTH_OFFSET);
        view.limit(at + CRC_OFFSET);
        crc.update(view);
        view.limit(at + length).position(at + OBJECT_ID_OFFSET);
        crc.update(view);
        into.putInt(at + CRC_OFFSET, (int) crc.getValue());
        return length;
    }

    /**
     * Checks the frame at absolute index {@code at} of {@code buffer}, of which {@code available} bytes are readable.
     *
     * @return the frame length when the frame is whole and its CRC matches; {@link #ZERO} when the length field is
     *     zero; {@link #TRUNCATED} when the header or the frame runs past {@code available}; {@link #CORRUPT} when
     *     the length is out of range, the version or a reserved bit is wrong, the type is unknown or the CRC fails.
     */
    public static int check(ByteBuffer buffer, int at, int available, int maxFrameLength) {
        if (available < 4) {
            return allZero(buffer, at, available) ? ZERO : TRUNCATED;
        }
        int length = buffer.getInt(at + LENGTH_OFFSET);
        if (length == 0) {
            return ZERO;
        }
        if (length < HEADER_LENGTH || length > maxFrameLength) {
            return CORRUPT;
        }
        if (length > available) {
            return TRUNCATED;
        }
        if (buffer.get(at + VERSION_OFFSET) != VERSION
                || buffer.getShort(at + RESERVED_OFFSET) != 0
                || RecordType.ofCode(buffer.get(at + TYPE_OFFSET)) == null) {
            return CORRUPT;
        }
        return crc(buffer, at, length) == buffer.getInt(at + CRC_OFFSET) ? length : CORRUPT;
    }

    static int crc(ByteBuffer frame, int at, int length) {
        CRC32C crc = new CRC32C();
        if (frame.hasArray()) {
            byte[] array = frame.array();
            int base = frame.arrayOffset() + at;
            crc.update(array, base + LENGTH_OFFSET, 4);
            crc.update(array, base + OBJECT_ID_OFFSET, length - OBJECT_ID_OFFSET);
        } else {
            crc.update(frame.slice(at + LENGTH_OFFSET, 4));
            crc.update(frame.slice(at + OBJECT_ID_OFFSET, length - OBJECT_ID_OFFSET));
        }
        return (int) crc.getValue();
    }

    private static boolean allZero(ByteBuffer buffer, int at, int available) {
        for (int i = 0; i < available; i++) {
            if (buffer.get(at + i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Encodes the commit frame of a journal run (see "Journal runs" above). */
    static ByteBuffer encodeCommit(long runStart, long frames, int crcSum) {
        return encode(0, frames, runStart, Integer.toUnsignedLong(crcSum), RecordType.COMMIT, ByteBuffer.allocate(0));
    }

    /** Whether the commit frame at {@code at} ends a run that started at {@code runStart} with these frames. */
    static boolean commitMatches(ByteBuffer buffer, int at, long runStart, long frames, int crcSum) {
        return offset(buffer, at) == runStart
                && epoch(buffer, at) == frames
                && timestamp(buffer, at) == Integer.toUnsignedLong(crcSum)
                && frameLength(buffer, at) == COMMIT_LENGTH;
    }

    /** The CRC field of the frame at {@code at}. */
    static int crcField(ByteBuffer buffer, int at) {
        return buffer.getInt(at + CRC_OFFSET);
    }

    public static int frameLength(ByteBuffer buffer, int at) {
        return buffer.getInt(at + LENGTH_OFFSET);
    }

    public static long objectId(ByteBuffer buffer, int at) {
        return buffer.getLong(at + OBJECT_ID_OFFSET);
    }

    public static long epoch(ByteBuffer buffer, int at) {
        return buffer.getLong(at + EPOCH_OFFSET);
    }

    public static long offset(ByteBuffer buffer, int at) {
        return buffer.getLong(at + OFFSET_OFFSET);
    }

    public static long timestamp(ByteBuffer buffer, int at) {
        return buffer.getLong(at + TIMESTAMP_OFFSET);
    }

    /** The record type; only call on a frame that passed {@link #check}. */
    public static RecordType type(ByteBuffer buffer, int at) {
        return RecordType.ofCode(buffer.get(at + TYPE_OFFSET));
    }

    /** A read-only view of the payload of the frame at {@code at}. */
    public static ByteBuffer payload(ByteBuffer buffer, int at) {
        int length = frameLength(buffer, at);
        return buffer.slice(at + HEADER_LENGTH, length - HEADER_LENGTH).asReadOnlyBuffer();
    }

    /** The log record of the frame at {@code at}, which holds {@code offset}; its payload a view of {@code buffer}. */
    static LogRecord logRecord(ByteBuffer buffer, int at, long offset) {
        return new LogRecord(offset, epoch(buffer, at), type(buffer, at), timestamp(buffer, at), payload(buffer, at));
    }
}
