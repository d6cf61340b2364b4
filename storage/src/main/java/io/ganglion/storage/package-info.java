/** Durable storage: the group-committed journal, per-object segments, replica state files and crash recovery. */
package io.ganglion.storage;
