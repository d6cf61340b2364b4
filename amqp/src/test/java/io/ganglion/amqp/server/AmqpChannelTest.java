package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.codec.FrameCodec;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.protocol.AccessMethod;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConfirmMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.TxMethod;
import io.ganglion.amqp.server.TestClient.Out;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Channels over a running connection: lifecycle, errors, publishing, confirms, consuming, settling, qos, tx. */
class AmqpChannelTest {
    private final FakeBroker broker = new FakeBroker();
    private TestClient client = new TestClient(broker);

    @AfterEach
    void close() {
        client.close();
    }

    private void open() {
        client.handshake();
        client.openChannel(1);
    }

    /**
     * Opens channel 1, declares queue {@code q} and sends {@code mode} (a confirm or tx select, its reply read when it
     * has one); the broker then holds every durable publish until the test completes it.
     */
    private void openWithDurablesHeld(Method mode) {
        open();
        declare(1, "q");
        client.send(1, mode);
        client.read();
        broker.holdDurables = true;
    }

    private static Out out(int channel, Method method) {
        return new Out(channel, method, null, null);
    }

    private void declare(int channel, String queue) {
        client.send(channel, new QueueMethod.Declare(queue, false, false, false, false, false, FieldTable.EMPTY));
        assertThat(client.methods()).containsExactly(new QueueMethod.DeclareOk(queue, 0, 0));
    }

    private static BasicMethod.Consume consume(String queue, String tag) {
        return new BasicMethod.Consume(queue, tag, false, false, false, false, FieldTable.EMPTY);
    }

    private static BasicMethod.Publish mandatory(String exchange, String routingKey) {
        return new BasicMethod.Publish(exchange, routingKey, true, false);
    }

    private static Method deliver(String tag, long deliveryTag, String queue) {
        return new BasicMethod.Deliver(tag, deliveryTag, false, "", queue);
    }

    private List<String> bodies(List<Out> outs) {
        return outs.stream().filter(o -> o.body() != null).map(Out::bodyText).toList();
    }

    @Nested
    class Lifecycle {
        @Test
        void shouldCloseTheChannelOnRequestAndLetItsNumberBeReused() {
            open();

            client.send(1, new ChannelMethod.Close(200, "bye", 0, 0));

            assertThat(client.read()).containsExactly(out(1, new ChannelMethod.CloseOk()));
            client.openChannel(1);
        }

        @Test
        void shouldCloseTheConnectionWith504WhenAnOpenChannelIsOpenedAgain() {
            open();

            client.send(1, new ChannelMethod.Open());

            assertThat(client.read())
                    .containsExactly(out(
                            0, new ConnectionMethod.Close(504, "CHANNEL_ERROR - second 'channel.open' seen", 20, 10)));
        }

        @Test
        void shouldCloseTheConnectionWith504WhenAChannelIsAboveTheNegotiatedChannelMax() {
            client.sendHeader();
            client.read();
            client.send(0, TestClient.startOk("guest", "guest"));
            client.read();
            client.send(0, new ConnectionMethod.TuneOk(10, 131_072, 0));
            client.send(0, new ConnectionMethod.Open("/"));
            client.read();
            client.openChannel(10);

            client.send(11, new ChannelMethod.Open());

            assertThat(client.methods())
                    .containsExactly(new ConnectionMethod.Close(
                            504, "CHANNEL_ERROR - channel number 11 is above the negotiated channel_max (10)", 20, 10));
        }

        @Test
        void shouldCloseTheConnectionWith504OnAMethodForAChannelNeverOpened() {
            open();

            client.send(9, new BasicMethod.Qos(0, 10, false));

            assertThat(client.methods())
                    .containsExactly(
                            new ConnectionMethod.Close(504, "CHANNEL_ERROR - expected 'channel.open'", 60, 10));
            assertThat(broker.closedConnections).containsExactly(TestClient.CONNECTION_ID);
        }

        @Test
        void shouldCloseTheConnectionWith505OnContentWithoutAMethod() {
            open();
            ByteBuf header = Unpooled.buffer();
            FrameCodec.writeHeaderFrame(header, 1, ContentHeader.basic(5, BasicProperties.EMPTY));

            client.channel.writeInbound(header);

            assertThat(client.methods())
                    .containsExactly(new ConnectionMethod.Close(
                            505, "UNEXPECTED_FRAME - expected method frame, got non method frame instead", 0, 0));
        }

        @Test
        void shouldCloseTheConnectionWith503OnAMethodOnlyTheServerSends() {
            open();

            client.send(1, new QueueMethod.DeclareOk("q", 0, 0));

            assertThat(client.methods())
                    .containsExactly(new ConnectionMethod.Close(503, "COMMAND_INVALID - unimplemented method", 50, 11));
        }

        @Test
        void shouldAnswerFlowActiveAndRefuseFlowInactiveAsRabbitMq() {
            open();

            client.send(1, new ChannelMethod.Flow(true));
            assertThat(client.methods()).containsExactly(new ChannelMethod.FlowOk(true));

            client.send(1, new ChannelMethod.Flow(false));
            assertThat(client.methods())
                    .containsExactly(new ConnectionMethod.Close(540, "NOT_IMPLEMENTED - active=false", 20, 20));
        }

