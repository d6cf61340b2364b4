/**
 * Queue semantics as a pure state machine over a log: ready messages by log offset, consumers with prefetch,
 * deliveries, acknowledgements and requeue in original order.
 *
 * <p>Pure: no threads, sockets, files or clock reads. It holds offsets, never message bodies: the broker reads a body
 * from the log when it delivers. It depends on nothing but the JDK and Agrona's primitive collections.
 */
package io.ganglion.queues;
