package io.ganglion.bench.jmh;

import io.ganglion.amqp.codec.Command;
import io.ganglion.amqp.codec.CommandAssembler;
import io.ganglion.amqp.codec.CommandEncoder;
import io.ganglion.amqp.codec.ContentCommand;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.codec.FrameCodec;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The AMQP codec on a {@code basic.publish} with a content header (persistent, a content type) and a body: encoding the
 * command into its frames ({@link CommandEncoder}), and decoding those frames ({@link FrameCodec}) into a command again
 * ({@link CommandAssembler}), as a channel does with what a publisher sends; and a {@code basic.deliver} written from a
 * message record's header octets as they are, beside the same delivery with its header decoded and encoded again.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AmqpCodecBenchmark {
    private static final int FRAME_MAX = 131_072;
    private static final int CHANNEL = 1;

    @Param("1024")
    int bodyBytes;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private ContentCommand publish;
    private ByteBuf frames;
    private CommandAssembler assembler;
    private ByteBuffer storedHeader;
    private BasicMethod.Deliver deliver;

    @Setup(Level.Trial)
    public void setUp() {
        BasicProperties properties = new BasicProperties(
                "application/octet-stream",
                null,
                null,
                BasicProperties.PERSISTENT,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null);
        ByteBuf body = Unpooled.directBuffer(bodyBytes).writeZero(bodyBytes);
        publish = new ContentCommand(
                CHANNEL, new BasicMethod.Publish(0, "amq.direct", "bench", false, false), properties, body);
        frames = CommandEncoder.encode(UnpooledByteBufAllocator.DEFAULT, publish, FRAME_MAX);
        assembler = new CommandAssembler(CHANNEL);
        storedHeader = publish.header();
        deliver = new BasicMethod.Deliver("ctag", 1, false, "amq.direct", "bench");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        frames.release();
        publish.release();
    }

    /** The command's method, header and body frames, written and released. */
    @Benchmark
    public int encode() {
        ByteBuf out = CommandEncoder.encode(alloc, publish, FRAME_MAX);
        int bytes = out.readableBytes();
        out.release();
        return bytes;
    }

    /**
     * A {@code basic.deliver} of a message record's header octets, written as they are: what a delivery costs the
     * channel's encoding.
     */
    @Benchmark
    public int deliverStoredHeader() {
        ContentCommand command = new ContentCommand(CHANNEL, deliver, storedHeader, publish.body().retainedDuplicate());
        return encodeAndRelease(command);
    }

    /**
     * The same delivery with its properties decoded from the record's header octets and encoded again, for
     * comparison with {@link #deliverStoredHeader()} in the same run.
     */
    @Benchmark
    public int deliverReencodedHeader() {
        ContentCommand command = new ContentCommand(
                CHANNEL,
                deliver,
                ContentHeaderCodec.properties(storedHeader),
                publish.body().retainedDuplicate());
        return encodeAndRelease(command);
    }

    private int encodeAndRelease(ContentCommand command) {
        ByteBuf out = CommandEncoder.encode(alloc, command, FRAME_MAX);
        int bytes = out.readableBytes();
        out.release();
        command.release();
        return bytes;
    }

    /** The frames read one by one and assembled into the command, which is then released. */
    @Benchmark
    public int decode() {
        ByteBuf in = frames.duplicate();
        Optional<Command> command = Optional.empty();
        while (command.isEmpty()) {
            int type = in.readUnsignedByte();
            int channel = in.readUnsignedShort();
            int size = in.readInt();
            command = assembler.accept(FrameCodec.decode(type, channel, in.readSlice(size)));
            if (in.readUnsignedByte() != FrameDescriptor.FRAME_END) {
                throw new IllegalStateException("frame without its end octet");
            }
        }
        int bytes = ((ContentCommand) command.get()).body().readableBytes();
        ReferenceCountUtil.release(command.get());
        return bytes;
    }
}