        @Test
        void shouldGrantAccessTicketOne() {
            open();

            client.send(1, new AccessMethod.Request("/data", false, false, true, true, true));

            assertThat(client.methods()).containsExactly(new AccessMethod.RequestOk(1));
        }
    }

    @Nested
    class SoftErrors {
        @Test
        void shouldCloseOnlyTheChannelWhenAQueueIsMissing() {
            open();
            client.openChannel(2);

            client.send(1, new QueueMethod.Declare("missing", true, false, false, false, false, FieldTable.EMPTY));

            assertThat(client.read())
                    .containsExactly(out(
                            1, new ChannelMethod.Close(404, "NOT_FOUND - no queue 'missing' in vhost '/'", 50, 10)));
            declare(2, "q");
            assertThat(client.isOpen()).isTrue();
        }

        @Test
        void shouldDiscardFramesOnAClosingChannelUntilCloseOk() {
            open();
            broker.addQueue("q");
            client.send(1, new BasicMethod.Get("missing", false));
            assertThat(client.methods())
                    .containsExactly(
                            new ChannelMethod.Close(404, "NOT_FOUND - no queue 'missing' in vhost '/'", 60, 70));

            client.send(1, new QueueMethod.Declare("other", false, false, false, false, false, FieldTable.EMPTY));
            client.publish(1, "", "q", "dropped");
            client.send(1, new BasicMethod.Ack(1, false));
            client.send(1, new ChannelMethod.Open());
            assertThat(client.read()).isEmpty();
            assertThat(broker.publishes).isZero();
            assertThat(broker.hasQueue("other")).isFalse();

            client.send(1, new ChannelMethod.Close(200, "me too", 0, 0));
            assertThat(client.read()).containsExactly(out(1, new ChannelMethod.CloseOk()));

            client.send(1, new ChannelMethod.CloseOk());
            assertThat(client.read()).isEmpty();
            client.openChannel(1);
        }

        @Test
        void shouldCloseTheChannelWith404WhenNoQueueWasDeclaredForAnEmptyName() {
            open();

            client.send(1, new BasicMethod.Get("", true));

            assertThat(client.methods())
                    .containsExactly(new ChannelMethod.Close(404, "NOT_FOUND - no previously declared queue", 60, 70));
        }

        @Test
        void shouldCloseTheChannelWith406WhenUserIdIsNotTheAuthenticatedUser() {
            open();
            BasicProperties properties =
                    BasicProperties.builder().userId("mallory").build();

            client.publish(1, new BasicMethod.Publish("", "q", false, false), properties, "x");

            assertThat(client.methods())
                    .containsExactly(new ChannelMethod.Close(
                            406,
                            "PRECONDITION_FAILED - user_id property set to 'mallory' but authenticated user was"
                                    + " 'guest'",
                            60,
                            40));
        }

        @Test
        void shouldCloseTheChannelWith406OnAnExpirationThatIsNotANumber() {
            open();
            BasicProperties properties =
                    BasicProperties.builder().expiration("soon").build();

            client.publish(1, new BasicMethod.Publish("", "q", false, false), properties, "x");

            assertThat(client.methods())
                    .containsExactly(new ChannelMethod.Close(
                            406, "PRECONDITION_FAILED - invalid expiration 'soon': no_integer", 60, 40));
        }

        @Test
        void shouldCloseTheConnectionWith540OnAnImmediatePublish() {
            open();

            client.publish(1, new BasicMethod.Publish("", "q", false, true), BasicProperties.EMPTY, "now");

            assertThat(client.read())
                    .containsExactly(
                            out(0, new ConnectionMethod.Close(540, "NOT_IMPLEMENTED - immediate=true", 60, 40)));
        }

        @Test
        void shouldCloseTheChannelWith406OnAnOversizedMessageWithoutBufferingItsBody() {
            client.close();
            client = new TestClient(broker, AmqpServerConfig.defaults().withMaxMessageSize(100_000));
            open();
            broker.addQueue("q");

            client.publish(1, "", "q", "x".repeat(300_000));

            assertThat(client.read())
                    .containsExactly(out(
                            1,
                            new ChannelMethod.Close(
                                    406,
                                    "PRECONDITION_FAILED - message size 300000 is larger than configured max size"
                                            + " 100000",
                                    60,
                                    40)));
            assertThat(broker.publishes).isZero();
            client.send(1, new ChannelMethod.CloseOk());
            client.openChannel(1);
            client.publish(1, "", "q", "x".repeat(100_000));
            assertThat(broker.readyCount("q")).isEqualTo(1);
        }

        @Test
        void shouldRefuseAnOversizedMessageOnlyAfterTheCommandsBeforeIt() {
            client.close();
            client = new TestClient(broker, AmqpServerConfig.defaults().withMaxMessageSize(10));
            open();
            broker.holdDeclares = true;

            client.send(1, new QueueMethod.Declare("q", false, false, false, false, false, FieldTable.EMPTY));
            client.publish(1, "", "q", "eleven char");
            assertThat(client.read()).isEmpty();

            broker.heldDeclares.getFirst().complete(new QueueDeclared("q", 0, 0));
            client.runTasks();

            assertThat(client.methods())
                    .containsExactly(
                            new QueueMethod.DeclareOk("q", 0, 0),
                            new ChannelMethod.Close(
                                    406,
                                    "PRECONDITION_FAILED - message size 11 is larger than configured max size 10",
                                    60,
                                    40));
        }
    }

