/**
 * The metadata of a cluster as a state machine over a log of commands: virtual hosts, users, exchanges, queues,
 * bindings (and, with the control plane, objects, histories, the live set and settings). Every broker applies the same
 * commands in the same order and holds the same {@link io.ganglion.metadata.MetadataImage}.
 *
 * <p>The broker reaches the log through {@link io.ganglion.metadata.MetadataLog} only, so a single-node file log, the
 * Apache Ratis log and the simulator's log are interchangeable.
 */
package io.ganglion.metadata;
