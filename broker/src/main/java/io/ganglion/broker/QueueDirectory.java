package io.ganglion.broker;

import static io.ganglion.broker.Failures.failure;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.Rejection;
import io.ganglion.metadata.Vhost;
import io.ganglion.queues.routing.ResourceName;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Reads vhosts and queues from this broker's metadata image, and which broker serves a queue now; proposes commands,
 * turning a rejection into the failure a client gets. Any thread: the image is an immutable value.
 */
final class QueueDirectory {
    private final MetadataLog metadata;
    /** This broker's node id in a cluster, empty on a single broker. */
    private final String self;

    QueueDirectory(MetadataLog metadata, String self) {
        this.metadata = metadata;
        this.self = self;
    }

    MetadataLog log() {
        return metadata;
    }

    MetadataImage image() {
        return metadata.image();
    }

    String self() {
        return self;
    }

    Vhost vhost(String name) {
        return metadata.image().vhost(name).orElseThrow(() -> failure(ReplyCode.NOT_FOUND, "no vhost '" + name + "'"));
    }

    /** The queue, if it exists and {@code connectionId} may use it (see {@link #checkExclusive}); NOT_FOUND else. */
    QueueDef queueDef(String vhost, String queue, String connectionId) {
        QueueDef def = vhost(vhost)
                .queue(queue)
                .orElseThrow(() -> failure(ReplyCode.NOT_FOUND, "no " + ResourceName.queue(vhost, queue)));
        checkExclusive(def, vhost, connectionId);
        return def;
    }

    /** RESOURCE_LOCKED if {@code def} is exclusive to a connection other than {@code connectionId}. */
    static void checkExclusive(QueueDef def, String vhost, String connectionId) {
        if (def.exclusive() && !def.exclusiveOwner().equals(connectionId)) {
            throw failure(
                    ReplyCode.RESOURCE_LOCKED,
                    "cannot obtain exclusive access to locked " + ResourceName.queue(vhost, def.name())
                            + ". It could be originally declared on another connection or the exclusive property value"
                            + " does not match that of the original declaration.");
        }
    }

    /** Whether this broker is the home of a queue that is not replicated. */
    boolean isHomeOf(QueueDef queue) {
        return queue.home().isEmpty() || queue.home().equals(self);
    }

    /**
     * The node id of the broker that serves {@code queue} now, from one reading of the image: a classic queue's home,
     * a replicated queue's active owner (empty while it recovers); this broker's own id (empty for a single broker)
     * when it is this one. Callers read it once per operation: an owner read twice can change in between, and a
     * publish that saw the old owner, then none, would fail its channel with 404 during a failover.
     */
    Optional<String> homeNow(String vhost, QueueDef queue) {
        if (!queue.replicated()) {
            return Optional.of(isHomeOf(queue) ? self : queue.home());
        }
        return owner(vhost, queue).map(NodeId::value);
    }

    /** {@link #homeNow}, or NOT_FOUND for a replicated queue that has no active owner now. */
    String homeOrFail(String vhost, QueueDef def) {
        return homeNow(vhost, def)
                .orElseThrow(() -> failure(
                        ReplyCode.NOT_FOUND,
                        ResourceName.queue(vhost, def.name()) + " has no active owner now (recovering)"));
    }

    /** The active owner of a replicated queue in this broker's image; empty while it recovers. */
    Optional<NodeId> owner(String vhost, QueueDef queue) {
        return metadata.image()
                .coordination()
                .object(ObjectId.of(vhost, queue.name()))
                .flatMap(AcceptedHistory::validate)
                .map(Assignment::owner);
    }

    /** Whether the image holds {@code queue} in {@code vhost}. */
    boolean holds(String vhost, String queue) {
        return metadata.image().vhost(vhost).flatMap(v -> v.queue(queue)).isPresent();
    }

    /** Proposes {@code command}; the image it was applied to, or the failure its rejection maps to. */
    CompletionStage<MetadataImage> propose(MetadataCommand command) {
        return metadata.propose(command).thenApply(applied -> {
            if (applied.rejection().isPresent()) {
                Rejection rejection = applied.rejection().get();
                throw failure(replyCode(rejection.kind()), rejection.message());
            }
            return applied.image();
        });
    }

    private static ReplyCode replyCode(Rejection.Kind kind) {
        return switch (kind) {
            case NOT_FOUND -> ReplyCode.NOT_FOUND;
            case PRECONDITION_FAILED -> ReplyCode.PRECONDITION_FAILED;
            case ACCESS_REFUSED -> ReplyCode.ACCESS_REFUSED;
            case RESOURCE_LOCKED -> ReplyCode.RESOURCE_LOCKED;
        };
    }
}