    @Nested
    class Ordering {
        @Test
        void shouldAnswerInRequestOrderWhileTheBrokerIsSlow() {
            open();
            broker.holdDeclares = true;

            client.send(1, new QueueMethod.Declare("q1", false, false, false, false, false, FieldTable.EMPTY));
            client.send(
                    1, new ExchangeMethod.Declare("x", "direct", false, false, false, false, false, FieldTable.EMPTY));
            assertThat(client.read()).isEmpty();

            broker.heldDeclares.getFirst().complete(new QueueDeclared("q1", 3, 1));
            client.runTasks();

            assertThat(client.methods())
                    .containsExactly(new QueueMethod.DeclareOk("q1", 3, 1), new ExchangeMethod.DeclareOk());
        }

        @Test
        void shouldSendNoReplyForNowaitYetRunLaterCommandsAfterIt() {
            open();

            client.send(1, new QueueMethod.Declare("q", false, false, false, false, true, FieldTable.EMPTY));
            client.publish(1, "", "q", "hello");
            client.send(1, new BasicMethod.Get("q", true));

            List<Out> outs = client.read();
            assertThat(outs).extracting(Out::method).containsExactly(new BasicMethod.GetOk(1, false, "", "q", 0));
            assertThat(bodies(outs)).containsExactly("hello");
        }

        @Test
        void shouldAnswerAGetOnlyOnceTheChannelsEarlierPublishIsInItsQueue() {
            open();
            declare(1, "q");
            broker.holdDurables = true;

            client.publish(1, "", "q", "first");
            client.send(1, new BasicMethod.Get("q", true));
            client.send(1, new QueueMethod.Purge(0, "q", false));
            assertThat(client.read()).as("the get waits for the publish").isEmpty();

            broker.heldDurables.getFirst().complete(null);
            client.runTasks();
            List<Out> outs = client.read();
            assertThat(outs)
                    .extracting(Out::method)
                    .containsExactly(new BasicMethod.GetOk(1, false, "", "q", 0), new QueueMethod.PurgeOk(0));
            assertThat(bodies(outs)).containsExactly("first");
        }

        @Test
        void shouldMakeEveryChannelOfTheConnectionWaitForItsPublishes() {
            open();
            declare(1, "q");
            client.openChannel(2);
            broker.holdDurables = true;

            client.publish(1, "", "q", "one");
            client.publish(1, "", "q", "two");
            client.send(2, new QueueMethod.Declare("q", true, false, false, false, false, FieldTable.EMPTY));
            client.send(2, new QueueMethod.Delete(0, "q", false, false, false));
            client.send(
                    2, new ExchangeMethod.Declare("x", "direct", false, false, false, false, false, FieldTable.EMPTY));
            assertThat(client.read()).isEmpty();

            broker.heldDurables.get(1).complete(null);
            client.runTasks();
            assertThat(client.read()).as("one publish still pending").isEmpty();

            // a publish that failed put nothing in its queue: the operation goes on without it
            broker.heldDurables.get(0).completeExceptionally(new IllegalStateException("replica lost"));
            client.runTasks();
            assertThat(client.methods())
                    .containsExactly(
                            new QueueMethod.DeclareOk("q", 2, 0),
                            new QueueMethod.DeleteOk(2),
                            new ExchangeMethod.DeclareOk());
        }

        @Test
        void shouldNotWaitForPublishesAlreadyInTheirQueues() {
            open();
            declare(1, "q");
            broker.holdDurables = true;
            client.publish(1, "", "q", "kept");
            broker.heldDurables.getFirst().complete(null);
            client.runTasks();

            client.send(1, new BasicMethod.Get("q", true));
            assertThat(client.methods()).containsExactly(new BasicMethod.GetOk(1, false, "", "q", 0));
        }

        @Test
        void shouldBindWithTheLastDeclaredQueueWhenNamesAreEmpty() {
            open();
            declare(1, "q");

            client.send(1, new QueueMethod.Bind("", "amq.direct", "", false, FieldTable.EMPTY));
            client.publish(1, "amq.direct", "q", "routed by the queue's name");
            client.send(1, new BasicMethod.Get("", true));

            List<Out> outs = client.read();
            assertThat(outs)
                    .extracting(Out::method)
                    .containsExactly(new QueueMethod.BindOk(), new BasicMethod.GetOk(1, false, "amq.direct", "q", 0));
        }
    }

    @Nested
    class Confirms {
        @Test
        void shouldAckASinglePublishWithoutMultiple() {
            open();
            declare(1, "q");
            client.send(1, new ConfirmMethod.Select(false));
            assertThat(client.methods()).containsExactly(new ConfirmMethod.SelectOk());

            client.publish(1, "", "q", "one");

            assertThat(client.methods()).containsExactly(new BasicMethod.Ack(1, false));
        }

