package io.ganglion.broker.replication;

import io.ganglion.broker.peer.PeerMessage;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.SealReply;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovery replies on the wire and in the metadata log. A replica's {@code ReplySealed} travels as a {@link
 * PeerMessage.SealReply} ({@code sealedEpoch} is the epoch the controller asked to seal, {@code lastEpoch} and {@code
 * lastOffset} the log end), its {@code ReplyInstalled} (to an install or a catch-up) as an {@link
 * PeerMessage.InstallReply} with {@code ok}, an owner's {@code ReplyDropped} as a {@link PeerMessage.DropReply}. The
 * controller's broker turns them into the history records the recovery driver waits for: {@code
 * AppendHistory(SealReceived)}, {@code AppendHistory(MemberInstalled)} and {@code AppendHistory(FollowerDropped)}.
 */
public final class RecoveryReplies {
    private static final Logger LOG = LoggerFactory.getLogger(RecoveryReplies.class);

    private RecoveryReplies() {}

    public static PeerMessage.SealReply sealReply(ObjectId object, Epoch epoch, SealReply reply) {
        return new PeerMessage.SealReply(
                object,
                epoch.value(),
                reply.logEnd().epoch().value(),
                reply.logEnd().offset(),
                reply.durableOffset(),
                reply.node());
    }

    public static PeerMessage.InstallReply installReply(ObjectId object, Epoch epoch, NodeId node) {
        return new PeerMessage.InstallReply(object, epoch.value(), node, true, "");
    }

    /**
     * The metadata command a seal reply from {@code from} stands for; empty (logged) when the reply names another node
     * than its sender or holds values no replica sends.
     */
    public static Optional<CoordinationCommand> toCommand(NodeId from, PeerMessage.SealReply reply) {
        if (!reply.node().equals(from)) {
            return refused(from, reply.object(), "seal reply names " + reply.node());
        }
        try {
            SealReply sealed = new SealReply(
                    reply.node(), LogPosition.of(reply.lastEpoch(), reply.lastOffset()), reply.durableOffset());
            return Optional.of(new CoordinationCommand.AppendHistory(
                    reply.object(), new HistoryRecord.SealReceived(Epoch.of(reply.sealedEpoch()), sealed)));
        } catch (IllegalArgumentException e) {
            return refused(from, reply.object(), e.getMessage());
        }
    }

    /** The metadata command an install reply from {@code from} stands for; empty when not ok or not its sender's. */
    public static Optional<CoordinationCommand> toCommand(NodeId from, PeerMessage.InstallReply reply) {
        if (!reply.node().equals(from)) {
            return refused(from, reply.object(), "install reply names " + reply.node());
        }
        if (!reply.ok()) {
            LOG.info(
                    "event=install_failed object={} node={} epoch={} reason=\"{}\"",
                    reply.object(),
                    from,
                    reply.epoch(),
                    reply.reason());
            return Optional.empty();
        }
        try {
            return Optional.of(new CoordinationCommand.AppendHistory(
                    reply.object(), new HistoryRecord.MemberInstalled(Epoch.of(reply.epoch()), reply.node())));
        } catch (IllegalArgumentException e) {
            return refused(from, reply.object(), e.getMessage());
        }
    }

    /** The metadata command a drop reply from {@code from} stands for; empty when it names another owner. */
    public static Optional<CoordinationCommand> toCommand(NodeId from, PeerMessage.DropReply reply) {
        if (!reply.node().equals(from)) {
            return refused(from, reply.object(), "drop reply names " + reply.node());
        }
        try {
            return Optional.of(new CoordinationCommand.AppendHistory(
                    reply.object(), new HistoryRecord.FollowerDropped(Epoch.of(reply.epoch()), reply.follower())));
        } catch (IllegalArgumentException e) {
            return refused(from, reply.object(), e.getMessage());
        }
    }

    private static Optional<CoordinationCommand> refused(NodeId from, ObjectId object, String why) {
        LOG.warn("event=recovery_reply_refused object={} from={} reason=\"{}\"", object, from, why);
        return Optional.empty();
    }
}
