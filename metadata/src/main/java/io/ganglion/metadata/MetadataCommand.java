package io.ganglion.metadata;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Exchange;
import java.util.List;
import java.util.Objects;

/** A change to the cluster's metadata, as the metadata log orders it. */
public sealed interface MetadataCommand {

    record PutVhost(String name) implements MetadataCommand {
        public PutVhost {
            Objects.requireNonNull(name, "name");
        }
    }

    record DeleteVhost(String name) implements MetadataCommand {}

    /** Adds a user or replaces its password and tags. */
    record PutUser(User user) implements MetadataCommand {}

    record DeleteUser(String name) implements MetadataCommand {}

    record DeclareExchange(String vhost, Exchange exchange) implements MetadataCommand {}

    /** Deletes an exchange; with {@code ifUnused}, only when nothing is bound from it. */
    record DeleteExchange(String vhost, String name, boolean ifUnused) implements MetadataCommand {}

    record DeclareQueue(String vhost, QueueDef queue) implements MetadataCommand {}

    record DeleteQueue(String vhost, String name) implements MetadataCommand {}

    /**
     * Deletes a queue its owner found unused (auto-delete, {@code x-expires}) only while it is still the queue the owner
     * knew, object {@code objectId}: a no-op once that queue was deleted, or deleted and declared again.
     */
    record DeleteUnusedQueue(String vhost, String name, long objectId) implements MetadataCommand {}

    record Bind(String vhost, Binding binding) implements MetadataCommand {}

    record Unbind(String vhost, Binding binding) implements MetadataCommand {}

    /**
     * A new cluster's first metadata: vhost {@code /} and {@code user}, applied only to an image with no vhost and no
     * user, and a no-op otherwise. Brokers starting together may each propose it; the first applied wins.
     */
    record Bootstrap(User user) implements MetadataCommand {
        public Bootstrap {
            Objects.requireNonNull(user, "user");
        }
    }

    /**
     * An operator's request that {@code node} drain (move its copies away) or stop draining. The node reads it from the
     * image and reports it in its heartbeats; the controller commits it to the live set, which placement honours.
     */
    record SetDraining(String node, boolean draining) implements MetadataCommand {
        public SetDraining {
            Objects.requireNonNull(node, "node");
        }
    }

    /**
     * A command of the coordination core (objects, histories, the live set, runtime settings), applied to the image's
     * {@link io.ganglion.coordination.CoordinationImage} by {@link io.ganglion.coordination.CoordinationImage#apply}.
     */
    record Coordination(CoordinationCommand command) implements MetadataCommand {
        public Coordination {
            Objects.requireNonNull(command, "command");
        }
    }

    /**
     * {@code command} as the leader of the metadata log in term {@code leaderTerm} proposed it: the controller's
     * commands. A replicated log applies it only from an entry appended in that same term, that is by that same
     * leadership, and rejects it from any other; the image applies the command inside (the term is the log's
     * business). Why: a controller that froze (a long pause, SIGSTOP) wakes up with what it saw before, and its first
     * tick blamed every broker for the silence; its leadership was gone, but the log's client took the proposal to
     * the new leader, which committed it: healthy brokers down, an owner replaced (ReplicatedQueueIT case 4b in CI).
     */
    record Fenced(long leaderTerm, MetadataCommand command) implements MetadataCommand {
        public Fenced {
            Objects.requireNonNull(command, "command");
            if (leaderTerm < 0) {
                throw new IllegalArgumentException("negative leader term " + leaderTerm);
            }
            if (command instanceof Fenced) {
                throw new IllegalArgumentException("a fenced command inside another");
            }
        }

        /**
         * One controller tick's {@code commands} as one entry fenced by {@code leaderTerm}: a single command as it is,
         * several as a {@link CoordinationCommand.Batch} applied all or nothing.
         */
        public static Fenced controllerEntry(long leaderTerm, List<CoordinationCommand> commands) {
            CoordinationCommand entry =
                    commands.size() == 1 ? commands.get(0) : new CoordinationCommand.Batch(commands);
            return new Fenced(leaderTerm, new Coordination(entry));
        }
    }
}
