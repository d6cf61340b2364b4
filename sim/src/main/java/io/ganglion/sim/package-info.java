/**
 * The deterministic simulator: a whole Ganglion cluster's control and replication planes on one thread, in virtual
 * time, driven by one seed. It runs the pure {@code coordination}, {@code replication} and {@code queues} code and the
 * {@code metadata} state machine unchanged, with a simulated metadata log, network and replica logs in place of Ratis,
 * sockets and disks, and checks its invariants at every commit and periodically.
 *
 * <p>It must never read the wall clock, start a thread, do IO or draw randomness other than from the run's seed, and
 * never depend on {@code broker}, {@code storage} or {@code amqp}: a copy of broker logic here would test the copy.
 */
package io.ganglion.sim;
