package io.ganglion.amqp.protocol;

/** The methods of class channel ({@link ClassId#CHANNEL}). Work with channels: opening, flow control and closing. */
public sealed interface ChannelMethod extends Method {
    /** {@code channel.open}: opens a channel. Reserved: {@code outOfBand}. */
    record Open(String outOfBand) implements ChannelMethod {
        public Open {
            Check.present(outOfBand, "outOfBand");
        }

        /** With the reserved fields at the values clients send. */
        public Open() {
            this("");
        }

        @Override
        public MethodId id() {
            return MethodId.CHANNEL_OPEN;
        }
    }

    /** {@code channel.open-ok}: the channel is open. Reserved: {@code channelId}. */
    record OpenOk(LongString channelId) implements ChannelMethod {
        public OpenOk {
            Check.present(channelId, "channelId");
        }

        /** With the reserved fields at the values clients send. */
        public OpenOk() {
            this(LongString.EMPTY);
        }

        @Override
        public MethodId id() {
            return MethodId.CHANNEL_OPEN_OK;
        }
    }

    /** {@code channel.flow}: asks the peer to stop or restart sending content. */
    record Flow(boolean active) implements ChannelMethod {
        @Override
        public MethodId id() {
            return MethodId.CHANNEL_FLOW;
        }
    }

    /** {@code channel.flow-ok}: confirms a flow request. */
    record FlowOk(boolean active) implements ChannelMethod {
        @Override
        public MethodId id() {
            return MethodId.CHANNEL_FLOW_OK;
        }
    }

    /**
     * {@code channel.close}: closes the channel, with the reply code and the failing method's ids (0 when none failed).
     */
    record Close(int replyCode, String replyText, int failingClassId, int failingMethodId) implements ChannelMethod {
        public Close {
            Check.ushort(replyCode, "replyCode");
            Check.present(replyText, "replyText");
            Check.ushort(failingClassId, "failingClassId");
            Check.ushort(failingMethodId, "failingMethodId");
        }

        @Override
        public MethodId id() {
            return MethodId.CHANNEL_CLOSE;
        }
    }

    /** {@code channel.close-ok}: confirms a channel close. */
    record CloseOk() implements ChannelMethod {
        @Override
        public MethodId id() {
            return MethodId.CHANNEL_CLOSE_OK;
        }
    }
}
