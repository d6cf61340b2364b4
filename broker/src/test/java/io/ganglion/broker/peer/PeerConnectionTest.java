package io.ganglion.broker.peer;

import static io.ganglion.broker.peer.PeerMessages.N1;
import static io.ganglion.broker.peer.PeerMessages.N2;
import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.broker.peer.PeerMessage.Heartbeat;
import io.ganglion.broker.peer.PeerMessage.Hello;
import io.ganglion.broker.peer.RecordingPeerHandler.Connected;
import io.ganglion.broker.peer.RecordingPeerHandler.Disconnected;
import io.ganglion.broker.peer.RecordingPeerHandler.Message;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** One link's handshake and fault handling, with {@link EmbeddedChannel}s: no sockets, byte-exact. */
class PeerConnectionTest {
    private static final Incarnation OURS = new Incarnation(1);
    private static final Incarnation THEIRS = new Incarnation(2);
    private static final NodeId N3 = NodeId.of("ganglion-3");

    /** Every kind of frame the codec refuses, as it would arrive on the wire. */
    enum BadFrame {
        BAD_LENGTH("00000000 01"),
        TOO_LONG("ffffffff 02"),
        UNKNOWN_TYPE("00000001 ee"),
        TRUNCATED("00000003 01 0005"),
        MALFORMED("00000015 12 0001 2f 0006 6f7264657273 0000000000000003 00");

        private final String hex;

        BadFrame(String hex) {
            this.hex = hex;
        }

