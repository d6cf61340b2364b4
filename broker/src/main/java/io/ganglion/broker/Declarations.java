package io.ganglion.broker;

import static io.ganglion.broker.Failures.done;
import static io.ganglion.broker.Failures.failed;
import static io.ganglion.broker.Failures.failure;

import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BindingChange;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.QueueDeclared;
import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.ObjectId;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import io.ganglion.metadata.Vhost;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import io.ganglion.queues.routing.HeadersMatcher;
import io.ganglion.queues.routing.ResourceName;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Exchange, queue and binding declarations and deletions: each checked against the metadata image, then proposed to
 * the metadata log. A replicated queue's declare-ok waits for its first epoch to activate.
 */
final class Declarations {
    private static final SecureRandom RANDOM = new SecureRandom();

    private static final long ACTIVATION_WAIT_MS = 10_000;

    /**
     * The queue arguments kept in the queue's definition, which a redeclaration must repeat to be equivalent
     * ({@code x-queue-type} is compared as the type, absent meaning classic).
     */
    private static final Set<String> QUEUE_ARGUMENTS_COMPARED = Set.of(
            "x-queue-type",
            "x-queue-mode",
            "x-single-active-consumer",
            "x-message-ttl",
            "x-expires",
            "x-max-length",
            "x-max-length-bytes",
            "x-dead-letter-exchange",
            "x-dead-letter-routing-key",
            "x-max-priority",
            "x-overflow",
            "x-delivery-limit",
            "x-dead-letter-strategy",
            "x-quorum-initial-group-size",
            "x-copies",
            "x-durability",
            "x-queue-leader-locator",
            "x-initial-cluster-size",
            "x-max-age",
            "x-stream-max-segment-size-bytes");

    private final QueueDirectory directory;
    private final QueueAccess access;
    private final Membership membership;
    /** Replicated queues whose declare-ok waits for their first activation, by object. */
    private final Map<ObjectId, List<CompletableFuture<Void>>> activations = new ConcurrentHashMap<>();

    private volatile int clusterSize = 1;

    Declarations(QueueDirectory directory, QueueAccess access, Membership membership) {
        this.directory = directory;
        this.access = access;
        this.membership = membership;
    }

    /** The brokers of the cluster, the bound of a replicated queue's copies. */
    void clusterSize(int clusterSize) {
        this.clusterSize = clusterSize;
    }

    /** {@code exchange.declare} in {@code vhost}; its {@code nowait} is the channel's concern, not read here. */
    CompletionStage<Void> declareExchange(String vhost, ExchangeMethod.Declare declare) {
        return membership.freshOnMiss(() -> {
            Vhost current = directory.vhost(vhost);
            if (declare.exchange().equals(Exchange.DEFAULT)) {
                return failed(ReplyCode.ACCESS_REFUSED, "operation not permitted on the default exchange");
            }
            if (declare.passive()) {
                if (current.topology().exchange(declare.exchange()).isEmpty()) {
                    return failed(ReplyCode.NOT_FOUND, "no " + ResourceName.exchange(vhost, declare.exchange()));
                }
                return done();
            }
            Optional<ExchangeType> exchangeType = ExchangeType.parse(declare.type());
            if (exchangeType.isEmpty()) {
                return failed(ReplyCode.COMMAND_INVALID, "unknown exchange type '" + declare.type() + "'");
            }
            Map<String, Object> args = new HashMap<>();
            Object alternate = FieldTables.toPlain(declare.arguments()).get("alternate-exchange");
            if (alternate != null) {
                args.put("alternate-exchange", alternate);
            }
            Exchange declared = new Exchange(
                    declare.exchange(),
                    exchangeType.get(),
                    declare.durable(),
                    declare.autoDelete(),
                    declare.internal(),
                    args);
            return directory
                    .propose(new MetadataCommand.DeclareExchange(vhost, declared))
                    .thenApply(image -> null);
        });
    }

    CompletionStage<Void> deleteExchange(String vhost, String exchange, boolean ifUnused) {
        directory.vhost(vhost);
        return directory
                .propose(new MetadataCommand.DeleteExchange(vhost, exchange, ifUnused))
                .thenApply(image -> null);
    }

    CompletionStage<Void> bindExchange(String vhost, BindingChange change) {
        directory.vhost(vhost);
        return bind(vhost, change, Destination.exchange(change.destination()));
    }

    CompletionStage<Void> bindQueue(String vhost, BindingChange change, String connectionId) {
        Vhost current = directory.vhost(vhost);
        current.queue(change.destination()).ifPresent(def -> QueueDirectory.checkExclusive(def, vhost, connectionId));
        return bind(vhost, change, Destination.queue(change.destination()));
    }

