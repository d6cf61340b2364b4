/**
 * AMQP 0-9-1 as RabbitMQ speaks it: the values of the protocol ({@code protocol}), the wire codec ({@code codec}) and
 * the connection and channel state machines with their listener ({@code server}). See {@code docs/amqp.md}.
 *
 * <p>Depends on Netty and nothing else of Ganglion: it knows nothing of replication, storage, queues or the cluster,
 * and talks to the broker through one narrow interface, {@link io.ganglion.amqp.server.BrokerBackend}.
 */
package io.ganglion.amqp;
