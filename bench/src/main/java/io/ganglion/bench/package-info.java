/**
 * {@code bin/ganglion bench}: benchmark programs that start real brokers (or RabbitMQ) and print their figures. Depends
 * on the cli module for brokers in their own JVMs and for the command line; nothing depends on it.
 */
package io.ganglion.bench;