        @Test
        void shouldAckTheLowestContiguousRunWithOneMultipleAck() {
            openWithDurablesHeld(new ConfirmMethod.Select(true));
            for (int i = 1; i <= 4; i++) {
                client.publish(1, "", "q", "m" + i);
            }
            assertThat(client.read()).isEmpty();

            broker.heldDurables.get(3).complete(null);
            broker.heldDurables.get(0).complete(null);
            broker.heldDurables.get(1).complete(null);
            client.runTasks();
            assertThat(client.methods()).containsExactly(new BasicMethod.Ack(2, true), new BasicMethod.Ack(4, false));

            broker.heldDurables.get(2).complete(null);
            client.runTasks();
            assertThat(client.methods()).containsExactly(new BasicMethod.Ack(3, false));
        }

        @Test
        void shouldCoverEverythingWithOneMultipleAckWhenAllCompleteTogether() {
            openWithDurablesHeld(new ConfirmMethod.Select(true));
            for (int i = 1; i <= 3; i++) {
                client.publish(1, "", "q", "m" + i);
            }

            broker.heldDurables.get(2).complete(null);
            broker.heldDurables.get(0).complete(null);
            broker.heldDurables.get(1).complete(null);
            client.runTasks();

            assertThat(client.methods()).containsExactly(new BasicMethod.Ack(3, true));
        }

        @Test
        void shouldNackAPublishWhoseDurabilityFailed() {
            openWithDurablesHeld(new ConfirmMethod.Select(true));
            client.publish(1, "", "q", "lost");
            client.publish(1, "", "q", "kept");

            broker.heldDurables.get(0).completeExceptionally(new IllegalStateException("replica lost"));
            broker.heldDurables.get(1).complete(null);
            client.runTasks();

            assertThat(client.methods())
                    .containsExactly(new BasicMethod.Ack(2, false), new BasicMethod.Nack(1, true, false));
            assertThat(client.isOpen()).isTrue();
        }

        @Test
        void shouldReturnAnUnroutableMandatoryPublishBeforeItsAck() {
            open();
            client.send(1, new ConfirmMethod.Select(true));
            BasicProperties properties =
                    BasicProperties.builder().contentType("text/plain").build();

            client.publish(1, mandatory("", "nowhere"), properties, "lost");

            List<Out> outs = client.read();
            assertThat(outs)
                    .extracting(Out::method)
                    .containsExactly(
                            new BasicMethod.Return(312, "NO_ROUTE", "", "nowhere"), new BasicMethod.Ack(1, false));
            assertThat(outs.getFirst().properties()).isEqualTo(properties);
            assertThat(outs.getFirst().bodyText()).isEqualTo("lost");
        }

        @Test
        void shouldOnlyAckAnUnroutablePublishThatIsNotMandatory() {
            open();
            client.send(1, new ConfirmMethod.Select(true));

            client.publish(1, "", "nowhere", "dropped");

            assertThat(client.methods()).containsExactly(new BasicMethod.Ack(1, false));
        }

        @Test
        void shouldReturnAnUnroutableMandatoryPublishWithoutConfirms() {
            open();

            client.publish(1, mandatory("amq.direct", "nowhere"), BasicProperties.EMPTY, "lost");

            assertThat(client.methods())
                    .containsExactly(new BasicMethod.Return(312, "NO_ROUTE", "amq.direct", "nowhere"));
        }

        @Test
        void shouldCloseTheChannelWith404WhenPublishingToAMissingExchange() {
            open();
            client.send(1, new ConfirmMethod.Select(true));

            client.publish(1, "nope", "k", "x");

            assertThat(client.methods())
                    .containsExactly(
                            new ChannelMethod.Close(404, "NOT_FOUND - no exchange 'nope' in vhost '/'", 60, 40));
        }
    }

    /**
     * A content header payload whose octets a decode and re-encode would change: the property flags carry a
     * continuation bit and an empty second flag word, and the headers table holds a value of every field type.
     */
    private static byte[] unusualHeader(int bodySize) {
        FieldTable headers = FieldTable.builder()
                .put("bool", new FieldValue.Bool(true))
                .put("i8", new FieldValue.Int8((byte) -8))
                .put("u8", new FieldValue.UInt8(200))
                .put("i16", new FieldValue.Int16((short) -16))
                .put("u16", new FieldValue.UInt16(60_000))
                .put("i32", new FieldValue.Int32(-32))
                .put("u32", new FieldValue.UInt32(4_000_000_000L))
                .put("i64", new FieldValue.Int64(-64))
                .put("f32", new FieldValue.Float32(1.5f))
                .put("f64", new FieldValue.Float64(-2.25))
                .put("dec", new FieldValue.Decimal(2, 12_345))
                .put("str", "text")
                .put("bytes", new FieldValue.Bytes(LongString.of("raw")))
                .put("array", new FieldValue.Array(List.of(new FieldValue.Int32(1), new FieldValue.Bool(false))))
                .put("ts", new FieldValue.Timestamp(1_700_000_000L))
                .put("table", FieldTable.builder().put("inner", 1).build())
                .put("void", new FieldValue.VoidValue())
                .build();
        BasicProperties properties = BasicProperties.builder()
                .contentType("application/x-test")
                .headers(headers)
                .priority(3)
                .build();
        ByteBuffer canonical = ContentHeaderCodec.encoded(ContentHeader.basic(bodySize, properties));
        byte[] octets = new byte[canonical.remaining() + 2];
        canonical.get(canonical.position(), octets, 0, 12); // class, weight, body size
        int flags = canonical.getShort(canonical.position() + 12) & 0xFFFF;
        octets[12] = (byte) (flags >>> 8);
        octets[13] = (byte) (flags | 0x0001); // a continuation bit, then a second flag word with no flag set
        canonical.get(canonical.position() + 14, octets, 16, canonical.remaining() - 14);
        return octets;
    }

