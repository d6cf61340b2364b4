package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.FrameCodec;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConfirmMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.TxMethod;
import io.ganglion.amqp.server.TestClient.Out;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A valid client session, mutated per seed (bytes flipped, frames duplicated, dropped, swapped, resized, moved to other
 * channels, garbage inserted, the stream cut short) and fed in random chunks. Whatever the input: no exception leaves
 * the pipeline, everything the server writes is well-formed AMQP, nothing follows its {@code connection.close} but
 * {@code close-ok}, the connection ends closed once the client says goodbye, every buffer is released, every consumer
 * is cancelled and every delivered message settled or requeued, and no allocation is sized by a length off the wire.
 */
class AmqpConnectionFuzzTest {
    /** Larger than the whole session, far smaller than any length a mutation can write into a frame header. */
    private static final int LARGEST_ARRAY_ALLOWED = 1 << 20;

    private static final Logger SERVER_LOG = Logger.getLogger("io.ganglion.amqp.server");
    private static Level savedLevel;

    @BeforeAll
    static void quiet() {
        savedLevel = SERVER_LOG.getLevel();
        SERVER_LOG.setLevel(Level.OFF);
    }

    @AfterAll
    static void loud() {
        SERVER_LOG.setLevel(savedLevel);
    }

    /** 300 seeds in the build; {@code -Dfuzz.seeds=N} for a deeper run. */
    static LongStream seeds() {
        return LongStream.range(0, Long.getLong("fuzz.seeds", 300));
    }

    // ---------------------------------------------------------------- the session

    /**
     * What a client such as the Java client sends in a typical session, one array per frame: the handshake, a consumer
     * with acks, confirmed and mandatory publishes (one body split over two frames), a get, a transaction on a second
     * channel, then the closes.
     */
    static List<byte[]> session() {
        List<byte[]> frames = new ArrayList<>();
        frames.add(TestClient.HEADER.clone());
        method(frames, 0, TestClient.startOk("guest", "guest"));
        method(frames, 0, new ConnectionMethod.TuneOk(2047, 131_072, 60));
        method(frames, 0, new ConnectionMethod.Open("/"));
        method(frames, 1, new ChannelMethod.Open());
        method(frames, 1, new QueueMethod.Declare("q", false, true, false, false, false, FieldTable.EMPTY));
        method(frames, 1, new BasicMethod.Qos(0, 10, false));
        method(frames, 1, new BasicMethod.Consume("q", "c", false, false, false, false, FieldTable.EMPTY));
        method(frames, 1, new ConfirmMethod.Select(false));
        BasicProperties persistent = BasicProperties.builder()
                .deliveryMode(2)
                .contentType("text/plain")
                .build();
        publish(frames, 1, new BasicMethod.Publish("", "q", false, false), persistent, new byte[5000]);
        publish(frames, 1, new BasicMethod.Publish("", "nowhere", true, false), BasicProperties.EMPTY, "r".getBytes());
        method(frames, 1, new BasicMethod.Ack(1, false));
        publish(frames, 1, new BasicMethod.Publish("", "q", false, false), BasicProperties.EMPTY, "two".getBytes());
        method(frames, 1, new BasicMethod.Get("q", false));
        method(frames, 1, new BasicMethod.Nack(0, true, true));
        method(frames, 2, new ChannelMethod.Open());
        method(
                frames,
                2,
                new ExchangeMethod.Declare("x", "fanout", false, false, false, false, false, FieldTable.EMPTY));
        method(frames, 2, new QueueMethod.Bind("q", "x", "", false, FieldTable.EMPTY));
        method(frames, 2, new TxMethod.Select());
        publish(frames, 2, new BasicMethod.Publish("x", "", false, false), BasicProperties.EMPTY, "tx".getBytes());
        method(frames, 2, new TxMethod.Commit());
        method(frames, 1, new BasicMethod.Cancel("c", false));
        method(frames, 1, new ChannelMethod.Close(200, "bye", 0, 0));
        method(frames, 2, new ChannelMethod.Close(200, "bye", 0, 0));
        method(frames, 0, new ConnectionMethod.Close(200, "bye", 0, 0));
        return frames;
    }

    private static void method(List<byte[]> frames, int channel, Method method) {
        ByteBuf out = Unpooled.buffer();
        FrameCodec.writeMethodFrame(out, channel, method);
        frames.add(ByteBufUtil.getBytes(out));
        out.release();
    }

