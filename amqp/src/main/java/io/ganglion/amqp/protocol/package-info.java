/**
 * AMQP 0-9-1 values as RabbitMQ speaks them: method records, field tables, basic properties, reply codes and the typed
 * protocol faults. Plain immutable values; no IO and no Netty.
 *
 * <p>Must never depend on {@code io.ganglion.amqp.codec} or on anything outside the JDK.
 */
package io.ganglion.amqp.protocol;