    private CompletionStage<Void> bind(String vhost, BindingChange change, Destination destination) {
        Binding binding = binding(change.source(), destination, change.routingKey(), change.arguments());
        return directory
                .propose(
                        change.bind()
                                ? new MetadataCommand.Bind(vhost, binding)
                                : new MetadataCommand.Unbind(vhost, binding))
                .thenApply(image -> null);
    }

    private static Binding binding(String source, Destination destination, String routingKey, FieldTable arguments) {
        Map<String, Object> args = FieldTables.toPlain(arguments);
        if (!HeadersMatcher.validMatchMode(args)) {
            throw failure(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid x-match field value " + args.get("x-match")
                            + "; expected all, any, all-with-x, or any-with-x");
        }
        return new Binding(source, destination, routingKey, args);
    }

    /** {@code queue.declare} in {@code vhost} for connection {@code connectionId}; {@code nowait} is not read here. */
    CompletionStage<QueueDeclared> declareQueue(String vhost, QueueMethod.Declare declare, String connectionId) {
        return membership.freshOnMiss(() -> declareQueueNow(vhost, declare, connectionId));
    }

    private CompletionStage<QueueDeclared> declareQueueNow(
            String vhost, QueueMethod.Declare declare, String connectionId) {
        Vhost current = directory.vhost(vhost);
        if (declare.passive()) {
            QueueDef def = current.queue(declare.queue())
                    .orElseThrow(
                            () -> failure(ReplyCode.NOT_FOUND, "no " + ResourceName.queue(vhost, declare.queue())));
            QueueDirectory.checkExclusive(def, vhost, connectionId);
            return access.counts(vhost, def);
        }
        String name = declare.queue().isEmpty() ? serverName() : declare.queue();
        QueueArguments.check(declare.arguments(), name, vhost);
        Map<String, Object> args = FieldTables.toPlain(declare.arguments());
        QueueType type = queueType(args, name, vhost);
        if (type == QueueType.STREAM) {
            StreamArguments.check(args, name, vhost);
        }
        if (current.queue(name).isEmpty()) {
            QueueArguments.refuseUnenforced(args, name, vhost); // a redeclare answers as to its equivalence first
        }
        boolean replicate = membership.replicates()
                && (type == QueueType.QUORUM || type == QueueType.STREAM || args.containsKey("x-copies"));
        if ((replicate || type == QueueType.STREAM)
                && (!declare.durable() || declare.exclusive() || declare.autoDelete())) {
            return failed(
                    ReplyCode.PRECONDITION_FAILED,
                    "invalid property '"
                            + (!declare.durable() ? "non-durable" : declare.exclusive() ? "exclusive" : "auto-delete")
                            + "' for " + ResourceName.queue(vhost, name));
        }
        Map<String, Object> compared = new HashMap<>();
        args.forEach((key, value) -> {
            if (QUEUE_ARGUMENTS_COMPARED.contains(key)) {
                compared.put(key, value);
            }
        });
        long objectId = current.queue(name).map(QueueDef::objectId).orElseGet(Declarations::newObjectId);
        QueueDef def = replicate
                ? new QueueDef(
                        name,
                        objectId,
                        type,
                        declare.durable(),
                        "",
                        declare.autoDelete(),
                        compared,
                        firstOwner(args, name, vhost),
                        copies(args, name, vhost),
                        durability(args, name, vhost))
                : new QueueDef(
                        name,
                        objectId,
                        type,
                        declare.durable(),
                        declare.exclusive() ? connectionId : "",
                        declare.autoDelete(),
                        compared,
                        directory.self());
        return directory.propose(new MetadataCommand.DeclareQueue(vhost, def)).thenCompose(image -> {
            QueueDef declared = image.vhost(vhost).flatMap(v -> v.queue(name)).orElseThrow();
            if (declared.replicated()) {
                // declare-ok once the declare.queue() serves: its first epoch activated (or after a bound, if recovery
                // waits)
                return awaitActive(vhost, declared).thenCompose(ignored -> access.counts(vhost, declared));
            }
            return access.counts(vhost, declared);
        });
    }

    CompletionStage<Long> deleteQueue(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId) {
        Vhost current = directory.vhost(vhost);
        if (current.queue(queue).isEmpty()) {
            return CompletableFuture.completedFuture(0L); // RabbitMQ: deleting a missing queue succeeds
        }
        return access.checkDeletable(vhost, queue, ifUnused, ifEmpty, connectionId)
                .thenCompose(count -> directory
                        .propose(new MetadataCommand.DeleteQueue(vhost, queue))
                        .thenApply(image -> count));
    }

