package io.ganglion.amqp.codec;

import java.util.Objects;

/** A content header frame: {@link FrameDescriptor#FRAME_HEADER}. Never on channel 0. */
public record HeaderFrame(int channel, ContentHeader header) implements Frame {
    public HeaderFrame {
        FrameDescriptor.checkChannel(channel);
        Objects.requireNonNull(header, "header");
    }
}
