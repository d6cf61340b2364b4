/**
 * Exchanges, bindings and routing as AMQP 0-9-1 defines them (direct, fanout, topic, headers, exchange-to-exchange),
 * over an immutable per-vhost topology. Pure.
 */
package io.ganglion.queues.routing;
