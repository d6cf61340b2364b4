package io.ganglion.sim;

import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * The simulated metadata quorum: one total order of commands, a leader that commits proposals after a commit delay
 * while it reaches a majority of the voters (every broker votes), and elections.
 *
 * <ul>
 *   <li>A leader that dies, or cannot reach a majority for 300 ms, loses its term. Of its proposals not yet committed,
 *       a random prefix commits anyway (it had reached a majority) and the rest are lost: their futures fail.
 *   <li>An election takes 150 to 300 ms and picks, at random, a live broker that reaches a majority. The new leader
 *       applies every committed command before it reports leadership (Ratis's "leader and ready").
 *   <li>Each broker applies committed commands after its link delay from the leader, and catches up every 200 ms
 *       while it can reach the leader (after a partition heals or a restart).
 * </ul>
 *
 * Commands are applied to a reference image here too; the checker compares every broker's image with it.
 */
public final class SimMetadataQuorum {
    private record Proposal(
            long term,
            SimMetadataLog proposer,
            MetadataCommand command,
            CompletableFuture<MetadataImage.Applied> future) {}

    private final Scheduler scheduler;
    private final SplittableRandom random;
    private final SimNetwork network;
    private final Predicate<NodeId> alive;
    private final TreeMap<NodeId, SimMetadataLog> logs = new TreeMap<>();
    private final List<MetadataCommand> commands = new ArrayList<>();
    private final List<MetadataImage> images = new ArrayList<>();
    private final List<Proposal> inflight = new ArrayList<>();
    private final List<BiConsumer<Integer, MetadataImage.Applied>> commitListeners = new ArrayList<>();
    private NodeId leader;
    private boolean ready;
    private long term;
    private boolean electing;
    private long lostMajoritySinceMs = -1;
    private long lostProposals;
    private long leaderChanges;

    SimMetadataQuorum(Scheduler scheduler, SplittableRandom random, SimNetwork network, Predicate<NodeId> alive) {
        this.scheduler = scheduler;
        this.random = random;
        this.network = network;
        this.alive = alive;
        images.add(MetadataImage.empty());
    }

    SimMetadataLog log(NodeId node) {
        return logs.computeIfAbsent(node, id -> new SimMetadataLog(id, this));
    }

    void start() {
        scheduler.after(50, "quorum-watch", this::watch);
        scheduler.after(200, "quorum-sync", this::sync);
        elect();
    }

    /** Commands committed so far. */
    public int committed() {
        return commands.size();
    }

    MetadataCommand command(int index) {
        return commands.get(index);
    }

    /** The reference image after {@code count} committed commands. */
    public MetadataImage imageAt(int count) {
        return images.get(count);
    }

    public MetadataImage image() {
        return images.get(images.size() - 1);
    }

    /** The leader, once it is ready; empty between terms. */
    public java.util.Optional<NodeId> readyLeader() {
        return ready ? java.util.Optional.of(leader) : java.util.Optional.empty();
    }

    /** The current term of the metadata log. */
    long term() {
        return term;
    }

    public long lostProposals() {
        return lostProposals;
    }

    public long leaderChanges() {
        return leaderChanges;
    }

    void onCommit(BiConsumer<Integer, MetadataImage.Applied> listener) {
        commitListeners.add(listener);
    }

    CompletableFuture<MetadataImage.Applied> propose(SimMetadataLog from, MetadataCommand command) {
        CompletableFuture<MetadataImage.Applied> future = new CompletableFuture<>();
        if (!ready || !from.node().equals(leader)) {
            // A follower's proposal would be forwarded to the leader; in the simulation only the leader proposes.
            future.completeExceptionally(new IllegalStateException(from.node() + " does not lead the metadata log"));
            return future;
        }
        Proposal proposal = new Proposal(term, from, command, future);
        inflight.add(proposal);
        scheduler.after(2 + random.nextLong(12), "commit-try", () -> tryCommit(proposal));
        return future;
    }

    private void tryCommit(Proposal proposal) {
        if (proposal.term() != term || !inflight.contains(proposal)) {
            return;
        }
        if (!reachesMajority(leader)) {
            scheduler.after(20, "commit-retry", () -> tryCommit(proposal));
            return;
        }
        // Raft commits in log order: everything proposed before it in this term commits first.
        while (!inflight.isEmpty()) {
            Proposal next = inflight.remove(0);
            commit(next);
            if (next == proposal) {
                break;
            }
        }
    }

    private void commit(Proposal proposal) {
        int index = commands.size();
        commands.add(proposal.command());
        MetadataImage.Applied applied = image().apply(proposal.command());
        images.add(applied.image());
        proposal.proposer().await(index, proposal.future());
        for (BiConsumer<Integer, MetadataImage.Applied> listener : commitListeners) {
            listener.accept(index, applied);
        }
        int count = commands.size();
        for (SimMetadataLog log : logs.values()) {
            NodeId node = log.node();
            if (alive.test(node) && network.connected(leader, node)) {
                scheduler.after(network.delayMs(leader, node), "apply " + node, () -> {
                    if (alive.test(node)) {
                        log.catchUp(count);
                    }
                });
            }
        }
    }

    private boolean reachesMajority(NodeId node) {
        if (node == null || !alive.test(node)) {
            return false;
        }
        int reached = 0;
        for (NodeId voter : logs.keySet()) {
            if (alive.test(voter) && network.connected(node, voter)) {
                reached++;
            }
        }
        return reached * 2 > logs.size();
    }

    private void watch() {
        scheduler.after(50, "quorum-watch", this::watch);
        if (leader == null) {
            return;
        }
        if (!alive.test(leader)) {
            endTerm("leader died", true);
            return;
        }
        if (reachesMajority(leader)) {
            lostMajoritySinceMs = -1;
        } else if (lostMajoritySinceMs < 0) {
            lostMajoritySinceMs = scheduler.now();
        } else if (scheduler.now() - lostMajoritySinceMs >= 300) {
            endTerm("leader lost its majority", false);
        }
    }

    /**
     * The current leader's term ends now. When it died, a random prefix of its uncommitted proposals had reached a
     * majority and commits; when it lost its majority, none had.
     */
    void endTerm(String why, boolean replicated) {
        if (leader == null) {
            return;
        }
        scheduler.trace("term-end " + leader + " " + why);
        int survive = inflight.isEmpty() || !replicated ? 0 : random.nextInt(inflight.size() + 1);
        List<Proposal> pending = new ArrayList<>(inflight);
        inflight.clear();
        for (int i = 0; i < pending.size(); i++) {
            if (i < survive) {
                commit(pending.get(i));
            } else {
                lostProposals++;
                pending.get(i).future().completeExceptionally(new IllegalStateException("lost with its leader"));
            }
        }
        SimMetadataLog old = logs.get(leader);
        leader = null;
        ready = false;
        lostMajoritySinceMs = -1;
        old.leader(false);
        elect();
    }

    private void elect() {
        if (electing) {
            return;
        }
        electing = true;
        scheduler.after(150 + random.nextLong(151), "election", () -> {
            electing = false;
            List<NodeId> candidates = new ArrayList<>();
            for (NodeId node : logs.keySet()) {
                if (reachesMajority(node)) {
                    candidates.add(node);
                }
            }
            if (candidates.isEmpty()) {
                elect();
                return;
            }
            NodeId chosen = candidates.get(random.nextInt(candidates.size()));
            term++;
            leaderChanges++;
            leader = chosen;
            SimMetadataLog log = logs.get(chosen);
            log.catchUp(commands.size());
            ready = true;
            scheduler.trace("leader " + chosen + " term " + term);
            log.leader(true);
        });
    }

    /** Brokers that can reach the leader catch up: after a restart or a healed partition. */
    private void sync() {
        scheduler.after(200, "quorum-sync", this::sync);
        if (leader == null) {
            return;
        }
        for (SimMetadataLog log : logs.values()) {
            if (alive.test(log.node()) && network.connected(leader, log.node()) && log.applied() < commands.size()) {
                log.catchUp(commands.size());
            }
        }
    }

    /** A broker process stopped: if it led, its term ends. */
    void crashed(NodeId node) {
        if (node.equals(leader)) {
            endTerm("leader crashed", true);
        }
    }
}