    /** A publish as separate frames: method, header, and the body split at 4096 - 8 octets. */
    private static void publish(
            List<byte[]> frames, int channel, BasicMethod.Publish publish, BasicProperties properties, byte[] body) {
        ByteBuf all = TestClient.encodePublish(channel, publish, properties, body, FrameDescriptor.FRAME_MIN_SIZE);
        while (all.isReadable()) {
            int size = (int) all.getUnsignedInt(all.readerIndex() + FrameDescriptor.SIZE_OFFSET);
            byte[] frame = new byte[size + FrameDescriptor.FRAME_OVERHEAD];
            all.readBytes(frame);
            frames.add(frame);
        }
        all.release();
    }

    // ---------------------------------------------------------------- mutations

    /** The mutated session as pieces: frames, garbage, or a cut-off tail; concatenated, they are the input. */
    static List<byte[]> mutate(List<byte[]> session, SplittableRandom random) {
        List<byte[]> frames = new ArrayList<>(session);
        int mutations = 1 + random.nextInt(3);
        for (int m = 0; m < mutations; m++) {
            int at = 1 + random.nextInt(frames.size() - 1);
            switch (random.nextInt(7)) {
                case 0 -> frames.add(at, frames.get(at).clone());
                case 1 -> frames.remove(at);
                case 2 -> {
                    if (at + 1 < frames.size()) {
                        frames.add(at + 1, frames.remove(at));
                    }
                }
                case 3 -> frames.set(at, resized(frames.get(at), random));
                case 4 -> frames.set(at, onChannel(frames.get(at), random.nextInt(4)));
                case 5 -> {
                    byte[] garbage = new byte[1 + random.nextInt(32)];
                    random.nextBytes(garbage);
                    frames.add(at, garbage);
                }
                default -> flip(frames, at, random);
            }
        }
        if (random.nextInt(4) == 0) {
            int flips = 1 + random.nextInt(4);
            for (int i = 0; i < flips; i++) {
                flip(frames, random.nextInt(frames.size()), random);
            }
        }
        if (random.nextInt(5) == 0) {
            int at = random.nextInt(frames.size());
            byte[] piece = frames.get(at);
            byte[] cut = new byte[random.nextInt(piece.length)];
            System.arraycopy(piece, 0, cut, 0, cut.length);
            frames.subList(at, frames.size()).clear();
            frames.add(cut);
        }
        return frames;
    }

    private static void flip(List<byte[]> frames, int at, SplittableRandom random) {
        byte[] frame = frames.get(at).clone();
        frame[random.nextInt(frame.length)] ^= (byte) (1 + random.nextInt(255));
        frames.set(at, frame);
    }