        ByteBuf bytes() {
            return Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex.replace(" ", "")));
        }
    }

    private final PeerLinkConfig config = PeerLinkConfig.defaults("ganglion", N1, OURS);
    private final RecordingPeerHandler handler = new RecordingPeerHandler();
    private final PeerRegistry registry = new PeerRegistry(handler);
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void finish() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    private EmbeddedChannel link(PeerConnection connection) {
        EmbeddedChannel channel = new EmbeddedChannel(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                PeerConnection.install(ch.pipeline(), config, connection);
            }
        });
        channels.add(channel);
        return channel;
    }

    private EmbeddedChannel inbound() {
        return link(PeerConnection.inbound(config, registry, handler));
    }

    private EmbeddedChannel established(Incarnation incarnation) {
        EmbeddedChannel channel = inbound();
        channel.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, incarnation)));
        assertThat(handler.drain()).containsExactly(new Connected(N2, incarnation));
        return channel;
    }

    /** The messages the link wrote, decoded. */
    private static List<PeerMessage> written(EmbeddedChannel channel) {
        channel.runPendingTasks(); // the flush consolidation flushes in a task
        List<PeerMessage> messages = new ArrayList<>();
        for (ByteBuf frame = channel.readOutbound(); frame != null; frame = channel.readOutbound()) {
            int type = PeerFrameDescriptor.type(frame, 0);
            messages.add(PeerCodec.decodeBody(
                    type,
                    frame.slice(
                            PeerFrameDescriptor.BODY_OFFSET, frame.readableBytes() - PeerFrameDescriptor.BODY_OFFSET)));
            frame.release();
        }
        return messages;
    }

    private static Heartbeat heartbeat(long at) {
        return new Heartbeat(N2, THEIRS, false, at);
    }

    // --------------------------------------------------------------------------------------------- handshake

    @Test
    void shouldSendHelloAsSoonAsTheLinkIsActive() {
        EmbeddedChannel channel = inbound();

        assertThat(written(channel)).containsExactly(new Hello("ganglion", N1, OURS));
        assertThat(handler.drain()).isEmpty();
    }

    @Test
    void shouldConnectOnThePeersHelloAndDeliverWhatFollows() {
        EmbeddedChannel channel = established(THEIRS);

        channel.writeInbound(PeerMessages.frame(heartbeat(1)), PeerMessages.frame(heartbeat(2)));

        assertThat(handler.drain()).containsExactly(new Message(N2, heartbeat(1)), new Message(N2, heartbeat(2)));
        assertThat(registry.connectedPeers()).containsExactly(N2);
        assertThat(registry.route(N2)).isSameAs(channel);
    }

    @Test
    void shouldDisconnectWhenTheLinkCloses() {
        EmbeddedChannel channel = established(THEIRS);

        channel.close();

        assertThat(handler.drain()).containsExactly(new Disconnected(N2));
        assertThat(registry.connectedPeers()).isEmpty();
        assertThat(registry.route(N2)).isNull();
    }

    @Test
    void shouldRefuseAHelloOfAnotherCluster() {
        EmbeddedChannel channel = inbound();

        channel.writeInbound(PeerMessages.frame(new Hello("other", N2, THEIRS)));

        assertThat(channel.isOpen()).isFalse();
        assertThat(handler.drain()).isEmpty();
        assertThat(registry.connectedPeers()).isEmpty();
    }

    @Test
    void shouldRefuseAHelloFromThisNodeItself() {
        EmbeddedChannel channel = inbound();

        channel.writeInbound(PeerMessages.frame(new Hello("ganglion", N1, THEIRS)));

        assertThat(channel.isOpen()).isFalse();
        assertThat(handler.drain()).isEmpty();
    }

    @Test
    void shouldTellTheDialerWhenTheNodeItDialledAnswersAsAnother() {
        RecordingDialer dialer = new RecordingDialer();
        EmbeddedChannel channel = link(PeerConnection.outbound(config, registry, handler, N3, dialer));

        channel.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, THEIRS)));

        assertThat(channel.isOpen()).isFalse();
        assertThat(dialer.refused.get()).isEqualTo(1);
        assertThat(dialer.established.get()).isZero();
        assertThat(handler.drain()).isEmpty();
    }

    @Test
    void shouldTellTheDialerWhenTheHelloExchangeCompletes() {
        RecordingDialer dialer = new RecordingDialer();
        EmbeddedChannel channel = link(PeerConnection.outbound(config, registry, handler, N2, dialer));

        channel.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, THEIRS)));

        assertThat(channel.isOpen()).isTrue();
        assertThat(dialer.established.get()).isEqualTo(1);
        assertThat(handler.drain()).containsExactly(new Connected(N2, THEIRS));
    }

    @Test
    void shouldCloseALinkThatSendsNoHelloWithinTheTimeout() {
        EmbeddedChannel channel = inbound();

        // the channel's clock is real time plus what the test advances: leave room for a slow machine between the
        // channel's creation and this check
        channel.advanceTimeBy(config.helloTimeout().toMillis() - 200, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(channel.isOpen()).isTrue();

        channel.advanceTimeBy(200, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        assertThat(handler.drain()).isEmpty();
    }

    @Test
    void shouldNotTimeOutALinkThatSentItsHello() {
        EmbeddedChannel channel = established(THEIRS);

        channel.advanceTimeBy(config.helloTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();

        assertThat(channel.isOpen()).isTrue();
    }

    // --------------------------------------------------------------------------------------------- bad input

    @ParameterizedTest
    @EnumSource(BadFrame.class)
    void shouldCloseTheLinkOnABadFrameBeforeHello(BadFrame bad) {
        EmbeddedChannel channel = inbound();

        channel.writeInbound(bad.bytes());

        assertThat(channel.isOpen()).isFalse();
        channel.checkException(); // handled by the link, not propagated
        assertThat(handler.drain()).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(BadFrame.class)
    void shouldCloseTheLinkOnABadFrameAfterHelloAndDeliverWhatCameBefore(BadFrame bad) {
        EmbeddedChannel channel = established(THEIRS);
        ByteBuf input = PeerMessages.frame(heartbeat(1));
        input.writeBytes(bad.bytes());
        input.writeBytes(PeerMessages.frameBytes(heartbeat(2)));

        channel.writeInbound(input);

        assertThat(channel.isOpen()).isFalse();
        channel.checkException();
        assertThat(handler.drain()).containsExactly(new Message(N2, heartbeat(1)), new Disconnected(N2));
    }

    @Test
    void shouldRejectAMessageBeforeHello() {
        EmbeddedChannel channel = inbound();

        channel.writeInbound(PeerMessages.frame(heartbeat(1)));

        assertThat(channel.isOpen()).isFalse();
        assertThat(handler.drain()).isEmpty();
    }

    @Test
    void shouldRejectASecondHello() {
        EmbeddedChannel channel = established(THEIRS);

        channel.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, THEIRS)));

        assertThat(channel.isOpen()).isFalse();
        assertThat(handler.drain()).containsExactly(new Disconnected(N2));
    }

    @Test
    void shouldKeepTheLinkUpWhenTheHandlerThrows() {
        AtomicInteger calls = new AtomicInteger();
        PeerHandler throwing = new GuardedPeerHandler(new PeerHandler() {
            @Override
            public void onConnected(NodeId peer, Incarnation incarnation) {}

            @Override
            public void onMessage(NodeId from, PeerMessage message) {
                calls.incrementAndGet();
                throw new IllegalStateException("handler bug");
            }

            @Override
            public void onDisconnected(NodeId peer) {}
        });
        PeerRegistry guardedRegistry = new PeerRegistry(throwing);
        EmbeddedChannel channel = link(PeerConnection.inbound(config, guardedRegistry, throwing));
        channel.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, THEIRS)));

        channel.writeInbound(PeerMessages.frame(heartbeat(1)), PeerMessages.frame(heartbeat(2)));

        assertThat(calls.get()).isEqualTo(2);
        assertThat(channel.isOpen()).isTrue();
        channel.checkException();
    }

    // --------------------------------------------------------------------------------------------- several links

    @Test
    void shouldReportAPeerConnectedOnceOverItsTwoLinks() {
        EmbeddedChannel inbound = established(THEIRS);
        EmbeddedChannel outbound =
                link(PeerConnection.outbound(config, registry, handler, N2, PeerConnection.DialListener.NONE));
        outbound.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, THEIRS)));

        assertThat(handler.drain()).isEmpty();
        assertThat(registry.route(N2)).as("outbound preferred").isSameAs(outbound);

        outbound.close();
        assertThat(handler.drain()).isEmpty();
        assertThat(registry.route(N2)).isSameAs(inbound);

        inbound.close();
        assertThat(handler.drain()).containsExactly(new Disconnected(N2));
    }

    @Test
    void shouldTreatANewIncarnationAsARestartAndCloseTheOldLinks() {
        EmbeddedChannel old = established(THEIRS);
        Incarnation restarted = new Incarnation(3);
        EmbeddedChannel fresh = inbound();

        fresh.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, restarted)));

        assertThat(handler.drain()).containsExactly(new Disconnected(N2), new Connected(N2, restarted));
        assertThat(old.isOpen()).isFalse();
        assertThat(registry.route(N2)).isSameAs(fresh);

        fresh.writeInbound(PeerMessages.frame(heartbeat(7)));
        assertThat(handler.drain()).containsExactly(new Message(N2, heartbeat(7)));
    }

    @Test
    void shouldReplaceAnOlderInboundLinkOfTheSamePeerWithoutEvents() {
        EmbeddedChannel old = established(THEIRS);
        EmbeddedChannel fresh = inbound();

        fresh.writeInbound(PeerMessages.frame(new Hello("ganglion", N2, THEIRS)));

        assertThat(handler.drain()).isEmpty();
        assertThat(old.isOpen()).isFalse();
        assertThat(registry.route(N2)).isSameAs(fresh);
        assertThat(registry.isCurrent(N2, old)).isFalse();
    }

    private static final class RecordingDialer implements PeerConnection.DialListener {
        final AtomicInteger established = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public void onEstablished() {
            established.incrementAndGet();
        }

        @Override
        public void onRefused() {
            refused.incrementAndGet();
        }
    }
}
