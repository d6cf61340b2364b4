package io.ganglion.broker.peer;

import static io.ganglion.broker.peer.PeerMessages.N1;
import static io.ganglion.broker.peer.PeerMessages.N2;
import static io.ganglion.broker.peer.PeerMessages.Q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.broker.peer.PeerMessage.Append;
import io.ganglion.broker.peer.PeerMessage.Heartbeat;
import io.ganglion.broker.peer.PeerMessage.Hello;
import io.ganglion.broker.peer.PeerMessage.Progress;
import io.ganglion.broker.peer.RecordingPeerHandler.Connected;
import io.ganglion.broker.peer.RecordingPeerHandler.Disconnected;
import io.ganglion.broker.peer.RecordingPeerHandler.Message;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Real links over loopback sockets: handshake, traffic, reconnect, refusal and faults. */
class PeerLinkTest {
    private static final String LOOPBACK = "127.0.0.1";
    private static final NodeId N3 = NodeId.of("ganglion-3");

    private final List<AutoCloseable> resources = new ArrayList<>();

    /** Link A (node N1, incarnation 11) and what it handed its handler; set by {@link #startA}. */
    private RecordingPeerHandler a;

    private PeerLink linkA;

    /** Link B (node N2, incarnation 22) and what it handed its handler; set by {@link #startB}. */
    private RecordingPeerHandler b;

    private PeerLink linkB;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private static PeerLinkConfig config(String cluster, NodeId node, long incarnation, int port) {
        return PeerLinkConfig.defaults(cluster, node, new Incarnation(incarnation))
                .withListener(LOOPBACK, port)
                .withIoThreads(1);
    }

    private PeerLink start(PeerLinkConfig config, PeerHandler handler) throws IOException {
        PeerLink link = PeerLink.start(config, handler);
        resources.add(link);
        return link;
    }

    private void startA() throws IOException {
        a = new RecordingPeerHandler();
        linkA = start(config("ganglion", N1, 11, 0), a);
    }

    private void startB() throws IOException {
        b = new RecordingPeerHandler();
        linkB = start(config("ganglion", N2, 22, 0), b);
    }

    private void startAAndB() throws IOException {
        startA();
        startB();
    }

    /** Starts A and B and links A to B, each side past its {@code Connected}. */
    private void startConnectedAAndB() throws IOException {
        startAAndB();
        linkA.connect(N2, address(linkB));
        a.next();
        b.next();
    }

