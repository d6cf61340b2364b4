package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Proposes an owner and followers for every object from the live set.
 *
 * <p>Rules, in order:
 *
 * <ol>
 *   <li>Never two copies on one node; never a new copy on a down or draining node.
 *   <li>Stability: a member on a live, non-draining node keeps its copy, and an owner on such a node stays owner. A copy
 *       moves only off a down or draining node, because any other move would fence the object through recovery.
 *   <li>A lost owner is replaced by the kept follower that owns the fewest objects (ties: follower order).
 *   <li>Missing copies go to the least loaded placeable nodes: owners by (owned, copies, id), followers by (copies,
 *       id); but an object placed for the first time takes its spec's preferred owner when that node is placeable. The load counts every copy kept by rule 2 before any new copy is placed, and objects are placed in id
 *       order, so the same input always gives the same proposal.
 * </ol>
 *
 * <p>Pure and deterministic: the same objects and live set give the same proposals.
 */
public final class Placement {
    private Placement() {}

    /** An object to place: its spec and its current members, owner first, if it has any. */
    public record Current(ObjectSpec spec, Optional<Assignment> members) {}

    /**
     * Proposals for every object that can have at least an owner. Objects with no placeable node at all are left out:
     * there is nothing better to propose than what they have.
     */
    public static SortedMap<ObjectId, Proposal> propose(List<Current> objects, LiveSet liveSet) {
        List<NodeId> placeable = liveSet.placeableNodes();
        TreeMap<ObjectId, Proposal> proposals = new TreeMap<>();
        if (placeable.isEmpty()) {
            return proposals;
        }
        List<Current> ordered = new ArrayList<>(objects);
        ordered.sort(Comparator.comparing(current -> current.spec().id()));

        Map<NodeId, int[]> load = new HashMap<>(); // node -> {owned, copies}
        for (NodeId node : placeable) {
            load.put(node, new int[2]);
        }
        for (Current current : ordered) {
            current.members().ifPresent(assignment -> {
                if (liveSet.isPlaceable(assignment.owner())) {
                    load.get(assignment.owner())[0]++;
                }
                for (NodeId member : assignment.members()) {
                    if (liveSet.isPlaceable(member)) {
                        load.get(member)[1]++;
                    }
                }
            });
        }

        for (Current current : ordered) {
            proposals.put(current.spec().id(), place(current, liveSet, placeable, load));
        }
        return proposals;
    }

    private static Proposal place(Current current, LiveSet liveSet, List<NodeId> placeable, Map<NodeId, int[]> load) {
        ObjectSpec spec = current.spec();
        NodeId owner = null;
        List<NodeId> followers = new ArrayList<>();
        if (current.members().isPresent()) {
            Assignment assignment = current.members().get();
            if (liveSet.isPlaceable(assignment.owner())) {
                owner = assignment.owner();
            }
            for (NodeId follower : assignment.followers()) {
                if (liveSet.isPlaceable(follower)) {
                    followers.add(follower);
                }
            }
            if (owner == null && !followers.isEmpty()) {
                owner = followers.stream()
                        .min(Comparator.comparingInt(node -> load.get(node)[0]))
                        .orElseThrow();
                followers.remove(owner);
                load.get(owner)[0]++;
            }
        }
        if (owner == null
                && current.members().isEmpty()
                && spec.preferredOwner().isPresent()
                && liveSet.isPlaceable(spec.preferredOwner().get())) {
            owner = spec.preferredOwner().get();
            load.get(owner)[0]++;
            load.get(owner)[1]++;
        }
        if (owner == null) {
            owner = placeable.stream()
                    .min(Comparator.<NodeId>comparingInt(node -> load.get(node)[0])
                            .thenComparingInt(node -> load.get(node)[1])
                            .thenComparing(Comparator.naturalOrder()))
                    .orElseThrow();
            load.get(owner)[0]++;
            load.get(owner)[1]++;
        }
        while (followers.size() < spec.copies() - 1) {
            NodeId chosenOwner = owner;
            Optional<NodeId> next = placeable.stream()
                    .filter(node -> !node.equals(chosenOwner) && !followers.contains(node))
                    .min(Comparator.<NodeId>comparingInt(node -> load.get(node)[1])
                            .thenComparing(Comparator.naturalOrder()));
            if (next.isEmpty()) {
                break;
            }
            followers.add(next.get());
            load.get(next.get())[1]++;
        }
        return new Proposal(spec.id(), owner, followers);
    }
}
