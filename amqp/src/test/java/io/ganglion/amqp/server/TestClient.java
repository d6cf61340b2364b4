package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.Command;
import io.ganglion.amqp.codec.CommandAssembler;
import io.ganglion.amqp.codec.CommandEncoder;
import io.ganglion.amqp.codec.ContentCommand;
import io.ganglion.amqp.codec.FrameCodec;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.codec.HeartbeatFrame;
import io.ganglion.amqp.codec.MethodCommand;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.Method;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A client for driving one {@link AmqpConnection} through an {@link EmbeddedChannel}: it writes octets as a client
 * would and parses the server's octets back into frames and whole commands, checking every frame's framing. Time is
 * frozen and moves only with {@link #advance}.
 */
final class TestClient implements AutoCloseable {
    static final String CONNECTION_ID = "test-connection";
    static final byte[] HEADER = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};

    /** What the server sent: a command (with content for deliveries, returns and get-ok) or a heartbeat. */
    record Out(int channel, Method method, BasicProperties properties, byte[] body) {
        static Out heartbeat() {
            return new Out(0, null, null, null);
        }

        boolean isHeartbeat() {
            return method == null;
        }

        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    final FakeBroker broker;
    final EmbeddedChannel channel;
    final AmqpConnection connection;
    private final ByteBuf received = Unpooled.buffer();
    private final Map<Integer, CommandAssembler> assemblers = new HashMap<>();
    private int frameMax = FrameDescriptor.FRAME_MIN_SIZE;

    TestClient(FakeBroker broker) {
        this(broker, AmqpServerConfig.defaults());
    }

    TestClient(FakeBroker broker, AmqpServerConfig config) {
        this(broker, config, new EmbeddedChannel());
    }

    TestClient(FakeBroker broker, AmqpServerConfig config, EmbeddedChannel channel) {
        this.broker = broker;
        this.channel = channel;
        channel.freezeTime();
        this.connection = AmqpConnection.install(channel.pipeline(), broker, config, CONNECTION_ID);
    }

    /** The frame size the server's frames are checked against; 131072 bounds whatever a client negotiates. */
    void expectFrameMax(int frameMax) {
        this.frameMax = frameMax;
    }

    // ---------------------------------------------------------------- writing

    void sendBytes(byte[] bytes) {
        channel.writeInbound(Unpooled.wrappedBuffer(bytes));
    }

    void sendHeader() {
        sendBytes(HEADER);
    }

    void send(int channelNumber, Method method) {
        ByteBuf frame = Unpooled.buffer();
        FrameCodec.writeMethodFrame(frame, channelNumber, method);
        channel.writeInbound(frame);
    }

    void sendHeartbeat() {
        ByteBuf frame = Unpooled.buffer();
        FrameCodec.writeHeartbeat(frame);
        channel.writeInbound(frame);
    }

    void publish(int channelNumber, BasicMethod.Publish publish, BasicProperties properties, String body) {
        publish(channelNumber, publish, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    void publish(int channelNumber, BasicMethod.Publish publish, BasicProperties properties, byte[] body) {
        channel.writeInbound(encodePublish(channelNumber, publish, properties, body, frameMax == 0 ? 0 : frameMax));
    }

    void publish(int channelNumber, String exchange, String routingKey, String body) {
        publish(
                channelNumber,
                new BasicMethod.Publish(exchange, routingKey, false, false),
                BasicProperties.EMPTY,
                body);
    }

    static ByteBuf encodePublish(
            int channelNumber, BasicMethod.Publish publish, BasicProperties properties, byte[] body, int frameMax) {
        ContentCommand command = new ContentCommand(channelNumber, publish, properties, Unpooled.wrappedBuffer(body));
        try {
            return CommandEncoder.encode(ByteBufAllocator.DEFAULT, command, frameMax);
        } finally {
            command.release();
        }
    }

    // ---------------------------------------------------------------- reading

    /** Runs the event loop's pending tasks and returns everything the server sent since the last read. */
    List<Out> read() {
        collect();
        List<Out> out = new ArrayList<>();
        while (received.readableBytes() >= FrameDescriptor.FRAME_HEADER_LENGTH) {
            int start = received.readerIndex();
            int type = received.getUnsignedByte(start);
            int channelNumber = received.getUnsignedShort(start + 1);
            long size = received.getUnsignedInt(start + 3);
            if (received.readableBytes() < size + FrameDescriptor.FRAME_OVERHEAD) {
                break;
            }
            assertThat((int) received.getUnsignedByte(start + 7 + (int) size))
                    .as("frame end")
                    .isEqualTo(FrameDescriptor.FRAME_END);
            if (frameMax != 0) {
                assertThat(size + FrameDescriptor.FRAME_OVERHEAD)
                        .as("frame size within frame_max")
                        .isLessThanOrEqualTo(frameMax);
            }
            ByteBuf payload = received.retainedSlice(start + 7, (int) size);
            received.skipBytes((int) size + FrameDescriptor.FRAME_OVERHEAD);
            try {
                var frame = FrameCodec.decode(type, channelNumber, payload);
                if (frame instanceof HeartbeatFrame) {
                    out.add(Out.heartbeat());
                    continue;
                }
                CommandAssembler assembler = assemblers.computeIfAbsent(channelNumber, n -> new CommandAssembler(n));
                assembler.accept(frame).ifPresent(command -> out.add(toOut(command)));
            } finally {
                payload.release();
            }
        }
        received.discardReadBytes();
        return out;
    }

    /** The methods of {@link #read()}, heartbeats left out. */
    List<Method> methods() {
        return read().stream().filter(o -> !o.isHeartbeat()).map(Out::method).toList();
    }

    /** Everything the server sent, as raw octets (for the protocol header refusal). */
    byte[] readBytes() {
        collect();
        byte[] bytes = ByteBufUtil.getBytes(received);
        received.clear();
        return bytes;
    }

    private void collect() {
        channel.runPendingTasks();
        for (Object message = channel.readOutbound(); message != null; message = channel.readOutbound()) {
            ByteBuf buffer = (ByteBuf) message;
            received.writeBytes(buffer);
            buffer.release();
        }
    }

    private static Out toOut(Command command) {
        if (command instanceof MethodCommand m) {
            return new Out(m.channel(), m.method(), null, null);
        }
        ContentCommand c = (ContentCommand) command;
        try {
            return new Out(c.channel(), c.method(), c.properties(), ByteBufUtil.getBytes(c.body()));
        } finally {
            c.release();
        }
    }

    // ---------------------------------------------------------------- scripts

    static FieldTable clientProperties(boolean authenticationFailureClose) {
        FieldTable capabilities = FieldTable.builder()
                .put("publisher_confirms", true)
                .put("exchange_exchange_bindings", true)
                .put("basic.nack", true)
                .put("consumer_cancel_notify", true)
                .put("connection.blocked", true)
                .put("authentication_failure_close", authenticationFailureClose)
                .build();
        return FieldTable.builder()
                .put("product", "test-client")
                .put("capabilities", capabilities)
                .build();
    }

    static LongString plain(String user, String password) {
        return LongString.of("\0" + user + "\0" + password);
    }

    static ConnectionMethod.StartOk startOk(String user, String password) {
        return new ConnectionMethod.StartOk(clientProperties(true), "PLAIN", plain(user, password), "en_US");
    }

    /** Header, start-ok (guest/guest), tune-ok with {@code heartbeat}, open "/": the connection is running. */
    void handshake(int heartbeat) {
        sendHeader();
        assertThat(methods()).singleElement().isInstanceOf(ConnectionMethod.Start.class);
        send(0, startOk("guest", "guest"));
        assertThat(methods()).containsExactly(new ConnectionMethod.Tune(2047, 131_072, 60));
        send(0, new ConnectionMethod.TuneOk(2047, 131_072, heartbeat));
        frameMax = 131_072;
        send(0, new ConnectionMethod.Open("/"));
        assertThat(methods()).containsExactly(new ConnectionMethod.OpenOk());
    }

    void handshake() {
        handshake(0);
    }

    void openChannel(int number) {
        send(number, new ChannelMethod.Open());
        assertThat(read()).containsExactly(new Out(number, new ChannelMethod.OpenOk(), null, null));
    }

    /** Moves the frozen clock and runs what came due. */
    void advance(Duration duration) {
        channel.advanceTimeBy(duration.toNanos(), TimeUnit.NANOSECONDS);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();
    }

    /** Runs posted tasks (deliveries, completed stages). */
    void runTasks() {
        channel.runPendingTasks();
    }

    boolean isOpen() {
        return channel.isOpen();
    }

    @Override
    public void close() {
        channel.finishAndReleaseAll();
        received.release();
        assemblers.values().forEach(CommandAssembler::release);
    }
}