    /** A publish on channel 1 sent as raw frames, so that its header frame is {@code header}'s octets. */
    private void publishRaw(BasicMethod.Publish publish, byte[] header, byte[] body) {
        client.send(1, publish);
        client.sendBytes(frame(FrameDescriptor.FRAME_HEADER, header));
        client.sendBytes(frame(FrameDescriptor.FRAME_BODY, body));
    }

    private static byte[] frame(int type, byte[] payload) {
        ByteBuf out = Unpooled.buffer();
        FrameCodec.writeFrameHeader(out, type, 1, payload.length);
        out.writeBytes(payload).writeByte(FrameDescriptor.FRAME_END);
        return ByteBufUtil.getBytes(out);
    }

    /** The payloads of the header frames in {@code bytes}, a run of whole frames. */
    private static List<byte[]> headerPayloads(byte[] bytes) {
        List<byte[]> payloads = new ArrayList<>();
        ByteBuf in = Unpooled.wrappedBuffer(bytes);
        while (in.isReadable()) {
            int type = in.readUnsignedByte();
            in.skipBytes(2);
            int size = in.readInt();
            byte[] payload = new byte[size];
            in.readBytes(payload).skipBytes(1);
            if (type == FrameDescriptor.FRAME_HEADER) {
                payloads.add(payload);
            }
        }
        return payloads;
    }

    @Nested
    class HeaderOctets {
        @Test
        void shouldDeliverThePublishersHeaderOctetsByteForByte() {
            open();
            declare(1, "q");
            byte[] header = unusualHeader(5);
            assertThat(ContentHeaderCodec.encoded(
                            ContentHeader.basic(5, ContentHeaderCodec.properties(ByteBuffer.wrap(header)))))
                    .as("a re-encoding would differ")
                    .isNotEqualTo(ByteBuffer.wrap(header));

            publishRaw(
                    new BasicMethod.Publish("", "q", false, false), header, "hello".getBytes(StandardCharsets.UTF_8));
            client.send(1, new BasicMethod.Consume("q", "c1", false, true, false, false, FieldTable.EMPTY));
            client.runTasks();

            assertThat(headerPayloads(client.readBytes())).singleElement().isEqualTo(header);
        }

        @Test
        void shouldReturnAnUnroutablePublishWithItsHeaderOctets() {
            open();
            byte[] header = unusualHeader(2);

            publishRaw(mandatory("", "nowhere"), header, "hi".getBytes(StandardCharsets.UTF_8));

            assertThat(headerPayloads(client.readBytes())).singleElement().isEqualTo(header);
        }

        @Test
        void shouldHandTheBrokerThePropertiesDecodedFromTheOctets() {
            open();
            declare(1, "q");
            byte[] header = unusualHeader(5);

            publishRaw(
                    new BasicMethod.Publish("", "q", false, false), header, "hello".getBytes(StandardCharsets.UTF_8));
            client.send(1, new BasicMethod.Get("q", true));

            assertThat(client.read())
                    .filteredOn(o -> o.method() instanceof BasicMethod.GetOk)
                    .singleElement()
                    .satisfies(o -> assertThat(o.properties())
                            .isEqualTo(ContentHeaderCodec.properties(ByteBuffer.wrap(header))));
        }
    }

    @Nested
    class Consuming {
        @Test
        void shouldSendConsumeOkBeforeTheFirstDeliveryEvenWhenTheDeliveryComesFirst() {
            open();
            broker.addQueue("q");
            broker.enqueue("q", "m1");
            broker.holdConsumes = true;

            client.send(1, consume("q", "c1"));
            assertThat(client.read()).isEmpty();

            broker.heldConsumes.getFirst().complete(broker.handle("q"));
            client.runTasks();

            List<Out> outs = client.read();
            assertThat(outs)
                    .extracting(Out::method)
                    .containsExactly(new BasicMethod.ConsumeOk("c1"), deliver("c1", 1, "q"));
            assertThat(bodies(outs)).containsExactly("m1");
        }

        @Test
        void shouldGenerateAConsumerTagWhenTheClientLeavesItEmpty() {
            open();
            broker.addQueue("q");

            client.send(1, consume("q", ""));

            assertThat(client.methods())
                    .singleElement()
                    .isInstanceOfSatisfying(
                            BasicMethod.ConsumeOk.class,
                            ok -> assertThat(ok.consumerTag()).matches("amq\\.ctag-[A-Za-z0-9_-]{22}"));
        }

        @Test
        void shouldCloseTheConnectionWith530OnADuplicateConsumerTag() {
            open();
            broker.addQueue("q");
            client.send(1, consume("q", "c1"));
            client.read();

            client.send(1, consume("q", "c1"));

            assertThat(client.read())
                    .containsExactly(out(
                            0,
                            new ConnectionMethod.Close(
                                    530, "NOT_ALLOWED - attempt to reuse consumer tag 'c1'", 60, 20)));
        }

