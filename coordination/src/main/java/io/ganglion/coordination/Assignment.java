package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@code {epoch, owner, followers, activated}} of one object. Followers keep their order: it is placement's order and
 * stays stable while members live.
 */
public record Assignment(Epoch epoch, NodeId owner, List<NodeId> followers, boolean activated) {
    public Assignment {
        Objects.requireNonNull(epoch, "epoch");
        Objects.requireNonNull(owner, "owner");
        followers = List.copyOf(followers);
        if (followers.contains(owner) || followers.stream().distinct().count() != followers.size()) {
            throw new IllegalArgumentException("two copies on one node: owner " + owner + ", followers " + followers);
        }
    }

    /** Owner first, then the followers. */
    public List<NodeId> members() {
        List<NodeId> members = new ArrayList<>(followers.size() + 1);
        members.add(owner);
        members.addAll(followers);
        return List.copyOf(members);
    }

    public boolean hasMember(NodeId node) {
        return owner.equals(node) || followers.contains(node);
    }

    /** The eligible set E of this assignment: owner and followers, held followers included, learners never. */
    public EligibleSet eligibleSet() {
        return EligibleSet.of(members());
    }

    public Assignment activate() {
        return new Assignment(epoch, owner, followers, true);
    }

    /** Same owner and same followers in the same order, whatever the epoch and activation. */
    public boolean sameMembers(NodeId otherOwner, List<NodeId> otherFollowers) {
        return owner.equals(otherOwner) && followers.equals(otherFollowers);
    }
}
