package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.JavaClientValues.javaTable;
import static io.ganglion.amqp.codec.JavaClientValues.sorted;
import static io.ganglion.amqp.codec.JavaClientValues.sortedTables;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.AMQCommand;
import com.rabbitmq.client.impl.AMQImpl;
import com.rabbitmq.client.impl.ValueReader;
import com.rabbitmq.client.impl.ValueWriter;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.MethodId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Our codec against the RabbitMQ Java client's ({@code com.rabbitmq:amqp-client}), in both directions: what it writes we
 * read, what we write it reads, and where both write the same value, the octets are the same.
 */
class RabbitMqJavaClientInteropTest {
    private static final int SEEDS_PER_METHOD = 15;

    static LongStream seeds() {
        return LongStream.range(0, 150);
    }

    private static DataInputStream input(byte[] bytes) {
        return new DataInputStream(new ByteArrayInputStream(bytes));
    }

    private static byte[] javaTableBytes(Map<String, Object> table) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ValueWriter writer = new ValueWriter(new DataOutputStream(bytes));
            writer.writeTable(table);
            writer.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] javaFrameBytes(com.rabbitmq.client.impl.Frame... frames) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            for (com.rabbitmq.client.impl.Frame frame : frames) {
                frame.writeTo(out);
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<com.rabbitmq.client.impl.Frame> javaReadFrames(byte[] bytes) throws IOException {
        DataInputStream in = input(bytes);
        List<com.rabbitmq.client.impl.Frame> frames = new ArrayList<>();
        while (in.available() > 0) {
            frames.add(com.rabbitmq.client.impl.Frame.readFrom(in, () -> Integer.MAX_VALUE));
        }
        return frames;
    }

    private static byte[] ours(FieldTable table) {
        ByteBuf out = Unpooled.buffer();
        FieldCodec.writeTable(out, table);
        return ByteBufUtilities.toArray(out);
    }

    private static byte[] oursPayload(Method method) {
        ByteBuf out = Unpooled.buffer();
        MethodCodec.encode(out, method);
        return ByteBufUtilities.toArray(out);
    }

    private static byte[] oursFrame(int channel, Method method) {
        ByteBuf out = Unpooled.buffer();
        FrameCodec.writeMethodFrame(out, channel, method);
        return ByteBufUtilities.toArray(out);
    }

    /** Our frames decoded from {@code bytes}, with no protocol header first. */
    private static List<Frame> ourFrames(byte[] bytes) {
        EmbeddedChannel channel = new EmbeddedChannel(new AmqpFrameDecoder(false, 0));
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
        List<Frame> frames = new ArrayList<>();
        for (Object frame = channel.readInbound(); frame != null; frame = channel.readInbound()) {
            frames.add((Frame) frame);
        }
        channel.finishAndReleaseAll();
        return frames;
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldReadTablesTheJavaClientWritesAndWriteTheSameOctets(long seed) {
        FieldTable table = new Gen(seed, true).table();

        byte[] javaBytes = javaTableBytes(javaTable(table));

        assertThat(FieldCodec.readTable(Unpooled.wrappedBuffer(javaBytes)))
                .as("seed %d", seed)
                .isEqualTo(table);
        assertThat(Hex.of(ours(table))).as("seed %d octets", seed).isEqualTo(Hex.of(javaBytes));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldWriteTablesTheJavaClientReads(long seed) throws IOException {
        FieldTable table = new Gen(seed, true).table();

        Map<String, Object> read = new ValueReader(input(ours(table))).readTable();

        assertThat(sorted(JavaClientValues.table(read))).as("seed %d", seed).isEqualTo(sorted(table));
    }

    @Test
    void shouldWriteUnsignedTypesTheJavaClientReadsAsNumbers() throws IOException {
        FieldTable table = FieldTable.builder()
                .put("B", new FieldValue.UInt8(200))
                .put("u", new FieldValue.UInt16(60_000))
                .put("i", new FieldValue.UInt32(4_000_000_000L))
                .build();

        Map<String, Object> read = new ValueReader(input(ours(table))).readTable();

        assertThat(read).containsEntry("B", 200).containsEntry("u", 60_000).containsEntry("i", 4_000_000_000L);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(MethodId.class)
    void shouldEncodeEveryMethodByteForByteAsTheJavaClient(MethodId id) throws IOException {
        for (long seed = 0; seed < SEEDS_PER_METHOD; seed++) {
            Method method = MethodSamples.random(id, new Gen(seed, true));
            com.rabbitmq.client.impl.Method java = JavaClientMethods.toJava(method);
            // The Java client copies argument tables into HashMaps: compare in the order it writes.
            Method inJavaOrder = JavaClientMethods.fromJava(java);

            byte[] javaPayload = java.toFrame(1).getPayload();

            assertThat(sortedTables((Record) inJavaOrder)).isEqualTo(sortedTables((Record) method));
            assertThat(Hex.of(oursPayload(inJavaOrder)))
                    .as("%s seed %d", id, seed)
                    .isEqualTo(Hex.of(javaPayload));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(MethodId.class)
    void shouldDecodeEveryMethodTheJavaClientEncodes(MethodId id) throws IOException {
        for (long seed = 0; seed < SEEDS_PER_METHOD; seed++) {
            Method method = MethodSamples.random(id, new Gen(seed, true));
            com.rabbitmq.client.impl.Method java = JavaClientMethods.toJava(method);

            List<Frame> frames = ourFrames(javaFrameBytes(java.toFrame(7)));

            assertThat(frames).hasSize(1);
            MethodFrame frame = (MethodFrame) frames.getFirst();
            assertThat(frame.channel()).isEqualTo(7);
            assertThat(sortedTables((Record) frame.method()))
                    .as("%s seed %d", id, seed)
                    .isEqualTo(sortedTables((Record) method));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(MethodId.class)
    void shouldEncodeEveryMethodTheJavaClientDecodes(MethodId id) throws IOException {
        for (long seed = 0; seed < SEEDS_PER_METHOD; seed++) {
            Method method = MethodSamples.random(id, new Gen(seed, true));

            List<com.rabbitmq.client.impl.Frame> frames = javaReadFrames(oursFrame(3, method));

            assertThat(frames).hasSize(1);
            assertThat(frames.getFirst().getChannel()).isEqualTo(3);
            com.rabbitmq.client.impl.Method read =
                    AMQImpl.readMethodFrom(frames.getFirst().getInputStream());
            assertThat(sortedTables((Record) JavaClientMethods.fromJava(read)))
                    .as("%s seed %d", id, seed)
                    .isEqualTo(sortedTables((Record) method));
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldEncodeBasicPropertiesByteForByteAsTheJavaClient(long seed) throws IOException {
        Gen gen = new Gen(seed, true);
        BasicProperties properties = gen.properties();
        long bodySize = gen.uint();
        AMQP.BasicProperties java = JavaClientValues.toJava(properties);
        BasicProperties inJavaOrder = JavaClientValues.fromJava(java);

        byte[] javaPayload = java.toFrame(1, bodySize).getPayload();
        ByteBuf ours = Unpooled.buffer();
        ContentHeaderCodec.encode(ours, ContentHeader.basic(bodySize, inJavaOrder));

        assertThat(sortedTables(inJavaOrder)).isEqualTo(sortedTables(properties));
        assertThat(Hex.of(ByteBufUtilities.toArray(ours))).as("seed %d", seed).isEqualTo(Hex.of(javaPayload));
        assertThat(ContentHeaderCodec.decode(Unpooled.wrappedBuffer(javaPayload)))
                .as("seed %d", seed)
                .isEqualTo(ContentHeader.basic(bodySize, inJavaOrder));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldWriteBasicPropertiesTheJavaClientReads(long seed) throws IOException {
        BasicProperties properties = new Gen(seed, true).properties();
        ByteBuf ours = Unpooled.buffer();
        ContentHeaderCodec.encode(ours, ContentHeader.basic(99, properties));

        AMQP.BasicProperties read =
                (AMQP.BasicProperties) AMQImpl.readContentHeaderFrom(input(ByteBufUtilities.toArray(ours)));

        assertThat(read.getBodySize()).isEqualTo(99);
        assertThat(sortedTables(JavaClientValues.fromJava(read)))
                .as("seed %d", seed)
                .isEqualTo(sortedTables(properties));
    }

    @Test
    void shouldWriteASplitCommandTheJavaClientAssembles() throws IOException {
        byte[] body = new byte[20_000];
        new SplittableRandom(11).nextBytes(body);
        BasicMethod.Deliver deliver = new BasicMethod.Deliver("amq.ctag-1", 9, false, "orders", "eu.paid");
        BasicProperties properties = new Gen(11, true).properties();
        ContentCommand command = new ContentCommand(5, deliver, properties, Unpooled.wrappedBuffer(body));

        ByteBuf encoded = CommandEncoder.encode(UnpooledByteBufAllocator.DEFAULT, command, 4096);
        command.release();
        List<com.rabbitmq.client.impl.Frame> frames = javaReadFrames(ByteBufUtilities.toArray(encoded));

        AMQCommand assembled = new AMQCommand();
        boolean complete = false;
        for (com.rabbitmq.client.impl.Frame frame : frames) {
            assertThat(complete).as("no frame after the command is complete").isFalse();
            assertThat(frame.getChannel()).isEqualTo(5);
            assertThat(frame.size()).isLessThanOrEqualTo(4096);
            complete = assembled.handleFrame(frame);
        }
        assertThat(complete).isTrue();
        assertThat(frames).hasSize(2 + 5);
        assertThat(JavaClientMethods.fromJava(assembled.getMethod())).isEqualTo(deliver);
        assertThat(sortedTables(JavaClientValues.fromJava((AMQP.BasicProperties) assembled.getContentHeader())))
                .isEqualTo(sortedTables(properties));
        assertThat(assembled.getContentBody()).isEqualTo(body);
    }

    @Test
    void shouldAssembleACommandTheJavaClientSplits() {
        byte[] body = new byte[10_000];
        new SplittableRandom(12).nextBytes(body);
        AMQImpl.Basic.Publish publish = new AMQImpl.Basic.Publish(0, "amq.topic", "a.b.c", true, false);
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .contentType("application/json")
                .deliveryMode(2)
                .headers(Map.of("x-trace", "abc"))
                .build();
        List<com.rabbitmq.client.impl.Frame> frames = new ArrayList<>();
        try {
            frames.add(publish.toFrame(2));
            frames.add(properties.toFrame(2, body.length));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int offset = 0; offset < body.length; offset += 4088) {
            frames.add(com.rabbitmq.client.impl.Frame.fromBodyFragment(
                    2, ByteBuffer.wrap(body), offset, Math.min(4088, body.length - offset)));
        }

        CommandAssembler assembler = new CommandAssembler(2);
        List<Command> commands = new ArrayList<>();
        for (Frame frame : ourFrames(javaFrameBytes(frames.toArray(com.rabbitmq.client.impl.Frame[]::new)))) {
            assembler.accept(frame).ifPresent(commands::add);
        }

        assertThat(commands).hasSize(1);
        ContentCommand command = (ContentCommand) commands.getFirst();
        assertThat(command.method()).isEqualTo(new BasicMethod.Publish("amq.topic", "a.b.c", true, false));
        assertThat(command.properties().contentType()).isEqualTo("application/json");
        assertThat(command.properties().deliveryMode()).isEqualTo(2);
        assertThat(command.properties().headers().get("x-trace")).contains(FieldValue.of("abc"));
        assertThat(ByteBufUtil.getBytes(command.body())).isEqualTo(body);
        command.release();
    }

    @Test
    void shouldAnswerAWrongHeaderWithTheHeaderTheJavaClientExpects() throws IOException {
        // The Java client reads an "AMQP" frame start as a version mismatch and reports the version we sent.
        byte[] ours = ByteBufUtilities.toArray(FrameDescriptor.protocolHeader());

        try {
            com.rabbitmq.client.impl.Frame.readFrom(input(ours), () -> Integer.MAX_VALUE);
            throw new AssertionError("the Java client accepted a protocol header as a frame");
        } catch (com.rabbitmq.client.MalformedFrameException e) {
            assertThat(e).hasMessageContaining("server sent signature 0,0,9,1");
        }
    }
}
