package io.ganglion.metadata;

import io.ganglion.queues.routing.Topology;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** One virtual host: its routing topology and its queue declarations. */
public record Vhost(String name, Topology topology, Map<String, QueueDef> queues) {
    public Vhost {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(topology, "topology");
        queues = Map.copyOf(queues);
    }

    public static Vhost create(String name) {
        return new Vhost(name, Topology.standard(), Map.of());
    }

    public Optional<QueueDef> queue(String queue) {
        return Optional.ofNullable(queues.get(queue));
    }
}
