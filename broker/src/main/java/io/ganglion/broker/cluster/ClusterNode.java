package io.ganglion.broker.cluster;

import io.ganglion.broker.jvm.ResetRehearsal;
import io.ganglion.broker.peer.PeerHandler;
import io.ganglion.broker.peer.PeerLink;
import io.ganglion.broker.peer.PeerLinkConfig;
import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.metadata.MetadataLog;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This broker's part in the cluster: the peer link to every other broker of the seed list, the heartbeats it sends, and
 * the {@link Controller}, which acts only while this broker leads the metadata log.
 *
 * <p>Every broker heartbeats every other broker, not only the controller: with three to five voters this costs little,
 * and a broker that becomes controller has already heard from everyone. Its own heartbeats go to its controller
 * directly. The draining flag it reports is the operator's request in the metadata image ({@code ctl node drain}).
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);

    /**
     * Dials to a peer whose link closed, this far apart, until one is refused (see PeerLink.refusesConnections). A
     * killed broker's listener went on accepting for about 3 ms after its links closed (EOF 14.9 ms, first refusal 17.8
     * ms after the SIGKILL), so the first dial is often accepted; with dials 8 ms apart the refusal came 2-38 ms after
     * the close, and in about half the owner kills of the failover bench none of four came before the eager failover
     * timer (25 ms). Twelve dials 2 ms apart cover that timer; each is one loopback or LAN connect.
     */
    private static final int REFUSAL_PROBES = 12;

    private static final long REFUSAL_PROBE_GAP_MS = 2;

    private final NodeId self;
    private final Incarnation incarnation;
    private final MetadataLog log;
    private final Clock clock;
    private final Controller controller;
    private final PeerLink link;
    private final ScheduledExecutorService heartbeats;
    /** Resets of a connection to this broker's own peer port, now and then (see {@link ResetRehearsal}). */
    private final ResetRehearsal resets;

    private ClusterNode(
            NodeId self,
            Incarnation incarnation,
            MetadataLog log,
            Clock clock,
            Controller controller,
            PeerLink link,
            ScheduledExecutorService heartbeats,
            ResetRehearsal resets) {
        this.self = self;
        this.incarnation = incarnation;
        this.log = log;
        this.clock = clock;
        this.controller = controller;
        this.link = link;
        this.heartbeats = heartbeats;
        this.resets = resets;
    }

    /**
     * Starts the peer link on this broker's peer port, connects to every other seed and begins heartbeating. Every
     * message other than a heartbeat goes to {@code messages}, and every closed peer to {@code disconnected} too; both
     * run on the peer link's threads, the event loops {@code loops} (the broker's shards), and must not block.
     *
     * @throws IOException if the peer port cannot be bound
     */
    public static ClusterNode start(
            String clusterName,
            Seed selfSeed,
            List<Seed> seeds,
            Incarnation incarnation,
            MetadataLog log,
            Clock clock,
            BiConsumer<NodeId, PeerMessage> messages,
            Consumer<NodeId> disconnected,
            Consumer<RecoveryRequest> recoveryRequests,
            EventLoopGroup loops)
            throws IOException {
        NodeId self = new NodeId(selfSeed.id());
        Controller controller = new Controller(self, log, clock, recoveryRequests);
        Map<NodeId, InetSocketAddress> peerAddresses = new HashMap<>();
        for (Seed seed : seeds) {
            peerAddresses.put(new NodeId(seed.id()), new InetSocketAddress(seed.host(), seed.peerPort()));
        }
        AtomicReference<PeerLink> started = new AtomicReference<>();
        PeerHandler handler = new PeerHandler() {
            @Override
            public void onConnected(NodeId peer, Incarnation peerIncarnation) {
                LOG.info("event=peer_connected peer={} incarnation={}", peer, peerIncarnation);
                log.peerReconnected(peer.value());
            }

            @Override
            public void onMessage(NodeId from, PeerMessage message) {
                if (message instanceof PeerMessage.Heartbeat heartbeat) {
                    controller.heartbeat(heartbeat.node(), heartbeat.incarnation(), heartbeat.draining());
                } else {
                    messages.accept(from, message);
                }
            }

            @Override
            public void onDisconnected(NodeId peer) {
                LOG.info("event=peer_disconnected peer={}", peer);
                controller.connectionClosed(peer);
                // a killed broker's port refuses within a few milliseconds; a live one cut off does not (see
                // Controller.connectionRefused, which ignores a refusal once the link is back)
                InetSocketAddress address = peerAddresses.get(peer);
                PeerLink link = started.get();
                if (address != null && link != null) {
                    link.refusesConnections(address, REFUSAL_PROBES, REFUSAL_PROBE_GAP_MS)
                            .thenAccept(refused -> {
                                if (refused) {
                                    controller.connectionRefused(peer);
                                }
                            });
                }
                disconnected.accept(peer);
            }
        };
        PeerLink link;
        try {
            link = PeerLink.start(
                    PeerLinkConfig.defaults(clusterName, self, incarnation)
                            .withListener(selfSeed.host(), selfSeed.peerPort()),
                    handler,
                    loops);
        } catch (IOException | RuntimeException e) {
            controller.close();
            throw e;
        }
        started.set(link);
        // one TCP link per pair of brokers, dialled by the one with the smaller id: messages between two brokers then
        // travel one ordered stream, and a message queued on a link that broke is lost with it, never replayed
        // after a newer one (replication relies on both)
        for (Seed seed : seeds) {
            if (seed.id().compareTo(selfSeed.id()) > 0) {
                NodeId peer = new NodeId(seed.id());
                link.connect(peer, peerAddresses.get(peer));
            }
        }
        ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ganglion-heartbeat");
            thread.setDaemon(true);
            return thread;
        });
        ResetRehearsal resets = ResetRehearsal.start(new InetSocketAddress(selfSeed.host(), selfSeed.peerPort()));
        ClusterNode node = new ClusterNode(self, incarnation, log, clock, controller, link, heartbeats, resets);
        node.scheduleHeartbeat();
        warmRefusalDial(link, selfSeed.host());
        return node;
    }

    /**
     * Dials a port of this host that nothing listens on, once, at start, so that the dial made when a peer's link
     * closes does not run for the first time then: the first one loaded Netty's connect and resolver classes and
     * linked their lambdas on the spot, and in the failover bench's first kill of a run no refusal came before the
     * eager failover timer (25 ms) while every later kill's did. The result is of no interest; it never fails.
     */
    private static void warmRefusalDial(PeerLink link, String host) {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            port = socket.getLocalPort();
        } catch (IOException | RuntimeException e) {
            return; // no warm-up: the first real dial is only slower
        }
        link.refusesConnections(new InetSocketAddress(host, port))
                .thenAccept(refused -> LOG.debug("event=refusal_dial_warmed refused={}", refused));
    }

    private void scheduleHeartbeat() {
        long interval = log.image().coordination().settings().value(RuntimeSettings.HEARTBEAT_MS);
        heartbeats.schedule(
                () -> {
                    try {
                        heartbeat();
                    } catch (RuntimeException e) {
                        LOG.error("event=heartbeat_failed node={}", self, e);
                    } finally {
                        if (!heartbeats.isShutdown()) {
                            scheduleHeartbeat();
                        }
                    }
                },
                interval,
                TimeUnit.MILLISECONDS);
    }

    private void heartbeat() {
        boolean draining = log.image().drainRequested().contains(self.value());
        PeerMessage.Heartbeat beat = new PeerMessage.Heartbeat(self, incarnation, draining, clock.millis());
        controller.heartbeat(self, incarnation, draining);
        for (NodeId peer : link.connectedPeers()) {
            link.send(peer, beat);
        }
    }

    public NodeId self() {
        return self;
    }

    public Incarnation incarnation() {
        return incarnation;
    }

    public Controller controller() {
        return controller;
    }

    public PeerLink link() {
        return link;
    }

    @Override
    public void close() {
        resets.close();
        heartbeats.shutdownNow();
        controller.close();
        link.close();
    }
}
