/**
 * The replication state machines: one {@link io.ganglion.replication.Replica} per object and broker, owner, follower
 * or learner of the object's current epoch, plus the seal and install steps of recovery. Its role is one of the
 * {@code Role} types ({@code Owning}, {@code Following}, {@code Installing}, {@code Idle}) over a shared {@code
 * LogState}.
 *
 * <p>Pure: no threads, sockets, files, clock reads or randomness of its own. {@code Replica.onEvent(event, now)}
 * returns the effects (appends, truncations, seal persists, log reads, messages, confirms, deliverable offsets) for the
 * broker's shard, or the simulator, to execute. It depends on {@code coordination} for its values and on nothing else.
 */
package io.ganglion.replication;
