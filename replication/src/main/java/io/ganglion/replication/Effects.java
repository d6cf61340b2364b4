package io.ganglion.replication;

import io.ganglion.coordination.NodeId;
import io.ganglion.replication.ReplicaEffect.Send;
import java.util.ArrayList;
import java.util.List;

/** The effects of the event a {@link Replica} is handling, in the order they are to be executed. */
final class Effects {
    private List<ReplicaEffect> effects = new ArrayList<>();

    void add(ReplicaEffect effect) {
        effects.add(effect);
    }

    void send(NodeId to, PeerMessage message) {
        effects.add(new Send(to, message));
    }

    /** Starts the effects of the next event afresh. */
    void begin() {
        effects = new ArrayList<>();
    }

    /** The effects gathered since {@link #begin}; the next ones go to a new list. */
    List<ReplicaEffect> take() {
        List<ReplicaEffect> taken = effects;
        effects = new ArrayList<>();
        return taken;
    }
}
