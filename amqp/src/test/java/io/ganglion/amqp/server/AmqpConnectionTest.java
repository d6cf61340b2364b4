package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.AmqpFrameDecoder;
import io.ganglion.amqp.codec.FrameCodec;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.QueueMethod;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The handshake, channel 0, heartbeats and closing, driven through an {@code EmbeddedChannel}. */
class AmqpConnectionTest {
    private final FakeBroker broker = new FakeBroker();
    private final TestClient client = new TestClient(broker);

    @AfterEach
    void close() {
        client.close();
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    // ---------------------------------------------------------------- protocol header

    @Test
    void shouldAnswerProtocolHeaderWithConnectionStartAsRabbitMq() {
        client.sendHeader();

        FieldTable.Builder capabilities = FieldTable.builder();
        for (String name : "publisher_confirms exchange_exchange_bindings basic.nack consumer_cancel_notify"
                .concat(" connection.blocked authentication_failure_close per_consumer_qos")
                .split(" ")) {
            capabilities.put(name, true);
        }
        FieldTable properties = FieldTable.builder()
                .put("capabilities", capabilities.build())
                .put("cluster_name", "test-cluster")
                .put("platform", "Java")
                .put("product", "Ganglion")
                .put("version", "3.10.8")
                .put("information", "Ganglion 0.1.0, a replicated broker speaking AMQP 0-9-1 as RabbitMQ 3.10.8 does")
                .put("copyright", "Ganglion authors")
                .build();
        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Start(
                        0, 9, properties, LongString.of("PLAIN AMQPLAIN"), LongString.of("en_US")));
    }

    @Test
    void shouldAcceptTheAmqp09HeaderAsRabbitMqDoes() {
        client.sendBytes(new byte[] {'A', 'M', 'Q', 'P', 1, 1, 0, 9});

        assertThat(client.methods()).singleElement().isInstanceOf(ConnectionMethod.Start.class);
    }

    @Test
    void shouldAnswerAForeignHeaderWithOurHeaderAndClose() {
        client.sendBytes("GET / HTTP/1.1\r\n\r\n".getBytes());

        assertThat(hex(client.readBytes())).isEqualTo("414d515000000901");
        assertThat(client.isOpen()).isFalse();
    }

    // ---------------------------------------------------------------- authentication

