package io.ganglion.storage;

import java.nio.ByteBuffer;

/**
 * A snapshot installed by a reseed: the object's state at {@code offset}; the log continues from {@code offset + 1}.
 *
 * @param data a read-only view, its CRC verified
 */
public record Snapshot(long offset, ByteBuffer data) {}