    static byte[] concat(List<byte[]> pieces) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        pieces.forEach(out::writeBytes);
        return out.toByteArray();
    }

    private static byte[] resized(byte[] frame, SplittableRandom random) {
        if (frame.length < FrameDescriptor.FRAME_HEADER_LENGTH) {
            return frame;
        }
        long[] sizes = {0, 1, frame.length, 4089, 4097, 131_065, 131_073, 0xFFFF_FFFFL, random.nextInt() & 0xFFFF_FFFFL
        };
        long size = sizes[random.nextInt(sizes.length)];
        ByteBuf buffer = Unpooled.wrappedBuffer(frame.clone());
        buffer.setInt(FrameDescriptor.SIZE_OFFSET, (int) size);
        return buffer.array();
    }

    private static byte[] onChannel(byte[] frame, int channel) {
        if (frame.length < FrameDescriptor.FRAME_HEADER_LENGTH) {
            return frame;
        }
        byte[] moved = frame.clone();
        moved[1] = (byte) (channel >>> 8);
        moved[2] = (byte) channel;
        return moved;
    }

    // ---------------------------------------------------------------- the runs

    @Test
    void shouldRunTheUnmutatedSessionToACleanClose() {
        Run run = new Run(0);
        // Frame by frame, as a client that waits for deliveries before it acks them.
        for (byte[] frame : session()) {
            run.feed(frame, new SplittableRandom(0));
        }

        assertThat(run.all)
                .filteredOn(o -> !o.isHeartbeat())
                .extracting(Out::method)
                .contains(
                        new BasicMethod.ConsumeOk("c"),
                        new BasicMethod.Return(312, "NO_ROUTE", "", "nowhere"),
                        new TxMethod.CommitOk(),
                        new BasicMethod.CancelOk("c"),
                        new ChannelMethod.CloseOk())
                .endsWith(new ConnectionMethod.CloseOk());
        assertThat(run.client.isOpen()).isFalse();
        run.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldSurviveAMutatedSession(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Run run = new Run(seed);

        List<byte[]> pieces = mutate(session(), random);
        if (random.nextBoolean()) {
            run.feed(concat(pieces), random);
        } else {
            // Piece by piece, as a client that waits for deliveries before it acks them.
            pieces.forEach(piece -> run.feed(piece, random));
        }
        run.finish();

        run.checkInvariants();
    }

    /** One connection fed one input. */
    private static final class Run {
        final long seed;
        final FakeBroker broker = new FakeBroker();
        final TrackingAllocator allocator = new TrackingAllocator();
        final TestClient client;
        final List<Out> all = new ArrayList<>();
        final List<ByteBuf> inputs = new ArrayList<>();

        Run(long seed) {
            this.seed = seed;
            broker.addQueue("q");
            EmbeddedChannel channel = new EmbeddedChannel();
            channel.config().setAllocator(allocator);
            client = new TestClient(broker, AmqpServerConfig.defaults(), channel);
            client.expectFrameMax(AmqpServerConfig.DEFAULT_FRAME_MAX);
        }

        void feed(byte[] input, SplittableRandom random) {
            int offset = 0;
            while (offset < input.length && client.isOpen()) {
                int length = Math.min(input.length - offset, 1 + random.nextInt(1024));
                ByteBuf chunk = Unpooled.copiedBuffer(input, offset, length);
                inputs.add(chunk);
                client.channel.writeInbound(chunk);
                offset += length;
                if (random.nextInt(8) == 0) {
                    client.advance(Duration.ofSeconds(1));
                }
                all.addAll(client.read());
            }
            all.addAll(client.read());
        }

        /**
         * Lets every timer run out; a client still connected then says goodbye. A connection still open after that (its
         * goodbye swallowed by a frame the input cut short) must be dropped by its heartbeat monitor, unless heartbeats
         * are off; either way the server must not have started a close it never finished.
         */
        void finish() {
            client.advance(Duration.ofSeconds(200));
            all.addAll(client.read());
            if (client.isOpen()) {
                ByteBuf close = Unpooled.buffer();
                FrameCodec.writeMethodFrame(close, 0, new ConnectionMethod.Close(200, "bye", 0, 0));
                inputs.add(close);
                client.channel.writeInbound(close);
                all.addAll(client.read());
                client.advance(Duration.ofSeconds(60));
                all.addAll(client.read());
            }
            if (client.isOpen()) {
                client.advance(Duration.ofSeconds(3L * 0xFFFF));
                all.addAll(client.read());
            }
            if (client.isOpen()) {
                assertThat(indexOfConnectionClose())
                        .as("seed %d: a connection.close the server sent never finished", seed)
                        .isNegative();
                client.channel.close();
            }
        }

        void checkInvariants() {
            client.channel.checkException();
            client.close();
            client.runTasks();
            int close = indexOfConnectionClose();
            if (close >= 0) {
                assertThat(all.subList(close + 1, all.size()))
                        .as("seed %d: after connection.close only close-ok", seed)
                        .allMatch(o -> o.isHeartbeat() || o.method() instanceof ConnectionMethod.CloseOk);
            }
            assertThat(broker.consumerCount())
                    .as("seed %d: consumers left", seed)
                    .isZero();
            assertThat(broker.unsettledCount())
                    .as("seed %d: deliveries unsettled", seed)
                    .isZero();
            assertThat(broker.closedConnections.size()).as("seed %d", seed).isLessThanOrEqualTo(1);
            assertThat(allocator.unreleased())
                    .as("seed %d: buffers leaked", seed)
                    .isEmpty();
            assertThat(broker.deliveryBodies)
                    .as("seed %d: delivery bodies leaked", seed)
                    .allMatch(b -> b.refCnt() == 0);
            assertThat(inputs).as("seed %d: input leaked", seed).allMatch(b -> b.refCnt() == 0);
            assertThat(allocator.largestArray())
                    .as("seed %d: largest allocation", seed)
                    .isLessThanOrEqualTo(LARGEST_ARRAY_ALLOWED);
        }

        private int indexOfConnectionClose() {
            for (int i = 0; i < all.size(); i++) {
                if (all.get(i).channel() == 0 && all.get(i).method() instanceof ConnectionMethod.Close) {
                    return i;
                }
            }
            return -1;
        }
    }
}
