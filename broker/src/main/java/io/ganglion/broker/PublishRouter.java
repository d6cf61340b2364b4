package io.ganglion.broker;

import static io.ganglion.broker.Failures.failure;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.PublishOutcome;
import io.ganglion.coordination.NodeId;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.Vhost;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ResourceName;
import io.ganglion.queues.routing.Topology;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Routes a publish by exchange and routing key to its queues, and hands it to each where the queue is served now:
 * this broker's own queue on its shard, or the queue's home or owner over the peer link ({@link RemoteQueues}). A
 * publish to a replicated queue keeps its place behind the earlier publishes of the queue from this broker (their
 * the queue's lane in {@link ForwardingClient}) and survives a change of owner. Called on the publishing connection's thread.
 */
final class PublishRouter {
    private final QueueDirectory directory;
    private final QueueRegistry registry;
    private final Membership membership;

    PublishRouter(QueueDirectory directory, QueueRegistry registry, Membership membership) {
        this.directory = directory;
        this.registry = registry;
        this.membership = membership;
    }

    PublishOutcome publish(
            String vhost,
            String exchange,
            String routingKey,
            BasicProperties properties,
            ByteBuffer header,
            ByteBuf body) {
        Vhost current = directory.vhost(vhost);
        Set<String> queues = route(current, vhost, exchange, routingKey, properties);
        if (queues.isEmpty()) {
            return new PublishOutcome.Unroutable();
        }
        ByteBuffer payload =
                MessageRecord.encodeMessage(exchange, routingKey, SenderSelected.stored(properties, header), body);
        List<CompletableFuture<Void>> durable = new ArrayList<>(queues.size());
        for (String queue : queues) {
            CompletableFuture<Void> outcome =
                    publishTo(vhost, current.queue(queue).orElseThrow(), payload);
            if (outcome != null) {
                durable.add(outcome);
            }
        }
        CompletableFuture<Void> all = durable.size() == 1
                ? durable.get(0)
                : CompletableFuture.allOf(durable.toArray(CompletableFuture[]::new));
        return new PublishOutcome.Routed(all);
    }

    /**
     * The queues a publish goes to: by its exchange, else by the exchange's alternate exchange, with its routing key and
     * the CC and BCC keys of its headers; each queue once however many keys reach it.
     */
    private static Set<String> route(
            Vhost current, String vhost, String exchange, String routingKey, BasicProperties properties) {
        Optional<Exchange> target = current.topology().exchange(exchange);
        if (target.isEmpty()) {
            throw failure(ReplyCode.NOT_FOUND, "no " + ResourceName.exchange(vhost, exchange));
        }
        if (target.get().internal()) {
            throw failure(
                    ReplyCode.ACCESS_REFUSED, "cannot publish to internal " + ResourceName.exchange(vhost, exchange));
        }
        return route(current.topology(), target.get(), SenderSelected.routingKeys(routingKey, properties), properties);
    }

    /** The queues {@code keys} reach from {@code exchange}, else from its alternate exchange. */
    private static Set<String> route(
            Topology topology, Exchange exchange, List<String> keys, BasicProperties properties) {
        Map<String, Object> headers = properties.headers() == null ? Map.of() : withoutBcc(properties.headers());
        Set<String> queues = route(topology, exchange.name(), keys, headers);
        if (queues.isEmpty()) {
            Object alternate = exchange.arguments().get("alternate-exchange");
            if (alternate != null) {
                queues = route(topology, String.valueOf(alternate), keys, headers);
            }
        }
        return queues;
    }

    /**
     * Publishes a dead-lettered message from a queue of {@code vhost} to the queues its dead-letter exchange routes it
     * to, but those it would reach in a cycle ({@link DeadLettering.Republished#cycles}). Returns when all of them have
     * it durably, or at once when it reaches none: a dead-letter exchange that does not exist drops it, as in
     * RabbitMQ. With {@code mustRoute} (at-least-once) a message its exchange routes to no queue fails instead, to be
     * tried again. Any thread.
     */
    CompletableFuture<Void> deadLetter(String vhost, DeadLettering.Republished message, boolean mustRoute) {
        Optional<Vhost> current = directory.image().vhost(vhost);
        Optional<Exchange> exchange = current.flatMap(v -> v.topology().exchange(message.exchange()));
        Set<String> queues = exchange.isEmpty()
                ? Set.of()
                : route(current.get().topology(), exchange.get(), message.keys(), message.properties());
        if (queues.isEmpty()) {
            return mustRoute
                    ? CompletableFuture.failedFuture(new IllegalStateException(
                            "dead-letter exchange '" + message.exchange() + "' routes it to no queue"))
                    : CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<Void>> durable = new ArrayList<>(queues.size());
        for (String queue : queues) {
            Optional<QueueDef> def = current.get().queue(queue);
            if (def.isPresent() && !message.cycles(queue)) {
                CompletableFuture<Void> outcome = publishTo(vhost, def.get(), message.payload());
                if (outcome != null) {
                    durable.add(outcome);
                }
            }
        }
        return CompletableFuture.allOf(durable.toArray(CompletableFuture[]::new));
    }

    private static Set<String> route(
            Topology topology, String exchange, List<String> keys, Map<String, Object> headers) {
        if (keys.size() == 1) {
            return topology.route(exchange, keys.get(0), headers);
        }
        Set<String> queues = new LinkedHashSet<>();
        for (String key : keys) {
            queues.addAll(topology.route(exchange, key, headers));
        }
        return queues;
    }

    /** The headers a headers exchange matches: the message's as stored, so without BCC. */
    private static Map<String, Object> withoutBcc(FieldTable table) {
        Map<String, Object> headers = FieldTables.toPlain(table);
        if (headers.containsKey(SenderSelected.BCC)) {
            headers = new HashMap<>(headers);
            headers.remove(SenderSelected.BCC);
        }
        return headers;
    }

    /** Hands the publish to one queue; its outcome, or null for a classic queue deleted meanwhile. */
    private CompletableFuture<Void> publishTo(String vhost, QueueDef def, ByteBuffer payload) {
        Optional<String> home = directory.homeNow(vhost, def);
        String self = directory.self();
        if (home.isPresent() && !home.get().equals(self)) {
            return membership
                    .forwarding()
                    .publish(
                            new NodeId(home.get()),
                            vhost,
                            def.objectId(),
                            def.name(),
                            def.replicated(),
                            payload.duplicate());
        }
        LocalQueue replica = home.isPresent() ? registry.localQueue(def.objectId()) : null;
        if (replica == null && def.replicated()) {
            // recovering, or named its owner before its replica opened here: the publish waits for the owner (the
            // resender sends it) and is confirmed only once stored, never acked with no copy
            return membership
                    .forwarding()
                    .publish(new NodeId(self), vhost, def.objectId(), def.name(), true, payload.duplicate());
        }
        if (replica == null) {
            return null; // a classic queue deleted meanwhile: routed to nothing, as RabbitMQ
        }
        if (def.replicated()) {
            return publishToOwnReplica(vhost, def, replica, payload);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        ByteBuffer copy = payload.duplicate();
        replica.shard().execute(() -> replica.publish(copy, done));
        return done;
    }

    /** A publish to a replicated queue this broker owns (a replicated queue exists only in a cluster). */
    private CompletableFuture<Void> publishToOwnReplica(
            String vhost, QueueDef def, LocalQueue replica, ByteBuffer payload) {
        return membership
                .forwarding()
                .publishToOwnReplica(vhost, def.objectId(), def.name(), replica, payload.duplicate());
    }
}
