/**
 * Queue and stream semantics as pure state machines over a log: {@link io.ganglion.queues.QueueMachine} (ready messages
 * by log offset, consumers with prefetch, deliveries, acknowledgements, requeue in original order) and {@link
 * io.ganglion.queues.StreamMachine} (readers at their own offsets, acknowledgements as credit).
 *
 * <p>Pure: no threads, sockets, files, clock reads or randomness. It holds offsets, never message bodies: the broker
 * reads a body from the log when it delivers. It depends on nothing but the JDK and Agrona's primitive collections.
 */
package io.ganglion.queues;
