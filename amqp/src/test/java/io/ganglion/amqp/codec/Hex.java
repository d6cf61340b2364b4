package io.ganglion.amqp.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.HexFormat;

/** Hex test vectors: spaces and line breaks are for the reader. */
final class Hex {
    private Hex() {}

    static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    static ByteBuf buffer(String hex) {
        return Unpooled.wrappedBuffer(bytes(hex));
    }

    /** The readable octets of {@code buffer} in hex, without consuming them. */
    static String of(ByteBuf buffer) {
        return ByteBufUtil.hexDump(buffer);
    }

    static String of(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    /** The hex of a vector, normalised for comparison with {@link #of}. */
    static String normalize(String hex) {
        return hex.replaceAll("\\s+", "").toLowerCase();
    }
}
