package io.ganglion.amqp.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A content body frame: {@link FrameDescriptor#FRAME_BODY}, never on channel 0. Its {@link #content()} is, when
 * decoded, a retained slice of the bytes received, not a copy; the holder owns one reference and must be released.
 */
public final class BodyFrame extends DefaultByteBufHolder implements Frame {
    private final int channel;

    /** Takes ownership of {@code content}'s reference. */
    public BodyFrame(int channel, ByteBuf content) {
        super(content);
        this.channel = FrameDescriptor.checkChannel(channel);
    }

    @Override
    public int channel() {
        return channel;
    }

    @Override
    public BodyFrame replace(ByteBuf content) {
        return new BodyFrame(channel, content);
    }

    @Override
    public BodyFrame retain() {
        super.retain();
        return this;
    }

    @Override
    public BodyFrame retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public BodyFrame touch() {
        super.touch();
        return this;
    }

    @Override
    public BodyFrame touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public boolean equals(Object other) {
        return this == other || other instanceof BodyFrame that && channel == that.channel && super.equals(that);
    }

    @Override
    public int hashCode() {
        return 31 * super.hashCode() + channel;
    }

    @Override
    public String toString() {
        return "BodyFrame[channel=" + channel + ", size=" + content().readableBytes() + "]";
    }
}
