package io.ganglion.sim;

import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One broker's view of the simulated metadata log, behind the project's {@link MetadataLog} interface. It applies the
 * quorum's committed commands in order with {@link MetadataImage#apply}, so its image is always the image of a prefix
 * of the one total order. Everything runs on the simulation's one thread: a proposal's future completes in a later
 * event, when this broker has applied the command; listeners are called from events, never re-entrantly from
 * {@link #propose}.
 */
public final class SimMetadataLog implements MetadataLog {
    private final NodeId node;
    private final SimMetadataQuorum quorum;
    private final List<Consumer<MetadataImage>> subscribers = new ArrayList<>();
    private final List<Consumer<Boolean>> leaderListeners = new ArrayList<>();
    private final TreeMap<Integer, CompletableFuture<MetadataImage.Applied>> waiting = new TreeMap<>();
    private MetadataImage image = MetadataImage.empty();
    private int applied;
    private boolean leader;

    SimMetadataLog(NodeId node, SimMetadataQuorum quorum) {
        this.node = node;
        this.quorum = quorum;
    }

    public NodeId node() {
        return node;
    }

    @Override
    public CompletableFuture<MetadataImage.Applied> propose(MetadataCommand command) {
        return quorum.propose(this, command);
    }

    @Override
    public MetadataImage image() {
        return image;
    }

    /** How many committed commands this broker has applied: its image is the image after that many. */
    public int applied() {
        return applied;
    }

    @Override
    public void subscribe(Consumer<MetadataImage> listener) {
        subscribers.add(listener);
    }

    @Override
    public boolean isLeader() {
        return leader;
    }

    @Override
    public java.util.OptionalLong leaderTerm() {
        return leader ? java.util.OptionalLong.of(quorum.term()) : java.util.OptionalLong.empty();
    }

    @Override
    public void onLeaderChange(Consumer<Boolean> listener) {
        leaderListeners.add(listener);
        listener.accept(leader);
    }

    @Override
    public void close() {
        subscribers.clear();
        leaderListeners.clear();
    }

    /** The future of a command this log proposed, to complete when it applies entry {@code index}. */
    void await(int index, CompletableFuture<MetadataImage.Applied> future) {
        if (index < applied) {
            future.completeExceptionally(new IllegalStateException("already applied"));
        } else {
            waiting.put(index, future);
        }
    }

    /** Applies committed commands up to {@code count}, in order. */
    void catchUp(int count) {
        int target = Math.min(count, quorum.committed());
        while (applied < target) {
            MetadataImage.Applied result = image.apply(quorum.command(applied));
            image = result.image();
            CompletableFuture<MetadataImage.Applied> future = waiting.remove(applied);
            applied++;
            for (Consumer<MetadataImage> subscriber : List.copyOf(subscribers)) {
                subscriber.accept(image);
            }
            if (future != null) {
                future.complete(result); // after the subscribers, as the Ratis log
            }
        }
    }

    void leader(boolean next) {
        if (next != leader) {
            leader = next;
            for (Consumer<Boolean> listener : List.copyOf(leaderListeners)) {
                listener.accept(next);
            }
        }
    }

    /** Fails the futures of proposals that will never apply here (they were lost with their leader). */
    void fail(int index, Throwable cause) {
        CompletableFuture<MetadataImage.Applied> future = waiting.remove(index);
        if (future != null) {
            future.completeExceptionally(cause);
        }
    }
}
