package io.ganglion.queues.routing;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The exchanges, queues and bindings of one virtual host, and routing over them. Immutable: every change returns a new
 * topology, which the broker publishes to its threads as a value.
 *
 * <p>A new virtual host has the default exchange and {@code amq.direct}, {@code amq.fanout}, {@code amq.topic}, {@code
 * amq.headers} and {@code amq.match}, all durable, as RabbitMQ has.
 */
public final class Topology {
    private final Map<String, Exchange> exchanges;
    private final Set<String> queues;
    private final Map<String, List<Binding>> bindingsBySource;

    private Topology(Map<String, Exchange> exchanges, Set<String> queues, Map<String, List<Binding>> bindingsBySource) {
        this.exchanges = exchanges;
        this.queues = queues;
        this.bindingsBySource = bindingsBySource;
    }

    public static Topology standard() {
        Map<String, Exchange> exchanges = new HashMap<>();
        exchanges.put(Exchange.DEFAULT, builtIn(Exchange.DEFAULT, ExchangeType.DIRECT));
        exchanges.put("amq.direct", builtIn("amq.direct", ExchangeType.DIRECT));
        exchanges.put("amq.fanout", builtIn("amq.fanout", ExchangeType.FANOUT));
        exchanges.put("amq.topic", builtIn("amq.topic", ExchangeType.TOPIC));
        exchanges.put("amq.headers", builtIn("amq.headers", ExchangeType.HEADERS));
        exchanges.put("amq.match", builtIn("amq.match", ExchangeType.HEADERS));
        return new Topology(Map.copyOf(exchanges), Set.of(), Map.of());
    }

    private static Exchange builtIn(String name, ExchangeType type) {
        return new Exchange(name, type, true, false, false, Map.of());
    }

    public Optional<Exchange> exchange(String name) {
        return Optional.ofNullable(exchanges.get(name));
    }

    public Set<String> exchangeNames() {
        return Collections.unmodifiableSet(exchanges.keySet());
    }

    public boolean hasQueue(String name) {
        return queues.contains(name);
    }

    public Set<String> queues() {
        return queues;
    }

    public List<Binding> bindingsFrom(String exchange) {
        return bindingsBySource.getOrDefault(exchange, List.of());
    }

    /** Every binding whose destination is {@code destination}. */
    public List<Binding> bindingsTo(Destination destination) {
        List<Binding> to = new ArrayList<>();
        for (List<Binding> bindings : bindingsBySource.values()) {
            for (Binding binding : bindings) {
                if (binding.destination().equals(destination)) {
                    to.add(binding);
                }
            }
        }
        return to;
    }

    public Topology withExchange(Exchange exchange) {
        Map<String, Exchange> next = new HashMap<>(exchanges);
        next.put(exchange.name(), exchange);
        return new Topology(Map.copyOf(next), queues, bindingsBySource);
    }

    /** Removes the exchange and every binding from or to it. */
    public Topology withoutExchange(String name) {
        Map<String, Exchange> next = new HashMap<>(exchanges);
        next.remove(name);
        return new Topology(Map.copyOf(next), queues, bindingsWithout(Destination.exchange(name), name));
    }

    public Topology withQueue(String name) {
        Set<String> next = new HashSet<>(queues);
        next.add(name);
        return new Topology(exchanges, Set.copyOf(next), bindingsBySource);
    }

    /** Removes the queue and every binding to it. */
    public Topology withoutQueue(String name) {
        Set<String> next = new HashSet<>(queues);
        next.remove(name);
        return new Topology(exchanges, Set.copyOf(next), bindingsWithout(Destination.queue(name), null));
    }

    /** Adds a binding; binding twice is one binding. */
    public Topology withBinding(Binding binding) {
        List<Binding> from = bindingsFrom(binding.source());
        for (Binding existing : from) {
            if (existing.sameAs(binding)) {
                return this;
            }
        }
        List<Binding> nextFrom = new ArrayList<>(from);
        nextFrom.add(binding);
        Map<String, List<Binding>> next = new HashMap<>(bindingsBySource);
        next.put(binding.source(), List.copyOf(nextFrom));
        return new Topology(exchanges, queues, Map.copyOf(next));
    }

    /** Removes a binding; removing one that does not exist changes nothing. */
    public Topology withoutBinding(Binding binding) {
        List<Binding> nextFrom = new ArrayList<>(bindingsFrom(binding.source()));
        if (!nextFrom.removeIf(existing -> existing.sameAs(binding))) {
            return this;
        }
        Map<String, List<Binding>> next = new HashMap<>(bindingsBySource);
        if (nextFrom.isEmpty()) {
            next.remove(binding.source());
        } else {
            next.put(binding.source(), List.copyOf(nextFrom));
        }
        return new Topology(exchanges, queues, Map.copyOf(next));
    }

    private Map<String, List<Binding>> bindingsWithout(Destination destination, String source) {
        Map<String, List<Binding>> next = new HashMap<>();
        for (Map.Entry<String, List<Binding>> entry : bindingsBySource.entrySet()) {
            if (entry.getKey().equals(source)) {
                continue;
            }
            List<Binding> kept = entry.getValue().stream()
                    .filter(binding -> !binding.destination().equals(destination))
                    .toList();
            if (!kept.isEmpty()) {
                next.put(entry.getKey(), kept);
            }
        }
        return Map.copyOf(next);
    }

    /**
     * The queues a message published to {@code exchange} with {@code routingKey} and {@code headers} reaches, following
     * exchange-to-exchange bindings (each exchange visited once, so cycles end). Empty for an unknown exchange.
     */
    public Set<String> route(String exchange, String routingKey, Map<String, Object> headers) {
        Set<String> reached = new LinkedHashSet<>();
        if (exchange.equals(Exchange.DEFAULT)) {
            if (queues.contains(routingKey)) {
                reached.add(routingKey);
            }
            return reached;
        }
        // the exchanges still to visit, made only when a binding leads to another exchange (every publish routes, and
        // most reach queues straight from their exchange)
        ArrayDeque<String> pending = null;
        Set<String> visited = null;
        String name = exchange;
        while (name != null) {
            Exchange current = exchanges.get(name);
            if (current != null && (visited == null || visited.add(name))) {
                for (Binding binding : bindingsFrom(name)) {
                    if (!matches(current.type(), binding, routingKey, headers)) {
                        continue;
                    }
                    switch (binding.destination().kind()) {
                        case QUEUE -> {
                            if (queues.contains(binding.destination().name())) {
                                reached.add(binding.destination().name());
                            }
                        }
                        case EXCHANGE -> {
                            if (pending == null) {
                                pending = new ArrayDeque<>();
                                visited = new HashSet<>(Set.of(exchange)); // only the first exchange gets here
                            }
                            pending.add(binding.destination().name());
                        }
                    }
                }
            }
            name = pending == null ? null : pending.poll();
        }
        return reached;
    }

    private static boolean matches(ExchangeType type, Binding binding, String routingKey, Map<String, Object> headers) {
        return switch (type) {
            case DIRECT -> binding.routingKey().equals(routingKey);
            case FANOUT -> true;
            case TOPIC -> TopicMatcher.matches(binding.routingKey(), routingKey);
            case HEADERS -> HeadersMatcher.matches(binding.arguments(), headers);
        };
    }
}