    @Test
    void shouldSendTuneWithRabbitMqDefaultsAfterPlainLogin() {
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "guest"));

        // connection.tune: channel_max 2047, frame_max 131072, heartbeat 60
        assertThat(hex(client.readBytes()))
                .isEqualTo("01" + "0000" + "0000000c" + "000a001e" + "07ff" + "00020000" + "003c" + "ce");
    }

    @Test
    void shouldAcceptAmqplainWhoseTableHasNoLengthPrefix() {
        client.sendHeader();
        client.read();
        // As the Java client and RabbitMQ write it: the table's entries without its 4-octet length.
        ByteBuf table = Unpooled.buffer();
        writeLongStringEntry(table, "LOGIN", "guest");
        writeLongStringEntry(table, "PASSWORD", "guest");
        byte[] response = new byte[table.readableBytes()];
        table.readBytes(response);
        table.release();

        client.send(
                0,
                new ConnectionMethod.StartOk(
                        TestClient.clientProperties(true), "AMQPLAIN", LongString.copyOf(response), "en_US"));

        assertThat(client.methods()).containsExactly(new ConnectionMethod.Tune(2047, 131_072, 60));
    }

    private static void writeLongStringEntry(ByteBuf out, String name, String value) {
        out.writeByte(name.length()).writeBytes(name.getBytes());
        out.writeByte('S').writeInt(value.length()).writeBytes(value.getBytes());
    }

    @Test
    void shouldCloseWith403WhenThePasswordIsWrongAndCloseSocketOnCloseOk() {
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "wrong"));

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(
                        403,
                        "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the"
                                + " broker logfile.",
                        0,
                        0));
        assertThat(client.isOpen()).isTrue();

        client.send(0, new ConnectionMethod.CloseOk());

        assertThat(client.isOpen()).isFalse();
        assertThat(broker.closedConnections).isEmpty();
    }

    @Test
    void shouldCloseTheSocketSilentlyOnBadLoginWhenTheClientCannotTakeAClose() {
        client.sendHeader();
        client.read();
        client.send(
                0,
                new ConnectionMethod.StartOk(
                        TestClient.clientProperties(false), "PLAIN", TestClient.plain("guest", "wrong"), "en_US"));

        assertThat(client.read()).isEmpty();
        assertThat(client.isOpen()).isFalse();
    }

    @Test
    void shouldCloseWith503OnAMechanismNotOffered() {
        client.sendHeader();
        client.read();
        client.send(
                0,
                new ConnectionMethod.StartOk(TestClient.clientProperties(true), "EXTERNAL", LongString.EMPTY, "en_US"));

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(
                        503, "COMMAND_INVALID - unknown authentication mechanism 'EXTERNAL'", 10, 11));
    }

    @Test
    void shouldCloseWith502OnAMalformedPlainResponse() {
        client.sendHeader();
        client.read();
        client.send(
                0,
                new ConnectionMethod.StartOk(
                        TestClient.clientProperties(true), "PLAIN", LongString.of("guest:guest"), "en_US"));

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(502, "SYNTAX_ERROR - PLAIN response invalid", 10, 11));
    }

    // ---------------------------------------------------------------- tuning and opening

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "2047 | 1024   | NOT_ALLOWED - negotiated frame_max = 1024 is lower than the minimum allowed value"
                        + " (4096)",
                "2047 | 200000 | NOT_ALLOWED - negotiated frame_max = 200000 is higher than the maximum allowed value"
                        + " (131072)",
                "4000 | 131072 | NOT_ALLOWED - negotiated channel_max = 4000 is higher than the maximum allowed value"
                        + " (2047)"
            })
    void shouldCloseWith530WhenTuneOkAsksForMoreOrLessThanAllowed(int channelMax, long frameMax, String text) {
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "guest"));
        client.read();

        client.send(0, new ConnectionMethod.TuneOk(channelMax, frameMax, 0));

        assertThat(client.methods()).containsExactly(new ConnectionMethod.Close(530, text, 10, 30));
    }

    @Test
    void shouldTakeZeroInTuneOkAsNoLimitFromTheClientAndApplyOurs() {
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "guest"));
        client.read();

        client.send(0, new ConnectionMethod.TuneOk(0, 0, 0));
        client.send(0, new ConnectionMethod.Open("/"));

        assertThat(client.methods()).containsExactly(new ConnectionMethod.OpenOk());
        assertThat(client.channel.pipeline().get(AmqpFrameDecoder.class).frameMax())
                .isEqualTo(131_072);
        client.openChannel(2047);
    }

    @Test
    void shouldCloseWith530WhenTheVhostIsRefused() {
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "guest"));
        client.read();
        client.send(0, new ConnectionMethod.TuneOk(2047, 131_072, 0));

        client.send(0, new ConnectionMethod.Open("secret"));

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(
                        530, "NOT_ALLOWED - access to vhost 'secret' refused for user 'guest'", 10, 40));
    }

    @Test
    void shouldCloseWith504OnAConnectionMethodOutOfTurn() {
        client.sendHeader();
        client.read();

        client.send(0, new ConnectionMethod.Open("/"));

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(
                        504, "CHANNEL_ERROR - unexpected method in connection state starting", 10, 40));
    }

    @Test
    void shouldCloseWith505OnAChannelFrameBeforeTheConnectionIsOpen() {
        client.sendHeader();
        client.read();

        client.send(1, new ChannelMethod.Open());

        assertThat(client.methods())
                .singleElement()
                .isInstanceOfSatisfying(
                        ConnectionMethod.Close.class,
                        close -> assertThat(close.replyCode()).isEqualTo(505));
    }

    @Test
    void shouldCloseWith501OnAFrameAboveTheInitialLimitBeforeTuneOk() {
        client.sendHeader();
        client.read();
        ByteBuf frame = Unpooled.buffer();
        FrameCodec.writeFrameHeader(frame, FrameDescriptor.FRAME_METHOD, 0, 5000);
        client.channel.writeInbound(frame);

        assertThat(client.methods()).singleElement().isInstanceOfSatisfying(ConnectionMethod.Close.class, close -> {
            assertThat(close.replyCode()).isEqualTo(501);
            assertThat(close.replyText()).startsWith("FRAME_ERROR - frame payload of 5000 octets");
        });
    }

    /** After tune-ok, the negotiated frame_max bounds every frame: a body or a content header one octet over is 501. */
    @ParameterizedTest
    @ValueSource(ints = {FrameDescriptor.FRAME_BODY, FrameDescriptor.FRAME_HEADER})
    void shouldCloseWith501OnAContentFrameAboveTheNegotiatedFrameMax(int frameType) {
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "guest"));
        client.read();
        client.send(0, new ConnectionMethod.TuneOk(2047, 4096, 0));
        client.send(0, new ConnectionMethod.Open("/"));
        assertThat(client.methods()).containsExactly(new ConnectionMethod.OpenOk());
        client.openChannel(1);

        ByteBuf frame = Unpooled.buffer();
        FrameCodec.writeFrameHeader(frame, frameType, 1, 4097);
        client.channel.writeInbound(frame);

        assertThat(client.methods()).singleElement().isInstanceOfSatisfying(ConnectionMethod.Close.class, close -> {
            assertThat(close.replyCode()).isEqualTo(501);
            assertThat(close.replyText()).startsWith("FRAME_ERROR - frame payload of 4097 octets");
        });
    }

    @Test
    void shouldKeepReadingWhenTheSocketIsNotWritable() {
        client.handshake();
        // the client reads slowly: what we wrote piles up past the high-water mark
        client.channel.config().setWriteBufferWaterMark(new io.netty.channel.WriteBufferWaterMark(1, 2));
        client.channel.write(io.netty.buffer.Unpooled.wrappedBuffer(new byte[64]));
        assertThat(client.channel.isWritable()).isFalse();
        client.channel.pipeline().fireChannelWritabilityChanged();

        // still reading: the acks of a client whose consumers wait for room to write them must get through
        assertThat(client.channel.config().isAutoRead()).isTrue();
    }

    @Test
    void shouldAnswerUpdateSecretWithUpdateSecretOkAndStayOpen() {
        client.handshake();

        client.send(0, new ConnectionMethod.UpdateSecret(LongString.of("token"), "refresh"));

        assertThat(client.methods()).containsExactly(new ConnectionMethod.UpdateSecretOk());
        client.send(1, new ChannelMethod.Open());
        assertThat(client.methods()).containsExactly(new ChannelMethod.OpenOk());
        assertThat(client.isOpen()).isTrue();
    }

    @Test
    void shouldCloseWith504OnUpdateSecretBeforeTheConnectionIsOpen() {
        client.sendHeader();
        client.read();

        client.send(0, new ConnectionMethod.UpdateSecret(LongString.of("token"), "refresh"));

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(
                        504, "CHANNEL_ERROR - unexpected method in connection state starting", 10, 70));
    }

    @Test
    void shouldCloseWith541WhenTheBrokerThrowsUnexpectedly() {
        broker.vhostFailure = new IllegalStateException("boom");
        client.sendHeader();
        client.read();
        client.send(0, TestClient.startOk("guest", "guest"));
        client.read();
        client.send(0, new ConnectionMethod.TuneOk(2047, 131_072, 0));

        client.send(0, new ConnectionMethod.Open("/"));

        assertThat(client.methods())
                .containsExactly(
                        new ConnectionMethod.Close(541, "INTERNAL_ERROR - unexpected IllegalStateException", 0, 0));
    }

    // ---------------------------------------------------------------- closing

    @Test
    void shouldAnswerClientCloseWithCloseOkThenCloseTheSocketAndTellTheBroker() {
        client.handshake();

        client.send(0, new ConnectionMethod.Close(200, "bye", 0, 0));

        assertThat(hex(client.readBytes())).isEqualTo("01" + "0000" + "00000004" + "000a0033" + "ce");
        assertThat(client.isOpen()).isFalse();
        assertThat(broker.closedConnections).containsExactly(TestClient.CONNECTION_ID);
    }

    @Test
    void shouldDiscardEverythingButCloseOkAfterSendingClose() {
        client.handshake();
        client.send(5, new QueueMethod.Declare("q", false, false, false, false, false, FieldTable.EMPTY));
        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(504, "CHANNEL_ERROR - expected 'channel.open'", 50, 10));

        client.send(1, new ChannelMethod.Open());
        client.send(0, new ConnectionMethod.TuneOk(1, 4096, 0));
        client.publish(1, "", "q", "ignored");
        client.sendHeartbeat();

        assertThat(client.read()).isEmpty();
        assertThat(client.isOpen()).isTrue();

        client.send(0, new ConnectionMethod.CloseOk());

        assertThat(client.isOpen()).isFalse();
    }

    @Test
    void shouldAnswerCloseWithCloseOkWhenBothSidesClose() {
        client.handshake();
        client.send(3, new ChannelMethod.Flow(true));
        client.read();

        client.send(0, new ConnectionMethod.Close(200, "bye", 0, 0));

        assertThat(client.methods()).containsExactly(new ConnectionMethod.CloseOk());
        assertThat(client.isOpen()).isFalse();
    }

    @Test
    void shouldCloseTheSocketWhenCloseOkNeverComes() {
        client.handshake();
        client.send(7, new ChannelMethod.Flow(true));
        client.read();

        client.advance(Duration.ofSeconds(29));
        assertThat(client.isOpen()).isTrue();

        client.advance(Duration.ofSeconds(2));
        assertThat(client.isOpen()).isFalse();
    }

    @Test
    void shouldCloseWith320WhenTheBrokerForcesTheConnectionClosed() {
        client.handshake();

        client.connection.forceClose("shutdown");

        assertThat(client.methods())
                .containsExactly(new ConnectionMethod.Close(
                        320, "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'", 0, 0));
        assertThat(broker.closedConnections).containsExactly(TestClient.CONNECTION_ID);
    }

    @Test
    void shouldCloseTheSocketWhenTheHandshakeTakesTooLong() {
        client.sendHeader();
        client.read();

        client.advance(Duration.ofSeconds(9));
        assertThat(client.isOpen()).isTrue();

        client.advance(Duration.ofSeconds(2));
        assertThat(client.isOpen()).isFalse();
    }

    // ---------------------------------------------------------------- heartbeats

    @Test
    void shouldSendAHeartbeatEveryHalfIntervalWhenNothingElseWasSent() {
        client.handshake(60);
        // open-ok went out in the first half interval, so the first heartbeat is due at the second check.
        client.advance(Duration.ofSeconds(30));
        client.advance(Duration.ofSeconds(29));
        assertThat(client.readBytes()).isEmpty();

        client.advance(Duration.ofSeconds(1));
        assertThat(hex(client.readBytes())).isEqualTo("08" + "0000" + "00000000" + "ce");

        client.advance(Duration.ofSeconds(30));
        assertThat(hex(client.readBytes())).isEqualTo("08" + "0000" + "00000000" + "ce");
    }

    @Test
    void shouldNotSendAHeartbeatWhenAFrameWentOutInTheInterval() {
        client.handshake(60);
        client.advance(Duration.ofSeconds(30));
        client.read();

        client.advance(Duration.ofSeconds(20));
        client.openChannel(1);
        client.advance(Duration.ofSeconds(10));

        assertThat(client.read()).isEmpty();
    }

    @Test
    void shouldDropAPeerSilentForTwoHeartbeatIntervalsWithoutAClose() {
        client.handshake(60);
        // The first check sees the handshake's octets; the next two see nothing.
        client.advance(Duration.ofSeconds(120));
        assertThat(client.isOpen()).isTrue();

        client.advance(Duration.ofSeconds(60));
        assertThat(client.isOpen()).isFalse();
        assertThat(client.methods()).isEmpty();
        assertThat(broker.closedConnections).containsExactly(TestClient.CONNECTION_ID);
    }

    @Test
    void shouldKeepAPeerThatSendsHeartbeats() {
        client.handshake(60);

        for (int i = 0; i < 10; i++) {
            client.advance(Duration.ofSeconds(30));
            client.sendHeartbeat();
        }

        assertThat(client.isOpen()).isTrue();
        assertThat(client.read()).isNotEmpty().allMatch(TestClient.Out::isHeartbeat);
    }

    @Test
    void shouldNotSendHeartbeatsWhenTheClientTunedThemOff() {
        client.handshake(0);

        client.advance(Duration.ofMinutes(5));

        assertThat(client.isOpen()).isTrue();
        assertThat(client.read()).isEmpty();
    }

    @Test
    void shouldAdvertiseCapabilitiesAsBooleans() {
        ConnectionMethod.Start start = AmqpConnection.start(FakeBroker.INFO);

        FieldTable capabilities =
                ((FieldValue.Table) start.serverProperties().get("capabilities").orElseThrow()).value();
        assertThat(capabilities.entries()).extracting(FieldTable.Entry::value).containsOnly(new FieldValue.Bool(true));
    }
}
