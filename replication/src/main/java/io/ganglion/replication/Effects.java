package io.ganglion.replication;

import io.ganglion.coordination.NodeId;
import io.ganglion.replication.ReplicaEffect.Send;
import java.util.ArrayList;
import java.util.List;

/** The effects of the event a {@link Replica} is handling, in the order they are to be executed. */
final class Effects {
    /** Null until the event has an effect: most events have none or one, and the list is made only then. */
    private List<ReplicaEffect> effects;

    void add(ReplicaEffect effect) {
        if (effects == null) {
            effects = new ArrayList<>(4);
        }
        effects.add(effect);
    }

    void send(NodeId to, PeerMessage message) {
        add(new Send(to, message));
    }

    /** Starts the effects of the next event afresh. */
    void begin() {
        effects = null;
    }

    /** The effects gathered since {@link #begin}; the next ones go to a new list. */
    List<ReplicaEffect> take() {
        List<ReplicaEffect> taken = effects == null ? List.of() : effects;
        effects = null;
        return taken;
    }
}
