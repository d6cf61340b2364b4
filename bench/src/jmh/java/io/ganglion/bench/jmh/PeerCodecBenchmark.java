package io.ganglion.bench.jmh;

import io.ganglion.broker.peer.PeerCodec;
import io.ganglion.broker.peer.PeerFrameDescriptor;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.ObjectId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
 * The peer link's codec on a replication {@code Append} of 16 records: encoding it into one frame ({@link
 * PeerCodec#encode}) and decoding the frame's body ({@link PeerCodec#decodeBody}), as an owner and a follower do.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PeerCodecBenchmark {
    private static final int RECORDS = 16;

    @Param("1024")
    int recordBytes;

    private PeerMessage append;
    private ByteBuf frame;

    @Setup(Level.Trial)
    public void setUp() {
        List<byte[]> records = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            byte[] record = new byte[recordBytes];
            Arrays.fill(record, (byte) i);
            records.add(record);
        }
        append = new PeerMessage.Append(ObjectId.of("/", "bench"), 3, 1_000_000, records, 999_990);
        frame = Unpooled.directBuffer(PeerCodec.encodedLength(append));
        PeerCodec.encode(append, frame);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        frame.release();
    }

    /** The message written as one frame into a pooled buffer of its exact size, then released. */
    @Benchmark
    public int encode() {
        ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(PeerCodec.encodedLength(append));
        PeerCodec.encode(append, out);
        int bytes = out.readableBytes();
        out.release();
        return bytes;
    }

    /** The frame's body decoded into a message (its records copied out of the buffer). */
    @Benchmark
    public PeerMessage decode() {
        int type = PeerFrameDescriptor.type(frame, 0);
        int length = (int) PeerFrameDescriptor.length(frame, 0);
        return PeerCodec.decodeBody(
                type, frame.slice(PeerFrameDescriptor.BODY_OFFSET, length - PeerFrameDescriptor.TYPE_LENGTH));
    }
}
