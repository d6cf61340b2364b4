/**
 * {@code bin/ganglion}: the one entry point. {@code server} starts a broker, {@code local} a cluster of broker
 * processes on this machine, {@code ctl} talks to a running broker's HTTP API, and {@code bench} runs the benches
 * against brokers it starts as child processes (or against RabbitMQ). See {@code docs/operations.md}.
 *
 * <p>Depends on {@code broker} (to run one in this JVM) and, for the benches and {@code ctl}, on the RabbitMQ client
 * and the HTTP API only; nothing depends on it.
 */
package io.ganglion.cli;
