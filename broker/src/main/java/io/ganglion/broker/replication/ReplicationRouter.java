package io.ganglion.broker.replication;

import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.coordination.SealReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication side of one broker's peer link: it hands {@link PeerMessage.Replication} frames and {@link
 * PeerMessage.RecoveryCommand}s to the {@link ReplicaHost} of their object (opening hosts on demand through a {@link
 * HostFactory}), sends the hosts' messages and recovery replies through a {@link PeerSender}, and, on the broker that
 * runs the controller, turns the replies it receives into the controller's metadata commands.
 *
 * <pre>
 *   peer link ─onMessage─▶ Replication(object, m)      ─▶ host(object).receive(from, m)
 *                          RecoveryCommand(request)    ─▶ host(request.object()).recover(from, request)
 *                          SealReply / InstallReply    ─▶ recoveryCommands: AppendHistory(SealReceived / MemberInstalled)
 *                          DropReply                   ─▶ recoveryCommands: AppendHistory(FollowerDropped)
 *   controller ─requestRecovery(request)─▶ RecoveryCommand to request.node() (or the local host)
 *   hosts ─sealed / installed─▶ SealReply / InstallReply to the controller's broker (or the local controller)
 * </pre>
 *
 * <p>Implementation notes. Any thread may call any method: the host map is a concurrent map, and hosts take their
 * events onto their shards, so {@link #onMessage} does not block (it runs on Netty event loops). A host is created and
 * started inside {@code computeIfAbsent}, so its open task is on its shard before any event another thread hands it.
 * A message to this broker itself (the controller asking its own replica, a replica answering its own broker's
 * controller) is handed over in process, never through the link.
 */
public final class ReplicationRouter implements RecoveryReplySink, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationRouter.class);

    /** Opens the host of an object on this broker, or says this broker holds no replica of it. */
    @FunctionalInterface
    public interface HostFactory {
        /**
         * A new, not yet started host of {@code object}, wired to {@code sender} and {@code replies}; empty when this
         * broker does not replicate {@code object} (a message for it is then dropped). Called at most once per object
         * while its host lives, from any thread; must not block on the host's shard.
         */
        Optional<ReplicaHost> create(ObjectId object, PeerSender sender, RecoveryReplySink replies);
    }

    private final NodeId self;
    private final PeerSender link;
    private final HostFactory factory;
    private final Consumer<CoordinationCommand> recoveryCommands;
    private final ConcurrentHashMap<ObjectId, ReplicaHost> hosts = new ConcurrentHashMap<>();
    private final PeerSender sender = this::send;

    /**
     * @param link sends frames to other brokers ({@code PeerLink::send})
     * @param recoveryCommands takes the metadata commands made of the recovery replies this broker receives, for its
     *     controller to propose (ignored by a broker that does not run the controller: the state machine rejects what
     *     no longer fits); called on the thread that delivered the reply
     */
    public ReplicationRouter(
            NodeId self, PeerSender link, HostFactory factory, Consumer<CoordinationCommand> recoveryCommands) {
        this.self = Objects.requireNonNull(self, "self");
        this.link = Objects.requireNonNull(link, "link");
        this.factory = Objects.requireNonNull(factory, "factory");
        this.recoveryCommands = Objects.requireNonNull(recoveryCommands, "recoveryCommands");
    }

    public NodeId self() {
        return self;
    }

    /** The sender hosts use: the link, or this router for messages to this broker itself. */
    public PeerSender sender() {
        return sender;
    }

    /** The host of {@code object}, created and started on first use; empty when the factory has none. Any thread. */
    public Optional<ReplicaHost> host(ObjectId object) {
        return Optional.ofNullable(hosts.computeIfAbsent(
                object,
                id -> factory.create(id, sender, this)
                        .map(host -> {
                            host.start();
                            return host;
                        })
                        .orElse(null)));
    }

    /** The host of {@code object} if one is running. Any thread. */
    public Optional<ReplicaHost> existingHost(ObjectId object) {
        return Optional.ofNullable(hosts.get(object));
    }

    /**
     * Closes and forgets the host of {@code object} (the object left this broker, or its storage failed and a new host
     * should be opened from disk by the next {@link #host} call). Any thread.
     */
    public CompletableFuture<Void> remove(ObjectId object) {
        ReplicaHost host = hosts.remove(object);
        return host == null ? CompletableFuture.completedFuture(null) : host.close();
    }

    /**
     * A message from {@code from}: handles the replication and recovery ones and says whether it did. Any thread
     * (Netty event loops); does not block.
     *
     * @return false for every other kind of message, which the caller handles
     */
    public boolean onMessage(NodeId from, PeerMessage message) {
        switch (message) {
            case PeerMessage.Replication replication ->
                host(replication.object())
                        .ifPresentOrElse(
                                host -> host.receive(from, replication.message()),
                                () -> dropped(from, replication.object(), "replication"));
            case PeerMessage.RecoveryCommand command -> {
                RecoveryRequest request = command.request();
                if (!request.node().equals(self)) {
                    LOG.warn(
                            "event=recovery_request_misrouted object={} from={} for={}",
                            request.object(),
                            from,
                            request.node());
                    return true;
                }
                host(request.object())
                        .ifPresentOrElse(
                                host -> host.recover(from, request),
                                () -> dropped(from, request.object(), "recovery_command"));
            }
            case PeerMessage.SealReply reply ->
                RecoveryReplies.toCommand(from, reply).ifPresent(recoveryCommands);
            case PeerMessage.InstallReply reply ->
                RecoveryReplies.toCommand(from, reply).ifPresent(recoveryCommands);
            case PeerMessage.DropReply reply ->
                RecoveryReplies.toCommand(from, reply).ifPresent(recoveryCommands);
            default -> {
                return false;
            }
        }
        return true;
    }

    /**
     * The controller asks {@code request.node()} for a recovery step: a {@link PeerMessage.RecoveryCommand} over the
     * link, or straight to the local host. The controller's request consumer. Any thread.
     */
    public void requestRecovery(RecoveryRequest request) {
        send(request.node(), new PeerMessage.RecoveryCommand(request));
    }

    @Override
    public void sealed(NodeId controller, ObjectId object, Epoch epoch, SealReply reply) {
        send(controller, RecoveryReplies.sealReply(object, epoch, reply));
    }

    @Override
    public void installed(NodeId controller, ObjectId object, Epoch epoch, NodeId node) {
        send(controller, RecoveryReplies.installReply(object, epoch, node));
    }

    @Override
    public void dropped(NodeId controller, ObjectId object, Epoch epoch, NodeId node, NodeId follower) {
        send(controller, new PeerMessage.DropReply(object, epoch.value(), node, follower));
    }

    private boolean send(NodeId to, PeerMessage message) {
        if (to.equals(self)) {
            onMessage(self, message);
            return true;
        }
        return link.send(to, message);
    }

    private void dropped(NodeId from, ObjectId object, String what) {
        LOG.debug(
                "event=replication_message_dropped object={} from={} message={} reason=no_replica", object, from, what);
    }

    /** Closes every host and waits until each stopped on its shard: never from a shard thread. */
    @Override
    public void close() {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (ObjectId object : List.copyOf(hosts.keySet())) {
            closing.add(remove(object));
        }
        CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).join();
    }
}
