package io.ganglion.metadata;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The broker's one way to the metadata log: propose a command, read the committed image, learn of new images and of
 * whether this broker leads the log (and so runs the controller). A single-node file log, the Apache Ratis log and the
 * simulator's log all sit behind it.
 */
public interface MetadataLog extends AutoCloseable {
    /**
     * Proposes {@code command}. The future completes once the command is committed and applied here, with the image it
     * produced and its rejection if the state machine refused it, after every {@link #subscribe subscriber} has seen
     * that image (so what a subscriber builds from it, a queue's replica, exists when a declare answers); it fails if
     * the command could not be committed. (A
     * replicated log that learned of the command through a snapshot, or kept no image for it, gives its latest image,
     * which includes the command.) A rejection is an outcome, not a failure.
     */
    CompletableFuture<MetadataImage.Applied> propose(MetadataCommand command);

    /** The latest applied image. Safe from any thread. */
    MetadataImage image();

    /** Calls {@code listener} with every image applied from now on, in order, on the log's own thread. */
    void subscribe(Consumer<MetadataImage> listener);

    /**
     * Whether this broker leads the metadata log and may run the controller: it is the leader and its image holds every
     * command committed before its leadership began. Safe from any thread (a volatile read); by the time the caller acts
     * the leadership may be gone, which is safe because the controller's commands are fenced with its {@link
     * #leaderTerm} and rejected when applied in another.
     *
     * <p>A log of one node always leads, which is the default.
     */
    default boolean isLeader() {
        return true;
    }

    /**
     * The term of this broker's current leadership of the log, if it leads. The controller fences its commands with
     * the term its leadership began in ({@link MetadataCommand.Fenced}): wherever such a command ends up appended after
     * that leadership ended (a log's client takes a proposal the old leader refuses to the new one), it is rejected.
     * A log of one node leads in term 0 for good.
     */
    default java.util.OptionalLong leaderTerm() {
        return isLeader() ? java.util.OptionalLong.of(0) : java.util.OptionalLong.empty();
    }

    /**
     * Calls {@code listener} at once with {@link #isLeader()}, then with every change of it, in order. The listener runs
     * on the log's own threads and must not block. The default, for a log of one node, calls it once with {@code true}.
     */
    default void onLeaderChange(Consumer<Boolean> listener) {
        listener.accept(true);
    }

    /**
     * An image that holds every command committed before this call (a linearizable read): for a broker that must not
     * answer from a stale image, such as one asked for a queue another broker just declared. A log of one node: the
     * current image.
     */
    default CompletableFuture<MetadataImage> sync() {
        return CompletableFuture.completedFuture(image());
    }

    /**
     * The broker's peer link reached {@code node} again, perhaps a new process of it. A log that keeps its own
     * connections to its peers drops the one to {@code node}, so that its next request (a vote, an append) opens a new
     * connection instead of failing once on one to a process that is gone. Any thread; must not block. A log of one
     * node: nothing to do.
     */
    default void peerReconnected(String node) {}

    /** The node that leads the log (and runs the controller), if this broker knows one. A log of one node: empty. */
    default java.util.Optional<String> leaderId() {
        return java.util.Optional.empty();
    }

    @Override
    void close();
}
