package io.ganglion.metadata;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.ObjectId;
import io.ganglion.metadata.MetadataCommand.Bind;
import io.ganglion.metadata.MetadataCommand.Bootstrap;
import io.ganglion.metadata.MetadataCommand.Coordination;
import io.ganglion.metadata.MetadataCommand.DeclareExchange;
import io.ganglion.metadata.MetadataCommand.DeclareQueue;
import io.ganglion.metadata.MetadataCommand.DeleteExchange;
import io.ganglion.metadata.MetadataCommand.DeleteQueue;
import io.ganglion.metadata.MetadataCommand.DeleteUnusedQueue;
import io.ganglion.metadata.MetadataCommand.DeleteUser;
import io.ganglion.metadata.MetadataCommand.DeleteVhost;
import io.ganglion.metadata.MetadataCommand.Fenced;
import io.ganglion.metadata.MetadataCommand.PutUser;
import io.ganglion.metadata.MetadataCommand.PutVhost;
import io.ganglion.metadata.MetadataCommand.SetDraining;
import io.ganglion.metadata.MetadataCommand.Unbind;
import io.ganglion.metadata.Rejection.Kind;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Equivalence;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ResourceName;
import io.ganglion.queues.routing.Topology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The metadata every broker holds, applied from the metadata log. Immutable: {@link #apply} returns the next image, so a
 * broker publishes each image to its threads as a value.
 *
 * <p>{@link #apply} is deterministic and total: a command that does not fit is rejected with a reason and changes
 * nothing. The broker checks what it can before proposing (to answer with the right reply code at once), and the image
 * checks again, because another broker's command may have come first.
 *
 * @param appliedIndex how many commands (accepted or rejected) this image has applied since the empty image
 * @param coordination the coordination part: objects and their accepted histories, the committed live set and the
 *     runtime settings, changed by {@link Coordination} commands only
 */
public record MetadataImage(
        long appliedIndex,
        Map<String, Vhost> vhosts,
        Map<String, User> users,
        CoordinationImage coordination,
        java.util.SortedSet<String> drainRequested) {

    public MetadataImage {
        vhosts = Map.copyOf(vhosts);
        users = Map.copyOf(users);
        Objects.requireNonNull(coordination, "coordination");
        drainRequested = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(drainRequested));
    }

    public static MetadataImage empty() {
        return new MetadataImage(0, Map.of(), Map.of(), CoordinationImage.empty(), new java.util.TreeSet<>());
    }

    /** This image with another coordination part (how a snapshot is rebuilt). */
    public MetadataImage withCoordination(long index, CoordinationImage next) {
        return new MetadataImage(index, vhosts, users, next, drainRequested);
    }

    public Optional<Vhost> vhost(String name) {
        return Optional.ofNullable(vhosts.get(name));
    }

    public Optional<User> user(String name) {
        return Optional.ofNullable(users.get(name));
    }

    /** The result of applying a command. */
    public record Applied(MetadataImage image, Optional<Rejection> rejection) {
        public boolean accepted() {
            return rejection.isEmpty();
        }
    }

    /**
     * {@code command} applied from an entry that a replicated log appended in term {@code entryTerm}: a {@link Fenced}
     * command of another term is rejected (the leadership that proposed it had ended when the entry was appended, by
     * another leader), anything else is {@link #apply(MetadataCommand)}. Every server sees the same entry with the same
     * term, so every server decides alike.
     */
    public Applied apply(MetadataCommand command, long entryTerm) {
        if (command instanceof Fenced fenced && fenced.leaderTerm() != entryTerm) {
            return rejected(
                    Kind.PRECONDITION_FAILED,
                    "proposed by the metadata leader of term " + fenced.leaderTerm() + " and appended in term "
                            + entryTerm + ": that leadership had ended");
        }
        return apply(command);
    }

    public Applied apply(MetadataCommand command) {
        return switch (command) {
            case PutVhost put ->
                vhosts.containsKey(put.name())
                        ? accepted(vhosts, users)
                        : accepted(with(vhosts, put.name(), Vhost.create(put.name())), users);
            case DeleteVhost delete ->
                vhosts.containsKey(delete.name())
                        ? accepted(without(vhosts, delete.name()), users)
                        : rejected(Kind.NOT_FOUND, "no vhost '" + delete.name() + "'");
            case PutUser put -> accepted(vhosts, with(users, put.user().name(), put.user()));
            case DeleteUser delete ->
                users.containsKey(delete.name())
                        ? accepted(vhosts, without(users, delete.name()))
                        : rejected(Kind.NOT_FOUND, "no user '" + delete.name() + "'");
            case DeclareExchange declare -> declareExchange(declare);
            case DeleteExchange delete -> deleteExchange(delete);
            case DeclareQueue declare -> declareQueue(declare);
            case DeleteQueue delete -> deleteQueue(delete);
            case DeleteUnusedQueue delete ->
                Optional.ofNullable(vhosts.get(delete.vhost()))
                                .map(v -> v.queues().get(delete.name()))
                                .filter(q -> q.objectId() == delete.objectId())
                                .isPresent()
                        ? deleteQueue(new DeleteQueue(delete.vhost(), delete.name()))
                        : accepted(vhosts, users);
            case Bind bind -> bind(bind.vhost(), bind.binding(), true);
            case Unbind unbind -> bind(unbind.vhost(), unbind.binding(), false);
            case Coordination c -> applyCoordination(c.command());
            case Fenced f -> apply(f.command()); // the term is checked by the log that knows it
            case Bootstrap b ->
                vhosts.isEmpty() && users.isEmpty()
                        ? accepted(
                                with(vhosts, "/", Vhost.create("/")),
                                with(users, b.user().name(), b.user()))
                        : accepted(vhosts, users);
            case SetDraining d -> {
                java.util.TreeSet<String> next = new java.util.TreeSet<>(drainRequested);
                if (d.draining()) {
                    next.add(d.node());
                } else {
                    next.remove(d.node());
                }
                yield new Applied(
                        new MetadataImage(appliedIndex + 1, vhosts, users, coordination, next), Optional.empty());
            }
        };
    }

    private Applied applyCoordination(CoordinationCommand command) {
        CoordinationImage.Applied applied = coordination.apply(command);
        if (applied.rejection().isPresent()) {
            return rejected(Kind.PRECONDITION_FAILED, applied.rejection().get());
        }
        return new Applied(withCoordination(appliedIndex + 1, applied.image()), Optional.empty());
    }

    private Applied declareExchange(DeclareExchange declare) {
        Vhost vhost = vhosts.get(declare.vhost());
        if (vhost == null) {
            return noVhost(declare.vhost());
        }
        Exchange exchange = declare.exchange();
        if (exchange.name().equals(Exchange.DEFAULT)) {
            return rejected(Kind.ACCESS_REFUSED, "operation not permitted on the default exchange");
        }
        Optional<Exchange> existing = vhost.topology().exchange(exchange.name());
        if (existing.isPresent()) {
            return existing.get()
                    .difference(exchange)
                    .map(d -> rejected(Kind.PRECONDITION_FAILED, d.text("exchange", exchange.name(), declare.vhost())))
                    .orElseGet(() -> accepted(vhosts, users));
        }
        if (Exchange.reservedName(exchange.name())) {
            return rejected(
                    Kind.ACCESS_REFUSED, "exchange name '" + exchange.name() + "' contains reserved prefix 'amq.*'");
        }
        return withVhost(new Vhost(vhost.name(), vhost.topology().withExchange(exchange), vhost.queues()));
    }

    private Applied deleteExchange(DeleteExchange delete) {
        Vhost vhost = vhosts.get(delete.vhost());
        if (vhost == null) {
            return noVhost(delete.vhost());
        }
        if (delete.name().isEmpty()) {
            return rejected(Kind.ACCESS_REFUSED, "operation not permitted on the default exchange");
        }
        if (Exchange.reservedName(delete.name())) {
            return rejected(
                    Kind.ACCESS_REFUSED,
                    "deletion of system " + ResourceName.exchange(delete.vhost(), delete.name()) + " not allowed");
        }
        if (vhost.topology().exchange(delete.name()).isEmpty()) {
            return accepted(vhosts, users); // deleting what is not there succeeds, as in RabbitMQ since 3.2
        }
        if (delete.ifUnused() && !vhost.topology().bindingsFrom(delete.name()).isEmpty()) {
            return rejected(Kind.PRECONDITION_FAILED, ResourceName.exchange(delete.vhost(), delete.name()) + " in use");
        }
        Topology topology =
                dropUnusedAutoDeleteExchanges(vhost.topology(), vhost.topology().withoutExchange(delete.name()));
        return withVhost(new Vhost(vhost.name(), topology, vhost.queues()));
    }

    private Applied declareQueue(DeclareQueue declare) {
        Vhost vhost = vhosts.get(declare.vhost());
        if (vhost == null) {
            return noVhost(declare.vhost());
        }
        QueueDef queue = declare.queue();
        Optional<QueueDef> existing = vhost.queue(queue.name());
        if (existing.isPresent()) {
            // RabbitMQ's order: durable and auto_delete, then the exclusive owner (exactly the declaring connection,
            // or none for none), then the arguments
            QueueDef current = existing.get();
            Optional<Equivalence.Difference> flags = Equivalence.field("durable", current.durable(), queue.durable())
                    .or(() -> Equivalence.field("auto_delete", current.autoDelete(), queue.autoDelete()));
            if (flags.isEmpty() && !current.exclusiveOwner().equals(queue.exclusiveOwner())) {
                return rejected(
                        Kind.RESOURCE_LOCKED,
                        "cannot obtain exclusive access to locked " + ResourceName.queue(declare.vhost(), queue.name())
                                + ". It could be originally declared on another connection or the"
                                + " exclusive property value does not match that of the original declaration.");
            }
            return flags.or(() -> current.difference(queue))
                    .map(d -> rejected(Kind.PRECONDITION_FAILED, d.text("queue", queue.name(), declare.vhost())))
                    .orElseGet(() -> accepted(vhosts, users));
        }
        if (queue.name().startsWith("amq.") && !queue.name().startsWith("amq.gen-")) {
            return rejected(Kind.ACCESS_REFUSED, "queue name '" + queue.name() + "' contains reserved prefix 'amq.*'");
        }
        Map<String, QueueDef> queues = with(vhost.queues(), queue.name(), queue);
        Vhost next = new Vhost(vhost.name(), vhost.topology().withQueue(queue.name()), queues);
        if (!queue.replicated()) {
            return withVhost(next);
        }
        // a replicated queue is a coordination object too, created in the same command: the controller places it
        CoordinationImage.Applied created =
                coordination.apply(new CoordinationCommand.CreateObject(queue.spec(declare.vhost())));
        if (created.rejection().isPresent()) {
            return rejected(Kind.PRECONDITION_FAILED, created.rejection().get());
        }
        return new Applied(
                new MetadataImage(
                        appliedIndex + 1, with(vhosts, next.name(), next), users, created.image(), drainRequested),
                Optional.empty());
    }

    private Applied deleteQueue(DeleteQueue delete) {
        Vhost vhost = vhosts.get(delete.vhost());
        if (vhost == null) {
            return noVhost(delete.vhost());
        }
        if (!vhost.queues().containsKey(delete.name())) {
            return accepted(vhosts, users); // deleting what is not there succeeds, as in RabbitMQ since 3.2
        }
        Topology topology = vhost.topology().withoutQueue(delete.name());
        topology = dropUnusedAutoDeleteExchanges(vhost.topology(), topology);
        Vhost next = new Vhost(vhost.name(), topology, without(vhost.queues(), delete.name()));
        ObjectId object = ObjectId.of(delete.vhost(), delete.name());
        if (coordination.object(object).isEmpty()) {
            return withVhost(next);
        }
        CoordinationImage.Applied deleted = coordination.apply(new CoordinationCommand.DeleteObject(object));
        return new Applied(
                new MetadataImage(
                        appliedIndex + 1, with(vhosts, next.name(), next), users, deleted.image(), drainRequested),
                Optional.empty());
    }

    private Applied bind(String vhostName, Binding binding, boolean add) {
        Vhost vhost = vhosts.get(vhostName);
        if (vhost == null) {
            return noVhost(vhostName);
        }
        Topology topology = vhost.topology();
        if (binding.source().isEmpty()) {
            return rejected(Kind.ACCESS_REFUSED, "operation not permitted on the default exchange");
        }
        Destination destination = binding.destination();
        boolean destinationExists = destination.kind() == Destination.Kind.QUEUE
                ? topology.hasQueue(destination.name())
                : topology.exchange(destination.name()).isPresent();
        if (!add && (topology.exchange(binding.source()).isEmpty() || !destinationExists)) {
            return accepted(vhosts, users); // unbinding what is not there succeeds, as in RabbitMQ since 3.2
        }
        if (topology.exchange(binding.source()).isEmpty()) {
            return rejected(Kind.NOT_FOUND, "no " + ResourceName.exchange(vhostName, binding.source()));
        }
        if (!destinationExists) {
            String what = destination.kind() == Destination.Kind.QUEUE ? "queue" : "exchange";
            return rejected(Kind.NOT_FOUND, "no " + ResourceName.of(what, vhostName, destination.name()));
        }
        Topology next;
        if (add) {
            next = topology.withBinding(binding);
        } else {
            next = dropUnusedAutoDeleteExchanges(topology, topology.withoutBinding(binding));
        }
        return withVhost(new Vhost(vhost.name(), next, vhost.queues()));
    }

    /**
     * An auto-delete exchange goes when its last binding from it goes: unbound, its queue or destination exchange
     * deleted, or that destination itself an auto-delete exchange that went. Repeated until none goes, so chains and
     * loops of exchange-to-exchange bindings go whole.
     */
    private static Topology dropUnusedAutoDeleteExchanges(Topology before, Topology after) {
        Topology result = after;
        boolean dropped = true;
        while (dropped) {
            dropped = false;
            for (String name : before.exchangeNames()) {
                Optional<Exchange> exchange = result.exchange(name);
                if (exchange.isPresent()
                        && exchange.get().autoDelete()
                        && !before.bindingsFrom(name).isEmpty()
                        && result.bindingsFrom(name).isEmpty()) {
                    result = result.withoutExchange(name);
                    dropped = true;
                }
            }
        }
        return result;
    }

    /**
     * Commands that rebuild this image from an empty one, {@link #appliedIndex} aside: how a log is compacted. Users,
     * then each vhost with its exchanges, queues and bindings, then the coordination part (see {@link
     * #coordinationCommands}).
     */
    public List<MetadataCommand> asCommands() {
        List<MetadataCommand> commands = new ArrayList<>(topologyCommands());
        commands.addAll(coordinationCommands());
        return commands;
    }

    /** The users, vhosts, exchanges, queues and bindings part of {@link #asCommands}, in a deterministic order. */
    List<MetadataCommand> topologyCommands() {
        List<MetadataCommand> commands = new ArrayList<>();
        new TreeMap<>(users).values().forEach(user -> commands.add(new PutUser(user)));
        drainRequested.forEach(node -> commands.add(new SetDraining(node, true)));
        for (Vhost vhost : new TreeMap<>(vhosts).values()) {
            commands.add(new PutVhost(vhost.name()));
            Topology standard = Topology.standard();
            for (String name : new java.util.TreeSet<>(vhost.topology().exchangeNames())) {
                if (standard.exchange(name).isEmpty()) {
                    commands.add(new DeclareExchange(
                            vhost.name(), vhost.topology().exchange(name).orElseThrow()));
                }
            }
            new TreeMap<>(vhost.queues())
                    .values()
                    .forEach(queue -> commands.add(new DeclareQueue(vhost.name(), queue)));
            for (String name : new java.util.TreeSet<>(vhost.topology().exchangeNames())) {
                vhost.topology().bindingsFrom(name).forEach(binding -> commands.add(new Bind(vhost.name(), binding)));
            }
        }
        return commands;
    }

    /**
     * The coordination part of {@link #asCommands}: the settings that differ from their defaults, the whole live set,
     * then every object's creation and the records of its accepted history. Replaying a history's records rebuilds the
     * same history, because {@link AcceptedHistory#append} records only what it accepted and is deterministic.
     */
    List<MetadataCommand> coordinationCommands() {
        List<MetadataCommand> commands = new ArrayList<>();
        Map<String, String> overrides = new TreeMap<>();
        coordination.settings().overrides().forEach((name, value) -> overrides.put(name, Long.toString(value)));
        if (!overrides.isEmpty()) {
            commands.add(new Coordination(new CoordinationCommand.SetSettings(overrides)));
        }
        if (!coordination.liveSet().nodes().isEmpty()) {
            commands.add(new Coordination(new CoordinationCommand.CommitLiveSet(
                    List.copyOf(coordination.liveSet().nodes().values()))));
        }
        for (AcceptedHistory history : coordination.objects().values()) {
            boolean declaredWithQueue = vhost(history.id().vhost())
                    .flatMap(v -> v.queue(history.id().name()))
                    .filter(QueueDef::replicated)
                    .isPresent();
            if (!declaredWithQueue) {
                commands.add(new Coordination(new CoordinationCommand.CreateObject(history.spec())));
            }
            for (HistoryRecord record : history.records()) {
                if (!(record instanceof HistoryRecord.Created)) {
                    commands.add(new Coordination(new CoordinationCommand.AppendHistory(history.id(), record)));
                }
            }
        }
        return commands;
    }

    private Applied withVhost(Vhost vhost) {
        return accepted(with(vhosts, vhost.name(), vhost), users);
    }

    private Applied accepted(Map<String, Vhost> nextVhosts, Map<String, User> nextUsers) {
        return new Applied(
                new MetadataImage(appliedIndex + 1, nextVhosts, nextUsers, coordination, drainRequested),
                Optional.empty());
    }

    private Applied rejected(Kind kind, String message) {
        return new Applied(
                new MetadataImage(appliedIndex + 1, vhosts, users, coordination, drainRequested),
                Optional.of(new Rejection(kind, message)));
    }

    private Applied noVhost(String name) {
        return rejected(Kind.NOT_FOUND, "no vhost '" + name + "'");
    }

    private static <V> Map<String, V> with(Map<String, V> map, String key, V value) {
        Map<String, V> next = new HashMap<>(map);
        next.put(key, value);
        return next;
    }

    private static <V> Map<String, V> without(Map<String, V> map, String key) {
        Map<String, V> next = new HashMap<>(map);
        next.remove(key);
        return next;
    }
}