        @Test
        void shouldPassThePerConsumerPrefetchToTheBroker() {
            open();
            broker.addQueue("q");
            for (int i = 0; i < 5; i++) {
                broker.enqueue("q", "m" + i);
            }
            client.send(1, new BasicMethod.Qos(0, 3, false));
            assertThat(client.methods()).containsExactly(new BasicMethod.QosOk());

            client.send(1, consume("q", "c"));

            assertThat(broker.prefetches).containsEntry("c", 3);
            assertThat(bodies(client.read())).containsExactly("m0", "m1", "m2");
        }

        @Test
        void shouldHoldDeliveriesBeyondTheGlobalPrefetchUntilAcksMakeRoom() {
            open();
            broker.addQueue("q");
            for (int i = 0; i < 5; i++) {
                broker.enqueue("q", "m" + i);
            }
            client.send(1, new BasicMethod.Qos(0, 2, true));
            client.read();

            client.send(1, consume("q", "c"));
            assertThat(client.methods())
                    .containsExactly(new BasicMethod.ConsumeOk("c"), deliver("c", 1, "q"), deliver("c", 2, "q"));
            assertThat(broker.prefetches).containsEntry("c", 0);

            client.send(1, new BasicMethod.Ack(1, false));
            assertThat(client.methods()).containsExactly(deliver("c", 3, "q"));

            client.send(1, new BasicMethod.Ack(3, true));
            assertThat(client.methods()).containsExactly(deliver("c", 4, "q"), deliver("c", 5, "q"));
        }

        @Test
        void shouldReleaseHeldDeliveriesWhenTheGlobalPrefetchIsLifted() {
            open();
            broker.addQueue("q");
            for (int i = 0; i < 3; i++) {
                broker.enqueue("q", "m" + i);
            }
            client.send(1, new BasicMethod.Qos(0, 1, true));
            client.send(1, consume("q", "c"));
            assertThat(client.methods())
                    .containsExactly(new BasicMethod.QosOk(), new BasicMethod.ConsumeOk("c"), deliver("c", 1, "q"));

            client.send(1, new BasicMethod.Qos(0, 0, true));

            assertThat(client.methods())
                    .containsExactly(deliver("c", 2, "q"), deliver("c", 3, "q"), new BasicMethod.QosOk());
        }

        @Test
        void shouldStopDeliveringToAConsumerOnceCancelOkIsSent() {
            open();
            broker.addQueue("q");
            client.send(1, consume("q", "c"));
            client.read();

            client.send(1, new BasicMethod.Cancel("c", false));
            assertThat(client.methods()).containsExactly(new BasicMethod.CancelOk("c"));
            assertThat(broker.cancelled)
                    .containsExactly(new FakeBroker.Cancelled("q", broker.consumerChannels.get("c"), "c"));

            broker.sinks
                    .get("c")
                    .deliver(
                            "c",
                            new Delivery(
                                    broker.handle("q"),
                                    7,
                                    false,
                                    "",
                                    "q",
                                    BasicProperties.EMPTY,
                                    Unpooled.wrappedBuffer(new byte[1]),
                                    0));
            client.runTasks();

            assertThat(client.read()).isEmpty();
            assertThat(broker.log).containsExactly("cancel c", "settle q REQUEUE [7]");
        }

        @Test
        void shouldAnswerCancelOfAnUnknownTagAsTheSpecAsks() {
            open();

            client.send(1, new BasicMethod.Cancel("nobody", false));

            assertThat(client.methods()).containsExactly(new BasicMethod.CancelOk("nobody"));
        }

        @Test
        void shouldTellTheClientWhenTheBrokerCancelsItsConsumer() {
            open();
            broker.addQueue("q");
            client.send(1, consume("q", "c"));
            client.read();

            broker.deleteQueueExternally("q");
            client.runTasks();

            assertThat(client.methods()).containsExactly(new BasicMethod.Cancel("c", true));
        }

        @Test
        void shouldAnswerGetWithGetOkCarryingTheMessageCountThenGetEmpty() {
            open();
            broker.addQueue("q");
            broker.enqueue("q", "first");
            broker.enqueue("q", "second");

            client.send(1, new BasicMethod.Get("q", false));
            client.send(1, new BasicMethod.Get("q", false));
            client.send(1, new BasicMethod.Get("q", false));

            List<Out> outs = client.read();
            assertThat(outs)
                    .extracting(Out::method)
                    .containsExactly(
                            new BasicMethod.GetOk(1, false, "", "q", 1),
                            new BasicMethod.GetOk(2, false, "", "q", 0),
                            new BasicMethod.GetEmpty());
            assertThat(bodies(outs)).containsExactly("first", "second");
            assertThat(broker.unsettledCount()).isEqualTo(2);
        }

        @Test
        void shouldSplitLargeDeliveriesIntoFramesNoLargerThanFrameMax() {
            open();
            declare(1, "q");
            String large = "y".repeat(300_000);
            client.publish(1, "", "q", large);

            client.send(1, consume("q", "c"));

            // The test client checks every frame against frame_max as it parses.
            assertThat(bodies(client.read())).containsExactly(large);
        }
    }

