package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.Method;
import java.util.Objects;

/** A command of one method frame: a method that carries no content. */
public record MethodCommand(int channel, Method method) implements Command {
    public MethodCommand {
        FrameDescriptor.checkChannel(channel);
        Objects.requireNonNull(method, "method");
        if (method.hasContent()) {
            throw new IllegalArgumentException(method.amqpName() + " carries content: use a ContentCommand");
        }
    }
}
