/**
 * The metadata of a cluster as a state machine over a log of commands: virtual hosts, users, exchanges, queues,
 * bindings, and the coordination image (objects and their accepted histories, the live set, runtime settings). Every
 * broker applies the same commands in the same order and holds the same {@link io.ganglion.metadata.MetadataImage}.
 * {@link io.ganglion.metadata.MetadataCodec} is the binary form of a command, {@link
 * io.ganglion.metadata.MetadataImageCodec} that of a whole image (a snapshot).
 *
 * <p>The broker reaches the log through {@link io.ganglion.metadata.MetadataLog} only, so a single-node file log, the
 * Apache Ratis log ({@code io.ganglion.metadata.ratis}) and the simulator's log are interchangeable. This package
 * depends on {@code coordination} and {@code queues}; only {@code io.ganglion.metadata.ratis} sees Ratis.
 */
package io.ganglion.metadata;
