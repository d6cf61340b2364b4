package io.ganglion.amqp.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

final class ByteBufUtilities {
    private ByteBufUtilities() {}

    /** The readable octets of {@code buffer}, which is then released. */
    static byte[] toArray(ByteBuf buffer) {
        try {
            return ByteBufUtil.getBytes(buffer);
        } finally {
            buffer.release();
        }
    }
}
