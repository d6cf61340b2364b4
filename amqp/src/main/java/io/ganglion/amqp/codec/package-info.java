/**
 * The AMQP 0-9-1 wire codec: frames, field tables, method arguments, content headers, the command assembler and the
 * Netty decoder and encoder. Binary layouts live in {@link io.ganglion.amqp.codec.FrameDescriptor}.
 *
 * <p>Depends on {@code io.ganglion.amqp.protocol} and Netty's buffers and codec base; knows nothing of connections,
 * channels, the broker or replication.
 */
package io.ganglion.amqp.codec;
