package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.Method;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import java.util.Objects;

/**
 * A content method ({@code basic.publish}, {@code basic.deliver}, {@code basic.get-ok}, {@code basic.return}) with its
 * properties and body. The body is the holder's content: one reference, owned by this command. When assembled from
 * frames, it is the received body frames' slices (a composite when there were several), not a copy.
 */
public final class ContentCommand extends DefaultByteBufHolder implements Command {
    private final int channel;
    private final Method method;
    private final BasicProperties properties;

    /**
     * Takes ownership of {@code body}'s reference.
     *
     * @throws IllegalArgumentException when {@code method} carries no content or {@code channel} is 0
     */
    public ContentCommand(int channel, Method method, BasicProperties properties, ByteBuf body) {
        super(body);
        this.channel = FrameDescriptor.checkChannel(channel);
        this.method = Objects.requireNonNull(method, "method");
        this.properties = Objects.requireNonNull(properties, "properties");
        if (!method.hasContent()) {
            throw new IllegalArgumentException(method.amqpName() + " carries no content: use a MethodCommand");
        }
        if (channel == 0) {
            throw new IllegalArgumentException("content never goes on channel 0");
        }
    }

    @Override
    public int channel() {
        return channel;
    }

    @Override
    public Method method() {
        return method;
    }

    public BasicProperties properties() {
        return properties;
    }

    /** The body; the same buffer as {@link #content()}. */
    public ByteBuf body() {
        return content();
    }

    @Override
    public ContentCommand replace(ByteBuf content) {
        return new ContentCommand(channel, method, properties, content);
    }

    @Override
    public ContentCommand retain() {
        super.retain();
        return this;
    }

    @Override
    public ContentCommand retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public ContentCommand touch() {
        super.touch();
        return this;
    }

    @Override
    public ContentCommand touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public boolean equals(Object other) {
        return this == other
                || other instanceof ContentCommand that
                        && channel == that.channel
                        && method.equals(that.method)
                        && properties.equals(that.properties)
                        && super.equals(that);
    }

    @Override
    public int hashCode() {
        return Objects.hash(channel, method, properties, super.hashCode());
    }

    @Override
    public String toString() {
        return "ContentCommand[channel=" + channel + ", method=" + method + ", properties=" + properties + ", bodySize="
                + content().readableBytes() + "]";
    }
}
