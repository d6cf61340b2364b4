package io.ganglion.broker.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.StorageException;
import java.nio.ByteBuffer;

/**
 * How a replicated object's {@link Record}s sit in its storage log. Storage knows two log record types; the epoch and
 * offset are storage's own header fields, so a record's payload holds only what is left:
 *
 * <pre>
 *   EpochStart  storage EPOCH_START, empty payload
 *   Message     storage DATA, payload: u8 0x11 | i64 publisher | i64 sequence | body
 *   Settle      storage DATA, payload: u8 0x12 | i64 settled offset  (one offset)
 *                                     u8 0x13 | i64 settled offsets (several)
 *   Returned    storage DATA, payload: u8 0x14 | i64 returned offsets (one or more)
 *   DeadLettered storage DATA, payload: u8 0x15 | u8 reason | i64 offsets (one or more)
 * </pre>
 *
 * The kind octets differ from the single-copy queue's own payloads ({@code MessageRecord}: 1 and 2), so neither reader
 * can take the other's log for its own. The body is opaque here: the queue layer puts its message record in it.
 */
public final class ReplicatedRecords {
    public static final byte MESSAGE = 0x11;
    public static final byte SETTLE = 0x12;
    /** A settle record of several offsets: the tag, then the offsets as the body. */
    public static final byte SETTLES = 0x13;
    /** A returned record: the tag, then the offsets as the body. */
    public static final byte RETURNED = 0x14;
    /** A dead-lettered record: the tag and the reason, then the offsets as the body. */
    public static final byte DEAD_LETTERED = 0x15;
    /** Kind, publisher, sequence: what precedes a message's body. */
    public static final int MESSAGE_HEADER_LENGTH = 1 + 2 * Long.BYTES;

    public static final int SETTLE_LENGTH = 1 + Long.BYTES;

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private ReplicatedRecords() {}

    /** The storage type of {@code record}. */
    public static RecordType type(Record record) {
        return record instanceof Record.EpochStart ? RecordType.EPOCH_START : RecordType.DATA;
    }

    /** The longest {@link #prefix}. */
    public static final int PREFIX_MAX_LENGTH = MESSAGE_HEADER_LENGTH;

    /**
     * What precedes the {@link #body} in {@code record}'s storage payload, written into {@code scratch} (cleared
     * first, at least {@link #PREFIX_MAX_LENGTH} octets) and returned flipped: the payload without a copy of the
     * body.
     */
    public static ByteBuffer prefix(Record record, ByteBuffer scratch) {
        scratch.clear();
        switch (record) {
            case Record.EpochStart start -> {}
            case Record.Message message ->
                scratch.put(MESSAGE)
                        .putLong(message.id().publisher())
                        .putLong(message.id().sequence());
            case Record.Settle settle -> {
                if (settle.settled().length == 1) {
                    scratch.put(SETTLE).putLong(settle.settled()[0]);
                } else {
                    scratch.put(SETTLES);
                }
            }
            case Record.Returned returned -> scratch.put(RETURNED);
            case Record.DeadLettered deadLettered -> scratch.put(DEAD_LETTERED).put((byte) deadLettered.reason());
        }
        return scratch.flip();
    }

    /**
     * What follows the {@link #prefix} in {@code record}'s storage payload: a message's body, the offsets of a settle
     * record of several or of a returned record, else nothing.
     */
    public static ByteBuffer body(Record record) {
        if (record instanceof Record.Message message) {
            return message.body();
        }
        if (record instanceof Record.Settle settle && settle.settled().length > 1) {
            return offsets(settle.settled());
        }
        if (record instanceof Record.Returned returned) {
            return offsets(returned.returned());
        }
        if (record instanceof Record.DeadLettered deadLettered) {
            return offsets(deadLettered.offsets());
        }
        return EMPTY;
    }

    private static ByteBuffer offsets(long[] values) {
        ByteBuffer offsets = ByteBuffer.allocate(values.length * Long.BYTES);
        offsets.asLongBuffer().put(values);
        return offsets;
    }

    /** The storage payload of {@code record}, in a new buffer: its {@link #prefix} then its {@link #body}. */
    public static ByteBuffer payload(Record record) {
        ByteBuffer prefix = prefix(record, ByteBuffer.allocate(PREFIX_MAX_LENGTH));
        ByteBuffer body = body(record).duplicate();
        return ByteBuffer.allocate(prefix.remaining() + body.remaining())
                .put(prefix)
                .put(body)
                .flip();
    }

    /**
     * The record a storage log record holds.
     *
     * @throws StorageException when the payload is not one of ours (another kind of log, or a bug): never guessed at
     */
    public static Record decode(LogRecord stored) throws StorageException {
        if (stored.epoch() < 0) {
            throw notOurs(stored, "negative epoch " + stored.epoch());
        }
        Epoch epoch = Epoch.of(stored.epoch());
        if (stored.type() == RecordType.EPOCH_START) {
            return new Record.EpochStart(epoch, stored.offset());
        }
        if (stored.type() != RecordType.DATA) {
            throw notOurs(stored, "type " + stored.type());
        }
        ByteBuffer payload = stored.payload().duplicate();
        if (!payload.hasRemaining()) {
            throw notOurs(stored, "empty payload");
        }
        byte kind = payload.get();
        if (kind == MESSAGE && payload.remaining() >= 2 * Long.BYTES) {
            PublishId id = new PublishId(payload.getLong(), payload.getLong());
            return new Record.Message(epoch, stored.offset(), id, payload.slice(), stored.timestamp());
        }
        if (kind == SETTLE && payload.remaining() == Long.BYTES) {
            return new Record.Settle(epoch, stored.offset(), payload.getLong());
        }
        if (kind == SETTLES && payload.remaining() >= 2 * Long.BYTES && payload.remaining() % Long.BYTES == 0) {
            long[] settled = longs(payload);
            return new Record.Settle(epoch, stored.offset(), settled);
        }
        if (kind == RETURNED && payload.remaining() >= Long.BYTES && payload.remaining() % Long.BYTES == 0) {
            long[] returned = longs(payload);
            return new Record.Returned(epoch, stored.offset(), returned);
        }
        if (kind == DEAD_LETTERED
                && payload.remaining() >= 1 + Long.BYTES
                && (payload.remaining() - 1) % Long.BYTES == 0) {
            int reason = payload.get() & 0xff;
            long[] offsets = longs(payload);
            return new Record.DeadLettered(epoch, stored.offset(), offsets, reason);
        }
        throw notOurs(
                stored,
                "payload kind 0x" + Integer.toHexString(kind & 0xff) + " of "
                        + stored.payload().remaining() + " octets");
    }

    /** The rest of {@code payload} as offsets. */
    private static long[] longs(ByteBuffer payload) {
        long[] values = new long[payload.remaining() / Long.BYTES];
        payload.asLongBuffer().get(values);
        return values;
    }

    private static StorageException notOurs(LogRecord stored, String what) {
        return new StorageException("record " + stored.offset() + " is not a replicated record: " + what);
    }
}
