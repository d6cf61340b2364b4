package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** Placement's owner and followers for one object. It may hold fewer copies than wanted when nodes are short. */
public record Proposal(ObjectId id, NodeId owner, List<NodeId> followers) {
    public Proposal {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(owner, "owner");
        followers = List.copyOf(followers);
    }

    public List<NodeId> members() {
        List<NodeId> members = new ArrayList<>(followers.size() + 1);
        members.add(owner);
        members.addAll(followers);
        return List.copyOf(members);
    }

    public boolean sameMembersAs(Assignment assignment) {
        return assignment.sameMembers(owner, followers);
    }
}