    @Nested
    class Settling {
        private void consumeTwoQueues() {
            open();
            broker.addQueue("a");
            broker.addQueue("b");
            broker.enqueue("a", "a0");
            broker.enqueue("a", "a1");
            broker.enqueue("b", "b0");
            broker.enqueue("b", "b1");
            client.send(1, consume("a", "ca"));
            client.send(1, consume("b", "cb"));
            assertThat(client.methods())
                    .containsExactly(
                            new BasicMethod.ConsumeOk("ca"),
                            deliver("ca", 1, "a"),
                            deliver("ca", 2, "a"),
                            new BasicMethod.ConsumeOk("cb"),
                            deliver("cb", 3, "b"),
                            deliver("cb", 4, "b"));
        }

        @Test
        void shouldSettleAnAckMultipleOncePerQueueWithOffsetsAscending() {
            consumeTwoQueues();

            client.send(1, new BasicMethod.Ack(3, true));
            client.send(1, new BasicMethod.Ack(4, false));

            assertThat(broker.log).containsExactly("settle a ACK [0, 1]", "settle b ACK [0]", "settle b ACK [1]");
            assertThat(broker.unsettledCount()).isZero();
        }

        @Test
        void shouldSettleEverythingOnAckOfTagZeroWithMultiple() {
            consumeTwoQueues();

            client.send(1, new BasicMethod.Ack(0, true));

            assertThat(broker.log).containsExactly("settle a ACK [0, 1]", "settle b ACK [0, 1]");
        }

        @Test
        void shouldDiscardOrRequeueOnNackAndReject() {
            consumeTwoQueues();

            client.send(1, new BasicMethod.Reject(1, false));
            client.send(1, new BasicMethod.Nack(4, true, false));

            assertThat(broker.log)
                    .containsExactly("settle a DISCARD [0]", "settle a DISCARD [1]", "settle b DISCARD [0, 1]");
        }

        @Test
        void shouldCloseTheChannelWith406OnAnUnknownDeliveryTag() {
            consumeTwoQueues();
            client.send(1, new BasicMethod.Ack(2, false));

            client.send(1, new BasicMethod.Ack(2, false));

            assertThat(client.read())
                    .containsExactly(out(
                            1, new ChannelMethod.Close(406, "PRECONDITION_FAILED - unknown delivery tag 2", 60, 80)));
        }

        @Test
        void shouldCancelConsumersThenRequeueUnackedInOffsetOrderWhenTheChannelCloses() {
            consumeTwoQueues();
            client.send(1, new BasicMethod.Ack(1, false));

            client.send(1, new ChannelMethod.Close(200, "bye", 0, 0));

            assertThat(client.methods()).containsExactly(new ChannelMethod.CloseOk());
            assertThat(broker.log)
                    .containsExactly(
                            "settle a ACK [0]",
                            "cancel ca",
                            "cancel cb",
                            "settle a REQUEUE [1]",
                            "settle b REQUEUE [0, 1]");
            assertThat(broker.consumerCount()).isZero();
            assertThat(broker.unsettledCount()).isZero();
        }

        @Test
        void shouldRequeueUnackedWhenTheSocketDrops() {
            consumeTwoQueues();

            client.channel.close();

            assertThat(broker.log)
                    .containsExactly("cancel ca", "cancel cb", "settle a REQUEUE [0, 1]", "settle b REQUEUE [0, 1]");
            assertThat(broker.closedConnections).containsExactly(TestClient.CONNECTION_ID);
        }

        @Test
        void shouldRequeueUnackedWhenASoftErrorClosesTheChannel() {
            consumeTwoQueues();

            client.send(1, new QueueMethod.Declare("missing", true, false, false, false, false, FieldTable.EMPTY));

            assertThat(client.methods()).singleElement().isInstanceOf(ChannelMethod.Close.class);
            assertThat(broker.log)
                    .containsExactly("cancel ca", "cancel cb", "settle a REQUEUE [0, 1]", "settle b REQUEUE [0, 1]");
        }

        @Test
        void shouldRequeueAllUnackedOnRecoverAndRedeliverThem() {
            open();
            broker.addQueue("q");
            broker.enqueue("q", "m0");
            broker.enqueue("q", "m1");
            client.send(1, consume("q", "c"));
            client.read();

            client.send(1, new BasicMethod.Recover(true));

            assertThat(client.methods())
                    .containsExactly(
                            new BasicMethod.RecoverOk(),
                            new BasicMethod.Deliver("c", 3, true, "", "q"),
                            new BasicMethod.Deliver("c", 4, true, "", "q"));
            assertThat(broker.log).containsExactly("settle q REQUEUE [0, 1]");
        }

        @Test
        void shouldCloseTheConnectionWith540OnRecoverWithoutRequeue() {
            open();

            client.send(1, new BasicMethod.Recover(false));

            assertThat(client.methods())
                    .containsExactly(new ConnectionMethod.Close(540, "NOT_IMPLEMENTED - requeue=false", 60, 110));
        }

