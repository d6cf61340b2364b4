package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.Method;

/**
 * A whole AMQP command on one channel: a method alone, or a content method with its properties and body. The
 * {@link CommandAssembler} builds them from frames; {@link CommandEncoder} turns them back into frames. A
 * {@link ContentCommand} holds its body buffer and must be released.
 */
public sealed interface Command permits MethodCommand, ContentCommand {
    int channel();

    Method method();
}
