/**
 * The server side of AMQP 0-9-1: the connection and channel state machines, and {@link
 * io.ganglion.amqp.server.BrokerBackend}, the one narrow interface through which they reach the broker. Nothing here
 * knows of queues' logs, replication or the cluster.
 */
package io.ganglion.amqp.server;