        @Test
        void shouldCloseTheConnectionWith540OnAPrefetchSize() {
            open();

            client.send(1, new BasicMethod.Qos(1000, 0, false));

            assertThat(client.methods())
                    .containsExactly(
                            new ConnectionMethod.Close(540, "NOT_IMPLEMENTED - prefetch_size!=0 (1000)", 60, 10));
        }
    }

    @Nested
    class Transactions {
        @Test
        void shouldPublishOnlyWhenTheTransactionCommits() {
            open();
            declare(1, "q");
            client.send(1, new TxMethod.Select());
            assertThat(client.methods()).containsExactly(new TxMethod.SelectOk());

            client.publish(1, "", "q", "in tx");
            assertThat(broker.publishes).isZero();

            client.send(1, new TxMethod.Commit());
            assertThat(client.methods()).containsExactly(new TxMethod.CommitOk());
            assertThat(broker.readyCount("q")).isEqualTo(1);
        }

        @Test
        void shouldAnswerCommitOkOnlyOnceThePublishesAreDurable() {
            openWithDurablesHeld(new TxMethod.Select());
            client.publish(1, "", "q", "in tx");

            client.send(1, new TxMethod.Commit());
            assertThat(client.read()).isEmpty();

            broker.heldDurables.getFirst().complete(null);
            client.runTasks();
            assertThat(client.methods()).containsExactly(new TxMethod.CommitOk());
        }

        @Test
        void shouldCloseTheChannelWith406WhenACommittedPublishIsNotDurable() {
            openWithDurablesHeld(new TxMethod.Select());
            client.publish(1, "", "q", "in tx");
            client.send(1, new TxMethod.Commit());

            broker.heldDurables.getFirst().completeExceptionally(new IllegalStateException("lost"));
            client.runTasks();

            assertThat(client.methods())
                    .containsExactly(
                            new ChannelMethod.Close(406, "PRECONDITION_FAILED - partial tx completion", 90, 20));
        }

        @Test
        void shouldDropPublishesAndRestoreAcksOnRollback() {
            open();
            broker.addQueue("q");
            broker.enqueue("q", "m0");
            client.send(1, consume("q", "c"));
            client.read();
            client.send(1, new TxMethod.Select());
            client.read();

            client.publish(1, "", "q", "rolled back");
            client.send(1, new BasicMethod.Ack(1, false));
            client.send(1, new TxMethod.Rollback());

            assertThat(client.methods()).containsExactly(new TxMethod.RollbackOk());
            assertThat(broker.publishes).isZero();
            assertThat(broker.log).isEmpty();

            client.send(1, new BasicMethod.Ack(1, false));
            client.send(1, new TxMethod.Commit());
            assertThat(client.methods()).containsExactly(new TxMethod.CommitOk());
            assertThat(broker.log).containsExactly("settle q ACK [0]");
        }

        @Test
        void shouldRefuseMixingConfirmsAndTransactionsAsRabbitMq() {
            open();
            client.openChannel(2);
            client.send(1, new ConfirmMethod.Select(false));
            client.send(2, new TxMethod.Select());
            client.read();

            client.send(1, new TxMethod.Select());
            client.send(2, new ConfirmMethod.Select(false));

            assertThat(client.read())
                    .containsExactly(
                            out(
                                    1,
                                    new ChannelMethod.Close(
                                            406,
                                            "PRECONDITION_FAILED - cannot switch from confirm to tx mode",
                                            90,
                                            10)),
                            out(
                                    2,
                                    new ChannelMethod.Close(
                                            406,
                                            "PRECONDITION_FAILED - cannot switch from tx to confirm mode",
                                            85,
                                            10)));
        }

        @Test
        void shouldCloseTheChannelWith406OnCommitOutsideATransaction() {
            open();

            client.send(1, new TxMethod.Commit());

            assertThat(client.methods())
                    .containsExactly(
                            new ChannelMethod.Close(406, "PRECONDITION_FAILED - channel is not transactional", 90, 20));
        }
    }

    @Test
    void shouldHandBackADeliveryThatArrivesAfterTheConnectionClosed() {
        open();
        broker.addQueue("q");
        client.send(1, consume("q", "c"));
        client.read();
        DeliverySink sink = broker.sinks.get("c");
        client.send(0, new ConnectionMethod.Close(200, "bye", 0, 0));
        client.read();
        broker.log.clear();
        ByteBuf body = Unpooled.wrappedBuffer(new byte[] {1, 2, 3});

        sink.deliver("c", new Delivery(broker.handle("q"), 5, false, "", "q", BasicProperties.EMPTY, body, 0));
        client.runTasks();

        assertThat(broker.log).containsExactly("settle q REQUEUE [5]");
        assertThat(body.refCnt()).isZero();
    }

    @Test
    void shouldCancelAConsumeThatCompletesAfterTheChannelClosed() {
        open();
        broker.addQueue("q");
        broker.holdConsumes = true;
        client.send(1, consume("q", "late"));
        client.send(1, new ChannelMethod.Close(200, "bye", 0, 0));

        CompletableFuture<QueueHandle> held = broker.heldConsumes.getFirst();
        client.channel.close();
        held.complete(broker.handle("q"));
        client.runTasks();

        assertThat(broker.log).containsExactly("cancel late");
        assertThat(broker.consumerCount()).isZero();
    }
}
