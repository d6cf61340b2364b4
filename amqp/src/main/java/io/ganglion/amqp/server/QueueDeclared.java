package io.ganglion.amqp.server;

/** {@code queue.declare-ok}: the queue's name (server-named queues get one) and its counts. */
public record QueueDeclared(String queue, long messageCount, int consumerCount) {}
