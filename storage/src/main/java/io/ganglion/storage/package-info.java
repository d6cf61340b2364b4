/**
 * Durable storage: the group-committed journal, per-object segments filled behind it by a segment writer, replica
 * state files and crash recovery.
 *
 * <p>Entry points: {@link io.ganglion.storage.Storage} (one data directory) and {@link io.ganglion.storage.ReplicaLog}
 * (one object's replica). This package owns bytes on disk and their durability; it knows nothing of assignments,
 * quorums or AMQP, and must never depend on another Ganglion module. An append makes no file system call on the
 * caller's thread. The on-disk format is in {@code docs/storage.md}.
 */
package io.ganglion.storage;
