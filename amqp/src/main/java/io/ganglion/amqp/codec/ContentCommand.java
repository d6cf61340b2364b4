package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.Method;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A content method ({@code basic.publish}, {@code basic.deliver}, {@code basic.get-ok}, {@code basic.return}) with its
 * content header and body. The body is the holder's content: one reference, owned by this command. When assembled from
 * frames, it is the received body frames' slices (a composite when there were several), not a copy.
 *
 * <p>The content header is kept as its payload octets (class, weight, body size, property flags, properties) when the
 * command has them: as received for a publish, as stored for a delivery. The encoder writes those octets as they are,
 * so a consumer gets the header its publisher sent, byte for byte. A command built from {@link BasicProperties} has its
 * header encoded when it is written.
 *
 * <p>Implementation notes: the properties of a command built from octets are decoded on first use and cached; the
 * race of two threads decoding is benign (same value, a record of final fields).
 */
public final class ContentCommand extends DefaultByteBufHolder implements Command {
    private final int channel;
    private final Method method;
    private final ByteBuffer header;
    private BasicProperties properties;

    /**
     * A command whose header is encoded from {@code properties} when written. Takes ownership of {@code body}'s
     * reference.
     *
     * @throws IllegalArgumentException when {@code method} carries no content or {@code channel} is 0
     */
    public ContentCommand(int channel, Method method, BasicProperties properties, ByteBuf body) {
        this(channel, method, null, Objects.requireNonNull(properties, "properties"), body);
    }

    /**
     * A command whose header is {@code header}'s octets, a content header payload written as it is; properties are
     * decoded from it when asked for. Takes ownership of {@code body}'s reference; {@code header} must not change.
     *
     * @throws IllegalArgumentException when {@code method} carries no content, {@code channel} is 0, or the header's
     *     class or body size is not the method's class or the body's size
     */
    public ContentCommand(int channel, Method method, ByteBuffer header, ByteBuf body) {
        this(channel, method, Objects.requireNonNull(header, "header"), null, body);
    }

    /** Both forms of the header, as the assembler has them: octets received and properties decoded from them. */
    ContentCommand(int channel, Method method, ByteBuffer header, BasicProperties properties, ByteBuf body) {
        super(body);
        this.channel = FrameDescriptor.checkChannel(channel);
        this.method = Objects.requireNonNull(method, "method");
        this.header = header;
        this.properties = properties;
        if (header != null
                && (header.remaining() < FrameDescriptor.HEADER_MIN_LENGTH
                        || ContentHeaderCodec.classId(header) != method.classId()
                        || ContentHeaderCodec.bodySize(header) != body.readableBytes())) {
            throw new IllegalArgumentException("content header does not match " + method.amqpName() + " and a body of "
                    + body.readableBytes() + " octets");
        }
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
        BasicProperties decoded = properties;
        if (decoded == null) {
            decoded = ContentHeaderCodec.properties(header);
            properties = decoded;
        }
        return decoded;
    }

    /**
     * The content header payload octets, as received or stored: a read-only view, encoded from the properties when the
     * command was built from them.
     */
    public ByteBuffer header() {
        ByteBuffer octets = header != null
                ? header
                : ContentHeaderCodec.encoded(
                        new ContentHeader(method.classId(), 0, content().readableBytes(), properties));
        return octets.asReadOnlyBuffer();
    }

    /** Whether the header is carried as octets, to be written as they are. */
    boolean hasHeaderOctets() {
        return header != null;
    }

    /** The body; the same buffer as {@link #content()}. */
    public ByteBuf body() {
        return content();
    }

    @Override
    public ContentCommand replace(ByteBuf content) {
        return new ContentCommand(channel, method, header, properties, content);
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
                        && properties().equals(that.properties())
                        && super.equals(that);
    }

    @Override
    public int hashCode() {
        return Objects.hash(channel, method, properties(), super.hashCode());
    }

    @Override
    public String toString() {
        return "ContentCommand[channel=" + channel + ", method=" + method + ", properties=" + properties()
                + ", bodySize=" + content().readableBytes() + "]";
    }
}
