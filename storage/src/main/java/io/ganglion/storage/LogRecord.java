package io.ganglion.storage;

import java.nio.ByteBuffer;

/**
 * One record read from a replica's log, its CRC verified.
 *
 * @param payload a read-only view; the caller may keep it
 */
public record LogRecord(long offset, long epoch, RecordType type, long timestamp, ByteBuffer payload) {}
