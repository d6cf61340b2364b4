package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.Method;
import java.util.Objects;

/** A method frame: {@link FrameDescriptor#FRAME_METHOD}. */
public record MethodFrame(int channel, Method method) implements Frame {
    public MethodFrame {
        FrameDescriptor.checkChannel(channel);
        Objects.requireNonNull(method, "method");
    }
}
