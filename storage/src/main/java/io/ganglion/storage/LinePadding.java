package io.ganglion.storage;

/**
 * Padding before the fields of a subclass: superclass fields are laid out first, so a subclass's fields start at least
 * 64 bytes (a cache line) after whatever object the allocator put before it; a subclass whose fields another thread
 * writes all the time ends with its own 64 bytes of padding (see {@link JournalQueue}, whose two ends two kinds of
 * thread write). Only for a few hot shared objects: per-replica objects are left compact on purpose, since with many
 * replicas every append touches a replica whose lines are cold anyway, and padding only adds lines to fetch (measured:
 * padded replica cursors cost the shards about a fifth more CPU per append with 1000 objects).
 */
abstract class LinePadding {
    long p00;
    long p01;
    long p02;
    long p03;
    long p04;
    long p05;
    long p06;
    long p07;
}
