/**
 * What a broker does around the pure state machines of {@code replication} and {@code queues}, as pure code that the
 * broker and the simulator both run: the owner side of a queue (publishes held for an owner's next epoch,
 * de-duplication of a publish sent twice, the queue rebuilt from the log, deliveries gated by the owner lease) and the
 * forwarding of publishes to a queue's owner (lanes, re-sending and adoption at a change of owner).
 *
 * <p>Pure: no threads, sockets, files, clock reads or randomness. Time is an argument; effects are calls on an
 * interface the caller implements.
 */
package io.ganglion.serving;
