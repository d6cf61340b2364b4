package io.ganglion.amqp.codec;

/** A heartbeat frame: {@link FrameDescriptor#FRAME_HEARTBEAT}, empty, always on channel 0. */
public record HeartbeatFrame() implements Frame {
    public static final HeartbeatFrame INSTANCE = new HeartbeatFrame();

    @Override
    public int channel() {
        return 0;
    }
}
