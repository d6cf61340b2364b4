package io.ganglion.storage;

/**
 * A replica's reply to a seal (DESIGN.md section 8, step 1), given once the seal is durable.
 *
 * @param sealedEpoch the replica's sealed epoch, at least the epoch asked for
 * @param lastEpoch the epoch of the replica's last record (from the epoch history), -1 when it has none
 * @param lastOffset the replica's last offset when it sealed, -1 when the log is empty from 0
 * @param durableOffset the replica's durable offset once the seal was durable
 */
public record SealResult(long sealedEpoch, long lastEpoch, long lastOffset, long durableOffset) {}
