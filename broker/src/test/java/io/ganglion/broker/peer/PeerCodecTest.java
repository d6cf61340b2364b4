package io.ganglion.broker.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.broker.peer.PeerMessage.Append;
import io.ganglion.broker.peer.PeerMessage.FetchReply;
import io.ganglion.broker.peer.PeerMessage.Heartbeat;
import io.ganglion.broker.peer.PeerMessage.Hello;
import io.ganglion.broker.peer.PeerMessage.InstallReply;
import io.ganglion.broker.peer.PeerMessage.RecoveryCommand;
import io.ganglion.broker.peer.PeerMessage.Replication;
import io.ganglion.broker.peer.PeerProtocolException.Reason;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.queues.StreamStart;
import io.ganglion.replication.EpochHistory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PeerCodecTest {
    private static final String HELLO_FRAME =
            "0000001f 01 0008 67616e676c696f6e 000a 67616e676c696f6e2d31 0102030405060708";

    private EmbeddedChannel channel = new EmbeddedChannel(new PeerCodec());

    @AfterEach
    void finish() {
        channel.finishAndReleaseAll();
    }

    static Stream<PeerMessage> samples() {
        return PeerMessages.samples().stream();
    }

    static LongStream seeds() {
        return LongStream.range(0, 64);
    }

    private static ByteBuf hex(String hex) {
        return Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex.replace(" ", "")));
    }

    private ByteBuf encodeOnChannel(PeerMessage message) {
        assertThat(channel.writeOutbound(message)).isTrue();
        ByteBuf frame = channel.readOutbound();
        assertThat((Object) channel.readOutbound()).isNull();
        return frame;
    }

    /** Encodes {@code message} on the channel into one frame of its encoded size and decodes that back to it. */
    private void assertRoundTrips(PeerMessage message, String context) {
        ByteBuf frame = encodeOnChannel(message);
        assertThat(frame.readableBytes())
                .as("%s: size of %s", context, message)
                .isEqualTo(PeerFrameDescriptor.frameSize(PeerCodec.encodedLength(message)));

        channel.writeInbound(frame);

        assertThat(readAll()).as(context).containsExactly(message);
    }

    private List<PeerMessage> readAll() {
        List<PeerMessage> messages = new ArrayList<>();
        for (PeerMessage message = channel.readInbound(); message != null; message = channel.readInbound()) {
            messages.add(message);
        }
        return messages;
    }

    private static String hexOf(ByteBuf buffer) {
        try {
            return ByteBufUtil.hexDump(buffer);
        } finally {
            buffer.release();
        }
    }

    // --------------------------------------------------------------------------------------------- the type codes

    @Test
    void shouldHaveASampleAndAUniqueTypeCodeForEveryMessageType() {
        Set<Class<?>> permitted = Set.of(PeerMessage.class.getPermittedSubclasses());
        Set<Class<?>> sampled =
                PeerMessages.samples().stream().map(Object::getClass).collect(Collectors.toSet());
        assertThat(sampled).isEqualTo(permitted);

        Set<Integer> codes = new HashSet<>();
        for (PeerMessage message : PeerMessages.samples()) {
            int type = PeerFrameDescriptor.typeOf(message);
            assertThat(codes.add(type)).as("type code 0x%x used twice", type).isTrue();
            assertThat(PeerFrameDescriptor.name(type)).doesNotStartWith("unknown");
        }
        assertThat(PeerFrameDescriptor.name(0xee)).isEqualTo("unknown(0xee)");
    }

    // --------------------------------------------------------------------------------------------- byte-exact

    @Test
    void shouldEncodeHelloByteExactly() {
        Hello hello = new Hello("ganglion", PeerMessages.N1, new Incarnation(0x0102030405060708L));

        assertThat(hexOf(encodeOnChannel(hello))).isEqualTo(HELLO_FRAME.replace(" ", ""));
    }

    @Test
    void shouldEncodeHeartbeatByteExactly() {
        Heartbeat heartbeat = new Heartbeat(PeerMessages.N1, new Incarnation(-1), true, 1_700_000_000_000L);

        assertThat(hexOf(encodeOnChannel(heartbeat)))
                .isEqualTo(
                        "0000001e 02 000a 67616e676c696f6e2d31 ffffffffffffffff 01 0000018bcfe56800".replace(" ", ""));
    }

    @Test
    void shouldEncodeAppendByteExactly() {
        Append append = new Append(PeerMessages.Q, 3, 100, List.of(new byte[] {9}, new byte[0], new byte[] {1, 2}), 99);

        assertThat(hexOf(encodeOnChannel(append)))
                .isEqualTo(("00000037 10 0001 2f 0006 6f7264657273 0000000000000003 0000000000000064"
                                + " 00000003 00000001 09 00000000 00000002 0102 0000000000000063")
                        .replace(" ", ""));
    }

    @Test
    void shouldEncodeFetchReplyByteExactly() {
        FetchReply reply =
                new FetchReply(PeerMessages.Q, 50, List.of(new byte[] {4, 5}, new byte[] {6}), List.of(2L, 3L));

        assertThat(hexOf(encodeOnChannel(reply)))
                .isEqualTo(("00000037 17 0001 2f 0006 6f7264657273 0000000000000032 00000002 00000002 0405"
                                + " 00000001 06 00000002 0000000000000002 0000000000000003")
                        .replace(" ", ""));
    }

    @Test
    void shouldEncodeReplicationOfRecordsByteExactly() {
        assertThat(hexOf(encodeOnChannel(PeerMessages.REPLICATE)))
                .isEqualTo(("000000d0 18 0001 2f 0006 6f7264657273 01 0000000000000003 ffffffffffffffff 00000005"
                                + " 01 0000000000000003 0000000000000064"
                                + " 02 0000000000000003 0000000000000065 0000000000000007 000000000000002a"
                                + " 0000018bcfe56801 00000002 0102"
                                + " 03 0000000000000003 0000000000000066 00000001 0000000000000065"
                                + " 03 0000000000000003 0000000000000067 00000002 0000000000000063 0000000000000064"
                                + " 04 0000000000000003 0000000000000068 00000001 0000000000000065"
                                + " 0000018bcfe5687b 000000000000005a")
                        .replace(" ", ""));
    }

    @Test
    void shouldEncodeReplicationOfASnapshotByteExactly() {
        Replication snapshot = new Replication(
                PeerMessages.Q,
                new io.ganglion.replication.PeerMessage.Snapshot(Epoch.of(3), 50, EpochHistory.of(1, 0, 3, 40)));

        assertThat(hexOf(encodeOnChannel(snapshot)))
                .isEqualTo(("00000041 18 0001 2f 0006 6f7264657273 05 0000000000000003 0000000000000032 00000002"
                                + " 0000000000000001 0000000000000000 0000000000000003 0000000000000028")
                        .replace(" ", ""));
    }

    @Test
    void shouldEncodeRecoveryCommandsByteExactly() {
        RecoveryCommand seal =
                new RecoveryCommand(new RecoveryRequest.Seal(PeerMessages.Q, Epoch.of(3), PeerMessages.N2));
        RecoveryCommand install = new RecoveryCommand(new RecoveryRequest.Install(
                PeerMessages.Q,
                Epoch.of(4),
                PeerMessages.N2,
                LogPosition.of(3, 101),
                List.of(PeerMessages.N1, PeerMessages.N2)));

        assertThat(hexOf(encodeOnChannel(seal)))
                .isEqualTo("00000021 19 01 0001 2f 0006 6f7264657273 0000000000000003 000a 67616e676c696f6e2d32"
                        .replace(" ", ""));
        assertThat(hexOf(encodeOnChannel(install)))
                .isEqualTo(("0000004d 19 02 0001 2f 0006 6f7264657273 0000000000000004 000a 67616e676c696f6e2d32"
                                + " 0000000000000003 0000000000000065 00000002 000a 67616e676c696f6e2d31"
                                + " 000a 67616e676c696f6e2d32")
                        .replace(" ", ""));
    }

    static Stream<PeerMessage> replicationAndRecoverySamples() {
        return Stream.concat(PeerMessages.replicationSamples().stream(), PeerMessages.recoverySamples().stream());
    }

    @ParameterizedTest
    @MethodSource("replicationAndRecoverySamples")
    void shouldRoundTripEveryKindOfReplicationAndRecoveryMessage(PeerMessage message) {
        assertRoundTrips(message, "sample");
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldRoundTripRandomReplicationMessagesOfEveryKind(long seed) {
        PeerMessages gen = new PeerMessages(seed);
        for (int i = 0; i < 20; i++) {
            PeerMessage message = gen.next(21 + i % 2);
            assertRoundTrips(message, "seed " + seed);
        }
    }

    @Test
    void shouldDecodeHelloFromItsBytes() {
        channel.writeInbound(hex(HELLO_FRAME));

        assertThat(readAll())
                .containsExactly(new Hello("ganglion", PeerMessages.N1, new Incarnation(0x0102030405060708L)));
    }

    // --------------------------------------------------------------------------------------------- round trips

    @ParameterizedTest
    @MethodSource("samples")
    void shouldRoundTripEverySample(PeerMessage message) {
        assertRoundTrips(message, "sample");
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldRoundTripRandomMessagesOfEveryType(long seed) {
        PeerMessages gen = new PeerMessages(seed);
        for (int kind = 0; kind < PeerMessages.samples().size(); kind++) {
            PeerMessage message = gen.next(kind);
            assertRoundTrips(message, "seed " + seed);
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldDecodeRandomMessagesCoalescedAndSplitAtRandomPoints(long seed) {
        PeerMessages gen = new PeerMessages(seed);
        List<PeerMessage> sent = new ArrayList<>();
        ByteBuf stream = Unpooled.buffer();
        for (int i = 0; i < 40; i++) {
            PeerMessage message = gen.next();
            sent.add(message);
            ByteBuf frame = encodeOnChannel(message);
            stream.writeBytes(frame);
            frame.release();
        }

        while (stream.isReadable()) {
            int chunk = Math.min(stream.readableBytes(), 1 + gen.nextInt(gen.nextInt(4) == 0 ? 20_000 : 64));
            channel.writeInbound(stream.readRetainedSlice(chunk));
        }
        stream.release();

        assertThat(readAll()).as("seed %d", seed).isEqualTo(sent);
    }

    @Test
    void shouldDecodeAFrameDeliveredOneOctetAtATime() {
        PeerMessage message = PeerMessages.samples().get(4);
        byte[] frame = PeerMessages.frameBytes(message);

        for (int i = 0; i < frame.length - 1; i++) {
            channel.writeInbound(Unpooled.wrappedBuffer(frame, i, 1));
            assertThat((Object) channel.readInbound()).isNull();
        }
        channel.writeInbound(Unpooled.wrappedBuffer(frame, frame.length - 1, 1));

        assertThat(readAll()).containsExactly(message);
    }

    @Test
    void shouldDecodeEverySampleFromOneCoalescedBuffer() {
        ByteBuf all = Unpooled.buffer();
        for (PeerMessage message : PeerMessages.samples()) {
            PeerCodec.encode(message, all);
        }

        channel.writeInbound(all);

        assertThat(readAll()).isEqualTo(PeerMessages.samples());
    }

    @Test
    void shouldRoundTripAFrameOfExactlyTheMaxLength() {
        channel.finishAndReleaseAll();
        channel = new EmbeddedChannel(new PeerCodec(2048));
        Append empty = new Append(PeerMessages.Q, 1, 0, List.of(new byte[0]), 0);
        int padding = 2048 - PeerCodec.encodedLength(empty);
        Append max = new Append(PeerMessages.Q, 1, 0, List.of(new byte[padding]), 0);
        assertThat(PeerCodec.encodedLength(max)).isEqualTo(2048);

        channel.writeInbound(encodeOnChannel(max));

        assertThat(readAll()).containsExactly(max);
    }

    // --------------------------------------------------------------------------------------------- bad frames

    private void assertRejected(ByteBuf input, Reason reason) {
        assertThatThrownBy(() -> channel.writeInbound(input))
                .isInstanceOfSatisfying(
                        PeerProtocolException.class, e -> assertThat(e.reason()).isEqualTo(reason));
        assertThat(channel.pipeline().get(PeerCodec.class).isDiscarding()).isTrue();
        assertThat(readAll()).isEmpty();
    }

    @Test
    void shouldRejectALengthOfZero() {
        assertRejected(hex("00000000 01"), Reason.BAD_LENGTH);
    }

    @Test
    void shouldRejectATooLongFrameOnItsHeaderBeforeTheBodyArrives() {
        channel.finishAndReleaseAll();
        channel = new EmbeddedChannel(new PeerCodec(1024));

        assertRejected(hex("00000401 10"), Reason.TOO_LONG);
    }

    @Test
    void shouldRejectALengthWithTheHighBitSetAsTooLong() {
        assertRejected(hex("ffffffff 10"), Reason.TOO_LONG);
    }

    @Test
    void shouldRejectAnUnknownType() {
        assertRejected(hex("00000001 ee"), Reason.UNKNOWN_TYPE);
    }

    @Test
    void shouldRejectAStringLongerThanItsBody() {
        assertRejected(hex("00000003 01 0005"), Reason.TRUNCATED);
    }

    @ParameterizedTest
    @MethodSource("samples")
    void shouldRejectEveryShorterBodyOfEverySampleAsTruncated(PeerMessage message) {
        byte[] frame = PeerMessages.frameBytes(message);
        int bodyLength = frame.length - PeerFrameDescriptor.HEADER_LENGTH;
        int type = PeerFrameDescriptor.typeOf(message);
        for (int cut = 1; cut <= bodyLength; cut++) {
            ByteBuf body = Unpooled.wrappedBuffer(frame, PeerFrameDescriptor.BODY_OFFSET, bodyLength - cut);
            int octets = cut;
            assertThatThrownBy(() -> PeerCodec.decodeBody(type, body))
                    .as("%s cut by %d octets", message, octets)
                    .isInstanceOfSatisfying(
                            PeerProtocolException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.TRUNCATED));
        }
        // and one of them through the channel
        ByteBuf cut = Unpooled.buffer();
        cut.writeInt(frame.length - PeerFrameDescriptor.LENGTH_FIELD_LENGTH - 1);
        cut.writeBytes(frame, PeerFrameDescriptor.TYPE_OFFSET, frame.length - PeerFrameDescriptor.TYPE_OFFSET - 1);
        assertRejected(cut, Reason.TRUNCATED);
    }

    @Test
    void shouldRejectOctetsLeftOverAfterABody() {
        byte[] frame = PeerMessages.frameBytes(PeerMessages.samples().get(6));
        ByteBuf longer = Unpooled.buffer();
        longer.writeInt(frame.length - PeerFrameDescriptor.LENGTH_FIELD_LENGTH + 1);
        longer.writeBytes(frame, PeerFrameDescriptor.TYPE_OFFSET, frame.length - PeerFrameDescriptor.TYPE_OFFSET);
        longer.writeByte(0);

        assertRejected(longer, Reason.MALFORMED);
    }

    @Test
    void shouldRejectABooleanOtherThanZeroOrOne() {
        byte[] frame = PeerMessages.frameBytes(new InstallReply(PeerMessages.Q, 1, PeerMessages.N1, true, ""));
        // the bool is the octet before the reason's empty length (0000) at the end
        frame[frame.length - 3] = 2;

        assertRejected(Unpooled.wrappedBuffer(frame), Reason.MALFORMED);
    }

    @Test
    void shouldRejectAnUnknownStreamStartAndAnOffsetOnAStartThatTakesNone() {
        PeerMessage subscribe = new PeerMessage.Subscribe(10, 77, 11, "t", false, false, 5, StreamStart.at(4096));
        byte[] frame = PeerMessages.frameBytes(subscribe);
        // the start is the kind octet and the int64 value at the end
        frame[frame.length - 9] = 9;
        assertRejected(Unpooled.wrappedBuffer(frame), Reason.MALFORMED);
        channel.finishAndReleaseAll();
        channel = new EmbeddedChannel(new PeerCodec());
        byte[] first = PeerMessages.frameBytes(subscribe);
        first[first.length - 9] = (byte) StreamStart.Kind.FIRST.ordinal(); // first with an offset of 4096
        assertRejected(Unpooled.wrappedBuffer(first), Reason.MALFORMED);
    }

    @Test
    void shouldRejectABlankNodeId() {
        // Hello: cluster "g", node "" (blank), incarnation 0
        assertRejected(hex("0000000e 01 0001 67 0000 0000000000000000"), Reason.MALFORMED);
    }

    @Test
    void shouldRejectANegativeCount() {
        // SealRequest-sized prefix would not do: an Append with records count -1
        assertRejected(
                hex("00000028 10 0001 2f 0006 6f7264657273 0000000000000003 0000000000000064 ffffffff"
                        + " 0000000000000000"),
                Reason.MALFORMED);
    }

    @Test
    void shouldRejectACountLargerThanTheBodyWithoutAllocatingIt() {
        // an Append announcing 0x7fffffff records in a small body
        assertRejected(
                hex("00000028 10 0001 2f 0006 6f7264657273 0000000000000003 0000000000000064 7fffffff"
                        + " 0000000000000000"),
                Reason.TRUNCATED);
    }

    @Test
    void shouldRejectAFetchReplyWithMoreEpochsThanRecords() {
        // records: none; epochs: one
        assertRejected(
                hex("00000024 17 0001 2f 0006 6f7264657273 0000000000000032 00000000 00000001 0000000000000002"),
                Reason.MALFORMED);
    }

    @Test
    void shouldRejectAnUnknownReplicationKind() {
        assertRejected(
                hex("00000021 18 0001 2f 0006 6f7264657273 09 0000000000000003 0000000000000032 00000000"),
                Reason.MALFORMED);
    }

    @Test
    void shouldRejectAnUnknownRecordKind() {
        assertRejected(
                hex("00000032 18 0001 2f 0006 6f7264657273 01 0000000000000003 ffffffffffffffff 00000001"
                        + " 07 0000000000000003 0000000000000064"),
                Reason.MALFORMED);
    }

    @Test
    void shouldRejectANegativeEpochInAReplicationMessage() {
        assertRejected(
                hex("00000021 18 0001 2f 0006 6f7264657273 05 ffffffffffffffff 0000000000000032 00000000"),
                Reason.MALFORMED);
    }

    @Test
    void shouldRejectAnEpochHistoryOutOfOrder() {
        // a snapshot whose history goes from epoch 3 back to epoch 1
        assertRejected(
                hex("00000041 18 0001 2f 0006 6f7264657273 05 0000000000000003 0000000000000032 00000002"
                        + " 0000000000000003 0000000000000000 0000000000000001 0000000000000028"),
                Reason.MALFORMED);
    }

    @Test
    void shouldRejectAnUnknownRecoveryKindAndABlankSource() {
        assertRejected(
                hex("00000021 19 05 0001 2f 0006 6f7264657273 0000000000000003 000a 67616e676c696f6e2d32"),
                Reason.MALFORMED);
        channel.finishAndReleaseAll();
        channel = new EmbeddedChannel(new PeerCodec());
        // an install whose one source is the blank node id
        assertRejected(
                hex("00000037 19 02 0001 2f 0006 6f7264657273 0000000000000004 000a 67616e676c696f6e2d32"
                        + " 0000000000000003 0000000000000065 00000001 0000"),
                Reason.MALFORMED);
    }

    @Test
    void shouldDeliverTheFramesBeforeABadOneAndDiscardEverythingAfter() {
        PeerMessage first = PeerMessages.samples().get(1);
        ByteBuf input = PeerMessages.frame(first);
        input.writeBytes(ByteBufUtil.decodeHexDump("00000001ee"));
        input.writeBytes(PeerMessages.frameBytes(PeerMessages.samples().get(2)));

        assertThatThrownBy(() -> channel.writeInbound(input)).isInstanceOf(PeerProtocolException.class);
        assertThat(readAll()).containsExactly(first);

        channel.writeInbound(PeerMessages.frame(PeerMessages.samples().get(3)));
        assertThat(readAll()).isEmpty();
    }

    // --------------------------------------------------------------------------------------------- encoder limits

    @Test
    void shouldFailTheWriteOfAMessageOverTheMaxFrameLength() {
        channel.finishAndReleaseAll();
        channel = new EmbeddedChannel(new PeerCodec(1024));
        Append tooLong = new Append(PeerMessages.Q, 1, 0, List.of(new byte[1024]), 0);

        assertThatThrownBy(() -> channel.writeOutbound(tooLong))
                .isInstanceOf(EncoderException.class)
                .hasRootCauseInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exceeds the max frame length 1024");
        assertThat((Object) channel.readOutbound()).isNull();
    }

    @Test
    void shouldRefuseToEncodeAStringOverItsLimit() {
        char[] text = new char[PeerFrameDescriptor.STRING_MAX_LENGTH + 1];
        Arrays.fill(text, 'x');
        InstallReply reply = new InstallReply(PeerMessages.Q, 1, PeerMessages.N1, false, new String(text));

        assertThatThrownBy(() -> PeerMessages.frame(reply))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65535");
    }

    @Test
    void shouldRefuseAMaxFrameLengthOutOfRange() {
        assertThatThrownBy(() -> new PeerCodec(1023)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PeerCodec(Integer.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class);
    }

    // --------------------------------------------------------------------------------------------- message values

    @Test
    void shouldCompareArraysByContentAndPrintTheirSizesOnly() {
        Append a = new Append(PeerMessages.Q, 1, 0, List.of(new byte[] {1, 2}), 0);
        Append b = new Append(PeerMessages.Q, 1, 0, List.of(new byte[] {1, 2}), 0);

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a).isNotEqualTo(new Append(PeerMessages.Q, 1, 0, List.of(new byte[] {1, 3}), 0));
        assertThat(a.toString()).contains("records=1 (2 octets)");
    }
}
