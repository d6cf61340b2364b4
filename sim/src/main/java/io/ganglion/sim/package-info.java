/**
 * The deterministic simulator: a whole Ganglion control plane on one thread, in virtual time, driven by one seed. It
 * runs the pure {@code coordination} code and the {@code metadata} state machine unchanged, with a simulated metadata
 * log, network and replica log ends in place of Ratis, sockets and disks. It must never read the wall clock, start a
 * thread or draw randomness other than from the run's seed.
 */
package io.ganglion.sim;
