/**
 * AMQP 0-9-1 as RabbitMQ speaks it: the frame codec, field tables, method definitions and the connection and channel
 * state machines.
 *
 * <p>Knows nothing of replication, storage or the cluster; it talks to the broker through one narrow interface.
 */
package io.ganglion.amqp;