    /** A connection closed: the queues exclusive to it are deleted. */
    void connectionClosed(String connectionId) {
        MetadataImage image = directory.image();
        for (Vhost vhost : image.vhosts().values()) {
            for (QueueDef queue : vhost.queues().values()) {
                if (queue.exclusiveOwner().equals(connectionId)) {
                    directory.log().propose(new MetadataCommand.DeleteQueue(vhost.name(), queue.name()));
                }
            }
        }
    }

    /** Copies of a replicated queue: x-copies, x-quorum-initial-group-size, or min(3, brokers). */
    private int copies(Map<String, Object> args, String name, String vhost) {
        Object given = args.getOrDefault(
                "x-copies", args.getOrDefault("x-quorum-initial-group-size", args.get("x-initial-cluster-size")));
        if (given == null) {
            return Math.min(3, clusterSize);
        }
        if (given instanceof Number number && number.longValue() >= 1 && number.longValue() <= clusterSize) {
            return number.intValue();
        }
        throw invalidArg(
                "x-copies",
                vhost,
                name,
                given + " is not a number of copies between 1 and the cluster's " + clusterSize + " brokers");
    }

    /**
     * The broker placement prefers as a new replicated queue's first owner, by x-queue-leader-locator as RabbitMQ
     * names it: {@code client-local} (the default) is this broker, the one the client declared through, so its
     * publishes and deliveries need no hop to another broker; {@code balanced} is none (the least loaded broker).
     */
    private String firstOwner(Map<String, Object> args, String name, String vhost) {
        Object given = args.getOrDefault("x-queue-leader-locator", "client-local");
        return switch (String.valueOf(given)) {
            case "client-local" -> directory.self();
            case "balanced" -> "";
            default ->
                throw invalidArg(
                        "x-queue-leader-locator", vhost, name, "'" + given + "', expected client-local or balanced");
        };
    }

    /** Durability of a replicated queue: x-durability, or majority_durable. */
    private static DurabilityMode durability(Map<String, Object> args, String name, String vhost) {
        Object given = args.get("x-durability");
        if (given == null) {
            return DurabilityMode.MAJORITY_DURABLE;
        }
        for (DurabilityMode mode : DurabilityMode.values()) {
            if (mode.settingName().equals(String.valueOf(given))) {
                return mode;
            }
        }
        throw invalidArg(
                "x-durability",
                vhost,
                name,
                "'" + given + "', expected owner_durable, majority_durable or all_durable");
    }

    private static QueueType queueType(Map<String, Object> args, String name, String vhost) {
        Object type = args.get("x-queue-type");
        if (type == null) {
            return QueueType.CLASSIC;
        }
        return QueueType.parse(String.valueOf(type))
                .orElseThrow(() -> invalidArg(
                        "x-queue-type",
                        vhost,
                        name,
                        "unsupported queue type '" + type + "', expected classic, quorum or stream"));
    }

    /** RabbitMQ's refusal of a queue argument's value: {@code 406 PRECONDITION_FAILED}, naming the argument. */
    private static BrokerFailure invalidArg(String argument, String vhost, String queue, String reason) {
        return failure(
                ReplyCode.PRECONDITION_FAILED,
                "invalid arg '" + argument + "' for " + ResourceName.queue(vhost, queue) + ": " + reason);
    }

    /** Completes once a replicated queue has an activated owner, or after {@value #ACTIVATION_WAIT_MS} ms. */
    private CompletableFuture<Void> awaitActive(String vhost, QueueDef def) {
        CompletableFuture<Void> active = new CompletableFuture<>();
        ObjectId object = ObjectId.of(vhost, def.name());
        activations.computeIfAbsent(object, o -> new CopyOnWriteArrayList<>()).add(active);
        checkActivations(directory.image());
        return active.completeOnTimeout(null, ACTIVATION_WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** A new image: the declarations waiting for a queue that is active in it (or gone from it) complete. */
    void checkActivations(MetadataImage image) {
        activations.entrySet().removeIf(entry -> {
            boolean activeNow = image.coordination()
                    .object(entry.getKey())
                    .flatMap(AcceptedHistory::validate)
                    .isPresent();
            boolean gone = image.coordination().object(entry.getKey()).isEmpty();
            if (activeNow || gone) {
                entry.getValue().forEach(future -> future.complete(null));
                return true;
            }
            entry.getValue().removeIf(CompletableFuture::isDone);
            return entry.getValue().isEmpty();
        });
    }

    private static String serverName() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return "amq.gen-" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static long newObjectId() {
        long id;
        do {
            id = RANDOM.nextLong() & Long.MAX_VALUE;
        } while (id == 0);
        return id;
    }
}