    /** A plain socket to {@code link}'s listener, for speaking the wire by hand; reads time out after 10 s. */
    private static Socket wireSocket(PeerLink link) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), link.port());
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static InetSocketAddress address(int port) {
        return new InetSocketAddress(LOOPBACK, port);
    }

    private static InetSocketAddress address(PeerLink link) {
        return address(link.port());
    }

    /** The probe a controller makes when a link closes: a port nothing listens on refuses, a live link's does not. */
    @Test
    void shouldTellAPortThatRefusesFromOneThatListens() throws Exception {
        startAAndB();
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            closedPort = socket.getLocalPort();
        }

        assertThat(linkA.refusesConnections(address(closedPort)).get(5, TimeUnit.SECONDS))
                .isTrue();
        assertThat(linkA.refusesConnections(address(linkB)).get(5, TimeUnit.SECONDS))
                .isFalse();
        // the probe closed before any Hello: B saw no peer come or go, and still takes real links
        linkA.connect(N2, address(linkB));
        assertThat(b.next()).isEqualTo(new Connected(N1, new Incarnation(11)));
    }

    /**
     * A link's own close closes every peer's connection, and each disconnect asks for a probe: on a closed link it
     * answers false at once instead of dialling on event loops that are shutting down (Netty logged an ERROR for each
     * on a clean stop).
     */
    @Test
    void shouldAnswerAProbeOnAClosedLinkWithoutDialling() throws Exception {
        PeerLink link = start(config("ganglion", N1, 11, 0), new RecordingPeerHandler());
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            closedPort = socket.getLocalPort();
        }
        link.close();

        CompletableFuture<Boolean> probe = link.refusesConnections(address(closedPort));
        assertThat(probe).as("answered at once").isDone();
        assertThat(probe.get()).as("a port nothing listens on, not dialled").isFalse();
        assertThat(link.refusesConnections(address(closedPort), 3, 5).get(5, TimeUnit.SECONDS))
                .isFalse();
    }

    /** A process closes its links before its listener: dials made as the link closes go on until one is refused. */
    @Test
    void shouldDialAgainUntilAPortThatStillListensRefuses() throws Exception {
        startAAndB();
        InetSocketAddress listening = address(linkB);

        assertThat(linkA.refusesConnections(listening, 3, 5).get(5, TimeUnit.SECONDS))
                .as("listening all along")
                .isFalse();
        CompletableFuture<Boolean> closing = linkA.refusesConnections(listening, 50, 10);
        linkB.close(); // while the dials go on
        assertThat(closing.get(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldExchangeHelloHeartbeatsAndA1MiBAppend() throws IOException {
        startAAndB();
        assertThat(linkB.port()).isPositive();

        linkA.connect(N2, address(linkB));

        assertThat(a.next()).isEqualTo(new Connected(N2, new Incarnation(22)));
        assertThat(b.next()).isEqualTo(new Connected(N1, new Incarnation(11)));
        assertThat(linkA.connectedPeers()).containsExactly(N2);
        assertThat(linkB.connectedPeers()).containsExactly(N1);

        // A sends on its outbound link, B answers on the link A opened
        Heartbeat fromA = new Heartbeat(N1, new Incarnation(11), false, 1);
        Heartbeat fromB = new Heartbeat(N2, new Incarnation(22), true, 2);
        assertThat(linkA.send(N2, fromA)).isTrue();
        assertThat(linkB.send(N1, fromB)).isTrue();
        assertThat(b.next()).isEqualTo(new Message(N1, fromA));
        assertThat(a.next()).isEqualTo(new Message(N2, fromB));

        byte[] record = new byte[1024 * 1024];
        new SplittableRandom(42).nextBytes(record);
        Append append = new Append(Q, 3, 1000, List.of(record, new byte[] {1}), 999);
        assertThat(linkA.send(N2, append)).isTrue();

        Message received = (Message) b.next();
        assertThat(received.from()).isEqualTo(N1);
        assertThat(received.message()).isEqualTo(append);
        assertThat(((Append) received.message()).records().get(0)).isNotSameAs(record);
    }

    @Test
    void shouldDeliverMessagesFromOneThreadInOrder() throws Exception {
        startConnectedAAndB();
        int count = 2000;
        List<PeerMessage> sent = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            sent.add(new Progress(Q, 1, N1, new Incarnation(11), i));
        }

        AtomicInteger handedOver = new AtomicInteger();
        Thread sender = new Thread(() -> sent.forEach(m -> {
            if (linkA.send(N2, m)) {
                handedOver.incrementAndGet();
            }
        }));
        sender.start();
        sender.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(handedOver.get()).isEqualTo(count);

        assertThat(b.messages(count)).isEqualTo(sent);
    }

    @Test
    void shouldReturnFalseWhenSendingToAPeerWithoutALink() throws IOException {
        PeerLink link = start(config("ganglion", N1, 11, 0), new RecordingPeerHandler());

        assertThat(link.send(N3, new Heartbeat(N1, new Incarnation(11), false, 0)))
                .isFalse();
        assertThat(link.isConnected(N3)).isFalse();
        assertThat(link.connectedPeers()).isEmpty();
    }

    @Test
    void shouldRefuseToSendHelloOrAFrameOverTheMaxLength() throws IOException {
        PeerLink link = start(config("ganglion", N1, 11, 0).withMaxFrameLength(4096), new RecordingPeerHandler());

        assertThatThrownBy(() -> link.send(N2, new Hello("ganglion", N1, new Incarnation(11))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> link.send(N2, new Append(Q, 1, 0, List.of(new byte[4096]), 0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exceeds the max frame length 4096");
        assertThatThrownBy(() -> link.connect(N1, address(1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldReconnectAfterTheRemoteClosesAndRestartsOnTheSamePort() throws IOException {
        startA();
        PeerLink first = start(config("ganglion", N2, 22, 0), new RecordingPeerHandler());
        int port = first.port();
        linkA.connect(N2, address(port));
        assertThat(a.next()).isEqualTo(new Connected(N2, new Incarnation(22)));

        first.close();
        assertThat(a.next()).isEqualTo(new Disconnected(N2));
        assertThat(linkA.send(N2, new Heartbeat(N1, new Incarnation(11), false, 0)))
                .isFalse();

        RecordingPeerHandler restarted = new RecordingPeerHandler();
        PeerLink second = start(config("ganglion", N2, 33, port), restarted);

        assertThat(a.next()).isEqualTo(new Connected(N2, new Incarnation(33)));
        assertThat(restarted.next()).isEqualTo(new Connected(N1, new Incarnation(11)));
        Heartbeat heartbeat = new Heartbeat(N1, new Incarnation(11), false, 5);
        assertThat(linkA.send(N2, heartbeat)).isTrue();
        assertThat(restarted.next()).isEqualTo(new Message(N1, heartbeat));
        assertThat(second.port()).isEqualTo(port);
    }

    @Test
    void shouldDialAPeerThatIsNotListeningYet() throws IOException {
        PeerLink placeholder = start(config("ganglion", N2, 22, 0), new RecordingPeerHandler());
        int port = placeholder.port();
        placeholder.close();
        startA();

        linkA.connect(N2, address(port));
        a.assertQuietFor(Duration.ofMillis(300)); // several failed dials meanwhile
        start(config("ganglion", N2, 22, port), new RecordingPeerHandler());

        assertThat(a.next()).isEqualTo(new Connected(N2, new Incarnation(22)));
    }

    @Test
    void shouldKeepAPeerConnectedWhileEitherOfItsTwoLinksIsUp() throws IOException {
        startAAndB();

        linkA.connect(N2, address(linkB));
        linkB.connect(N1, address(linkA));
        assertThat(a.next()).isEqualTo(new Connected(N2, new Incarnation(22)));
        assertThat(b.next()).isEqualTo(new Connected(N1, new Incarnation(11)));

        awaitLinks(linkA, N2, 2);
        awaitLinks(linkB, N1, 2);

        linkA.disconnect(N2);
        awaitLinks(linkA, N2, 1);
        a.assertQuietFor(Duration.ofMillis(300));
        b.assertQuietFor(Duration.ofMillis(1));

        Heartbeat heartbeat = new Heartbeat(N1, new Incarnation(11), false, 1);
        assertThat(linkA.send(N2, heartbeat)).isTrue();
        assertThat(b.next()).isEqualTo(new Message(N1, heartbeat));
        assertThat(linkA.connectedPeers()).containsExactly(N2);
    }

    private static void awaitLinks(PeerLink link, NodeId peer, int count) {
        Poll.until(
                RecordingPeerHandler.TIMEOUT,
                Duration.ofMillis(5),
                () -> link.linkCount(peer) == count,
                () -> count + " links to " + peer + " (" + link.linkCount(peer) + " now)");
    }

    @Test
    void shouldTellThePeerWhenTheLinkCloses() throws IOException {
        startAAndB();
        linkA.connect(N2, address(linkB));
        assertThat(b.next()).isEqualTo(new Connected(N1, new Incarnation(11)));

        linkA.close();

        assertThat(b.next()).isEqualTo(new Disconnected(N1));
        assertThat(linkA.send(N2, new Heartbeat(N1, new Incarnation(11), false, 0)))
                .isFalse();
        assertThatThrownBy(() -> linkA.connect(N2, address(linkB))).isInstanceOf(IllegalStateException.class);
        linkA.close(); // idempotent
    }

    // --------------------------------------------------------------------------------------------- refusal, faults

    @Test
    void shouldRefuseAPeerOfAnotherClusterAndNotRedialItFast() throws Exception {
        FakePeer fake = new FakePeer(new Hello("other", N2, new Incarnation(22)));
        resources.add(fake);
        startA();

        linkA.connect(N2, address(fake.port()));

        assertThat(fake.firstAccept.await(10, TimeUnit.SECONDS)).isTrue();
        a.assertQuietFor(Duration.ofMillis(1500)); // normal backoff would have dialled ~5 times by now
        assertThat(fake.accepted.get()).isEqualTo(1);
        assertThat(fake.closedByPeer.get()).isEqualTo(1);
        assertThat(linkA.connectedPeers()).isEmpty();
    }

    @Test
    void shouldRefuseAnInboundHelloOfAnotherCluster() throws Exception {
        startB();

        try (Socket socket = wireSocket(linkB)) {
            socket.getOutputStream().write(PeerMessages.frameBytes(new Hello("other", N1, new Incarnation(11))));

            byte[] hello = PeerMessages.frameBytes(new Hello("ganglion", N2, new Incarnation(22)));
            assertThat(socket.getInputStream().readNBytes(hello.length)).isEqualTo(hello);
            assertThat(socket.getInputStream().read()).as("closed by the link").isEqualTo(-1);
        }
        b.assertQuietFor(Duration.ofMillis(100));
        assertThat(linkB.connectedPeers()).isEmpty();
    }

    @Test
    void shouldCloseOnlyTheLinkThatSentABadFrame() throws Exception {
        startConnectedAAndB();

        try (Socket socket = wireSocket(linkB)) {
            OutputStream out = socket.getOutputStream();
            out.write(PeerMessages.frameBytes(new Hello("ganglion", N3, new Incarnation(33))));
            out.write(new byte[] {0, 0, 0, 1, (byte) 0xee}); // unknown type
            InputStream in = socket.getInputStream();
            in.readNBytes(PeerMessages.frameBytes(new Hello("ganglion", N2, new Incarnation(22))).length);
            assertThat(in.read()).as("closed by the link").isEqualTo(-1);
        }
        assertThat(b.next()).isEqualTo(new Connected(N3, new Incarnation(33)));
        assertThat(b.next()).isEqualTo(new Disconnected(N3));

        Heartbeat heartbeat = new Heartbeat(N1, new Incarnation(11), false, 9);
        assertThat(linkA.send(N2, heartbeat)).isTrue();
        assertThat(b.next()).isEqualTo(new Message(N1, heartbeat));
        assertThat(linkB.connectedPeers()).containsExactly(N1);
    }

    /**
     * A peer speaking the wire by hand on a plain server socket: it counts connections, answers each with {@code
     * hello} and waits for the other side to close.
     */
    private static final class FakePeer implements AutoCloseable {
        final AtomicInteger accepted = new AtomicInteger();
        final AtomicInteger closedByPeer = new AtomicInteger();
        final CountDownLatch firstAccept = new CountDownLatch(1);
        private final ServerSocket server;
        private final Thread thread;

        FakePeer(Hello hello) throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            byte[] helloBytes = PeerMessages.frameBytes(hello);
            thread = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket socket = server.accept()) {
                        accepted.incrementAndGet();
                        firstAccept.countDown();
                        socket.getOutputStream().write(helloBytes);
                        // read until the link closes us
                        if (socket.getInputStream().readAllBytes() != null) {
                            closedByPeer.incrementAndGet();
                        }
                    } catch (IOException e) {
                        // closed by close(), or reset: the test asserts on the counters
                    }
                }
            });
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return server.getLocalPort();
        }

        @Override
        public void close() throws Exception {
            server.close();
            thread.join(5_000);
        }
    }
}
