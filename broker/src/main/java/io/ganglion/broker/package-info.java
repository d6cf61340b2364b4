/**
 * The broker process: executes what the pure modules decide with real IO. It owns the shards that run the queue
 * replicas and the AMQP connections, the {@link io.ganglion.amqp.server.BrokerBackend} the AMQP layer calls, the
 * storage engine, the metadata log, the HTTP API and the broker's configuration.
 *
 * <p>Logic that a broker runs around the state machines (placement, promotion, recovery planning, replica and queue
 * semantics) belongs in the pure modules, which the simulator also runs; this package holds IO, threads, clocks and the
 * wiring between them. Nothing in another module depends on it but {@code cli}.
 */
package io.ganglion.broker;
