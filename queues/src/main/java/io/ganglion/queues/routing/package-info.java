/**
 * Exchanges, bindings and routing as AMQP 0-9-1 defines them (direct, fanout, topic, headers, exchange-to-exchange),
 * over an immutable per-vhost topology.
 *
 * <p>Pure: no threads, sockets, files, clock reads or randomness. Depends on nothing but the JDK.
 */
package io.ganglion.queues.routing;
