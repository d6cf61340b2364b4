package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.ReplyCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An in-memory {@link BrokerBackend} for tests: users, one or more vhosts, direct and fanout exchanges, queues with
 * offsets, consumers with prefetch. It records what the connection asked of it (settlements, cancels) and can hold
 * stages open so a test decides when (and how) they complete.
 *
 * <p>All methods are synchronized: the real-socket test calls it from Netty threads.
 */
final class FakeBroker implements BrokerBackend {
    static final ServerInfo INFO = new ServerInfo("Ganglion", "0.1.0", "Java", "test-cluster");

    /** A settlement the connection made. */
    record Settled(String queue, long[] offsets, Settlement settlement) {
        List<Long> offsetList() {
            List<Long> list = new ArrayList<>();
            for (long offset : offsets) {
                list.add(offset);
            }
            return list;
        }
    }

    record Cancelled(String queue, long channelId, String consumerTag) {}

    static final class Handle implements QueueHandle {
        private final String name;

        Handle(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String toString() {
            return "Handle[" + name + "]";
        }
    }

    /** A message as the broker's record keeps it: the content header as its payload octets. */
    private record Message(String exchange, String routingKey, ByteBuffer header, byte[] body) {}

    private record Stored(long offset, Message message, boolean redelivered) {}

    private static final class FakeConsumer {
        final String tag;
        final long channelId;
        final boolean noAck;
        final int prefetch;
        final DeliverySink sink;
        final Set<Long> unacked = new HashSet<>();

        FakeConsumer(String tag, long channelId, boolean noAck, int prefetch, DeliverySink sink) {
            this.tag = tag;
            this.channelId = channelId;
            this.noAck = noAck;
            this.prefetch = prefetch;
            this.sink = sink;
        }
    }

    private static final class Queue {
        final String name;
        final Handle handle;
        final String owner;
        final TreeMap<Long, Stored> ready = new TreeMap<>();
        final Map<Long, Stored> unacked = new HashMap<>();
        final Map<Long, FakeConsumer> deliveredTo = new HashMap<>();
        final List<FakeConsumer> consumers = new ArrayList<>();
        long nextOffset;

        Queue(String name, String owner) {
            this.name = name;
            this.handle = new Handle(name);
            this.owner = owner;
        }
    }

    private final Map<String, String> users = new HashMap<>(Map.of("guest", "guest"));
    private final Set<String> vhosts = new HashSet<>(Set.of("/"));
    private final Map<String, String> exchanges =
            new HashMap<>(Map.of("", "direct", "amq.direct", "direct", "amq.fanout", "fanout"));
    private final Map<String, List<String[]>> bindings = new HashMap<>();
    private final Map<String, Queue> queues = new LinkedHashMap<>();
    private int generated;

    final List<Settled> settled = new ArrayList<>();
    final List<Cancelled> cancelled = new ArrayList<>();
    final List<String> closedConnections = new ArrayList<>();
    /** Cancels and settlements in the order they were made: "cancel c1", "settle q REQUEUE [0, 1]". */
    final List<String> log = new ArrayList<>();

    final List<CompletableFuture<Void>> heldDurables = new ArrayList<>();
    final List<CompletableFuture<QueueHandle>> heldConsumes = new ArrayList<>();
    final List<CompletableFuture<QueueDeclared>> heldDeclares = new ArrayList<>();
    final Map<String, DeliverySink> sinks = new LinkedHashMap<>();
    final Map<String, Long> consumerChannels = new LinkedHashMap<>();
    final Map<String, Integer> prefetches = new LinkedHashMap<>();
    /** Every body handed out in a delivery, to check that the connection released each. */
    final List<ByteBuf> deliveryBodies = new ArrayList<>();

    int publishes;

    RuntimeException vhostFailure;
    boolean holdDurables;
    boolean holdConsumes;
    boolean holdDeclares;
    /** When false, consumers get nothing from the queue until a test calls {@link #dispatch}. */
    boolean autoDispatch = true;

    // ---------------------------------------------------------------- BrokerBackend

    @Override
    public ServerInfo info() {
        return INFO;
    }

    @Override
    public synchronized Optional<String> authenticate(String user, String password, SocketAddress remote) {
        return password.equals(users.get(user)) ? Optional.of(user) : Optional.empty();
    }

    @Override
    public synchronized boolean vhostAllowed(String user, String vhost) {
        if (vhostFailure != null) {
            throw vhostFailure;
        }
        return vhosts.contains(vhost);
    }

    @Override
    public synchronized CompletionStage<Void> declareExchange(String vhost, ExchangeMethod.Declare declare) {
        String exchange = declare.exchange();
        String type = declare.type();
        if (declare.passive()) {
            return exchanges.containsKey(exchange) ? done() : notFound("exchange", exchange, vhost);
        }
        exchanges.putIfAbsent(exchange, type);
        return done();
    }

    @Override
    public synchronized CompletionStage<Void> deleteExchange(String vhost, String exchange, boolean ifUnused) {
        exchanges.remove(exchange);
        return done();
    }

    @Override
    public synchronized CompletionStage<Void> bindExchange(String vhost, BindingChange change) {
        return done();
    }

    @Override
    public synchronized CompletionStage<QueueDeclared> declareQueue(
            String vhost, QueueMethod.Declare declare, String connectionId) {
        String queue = declare.queue();
        boolean exclusive = declare.exclusive();
        if (declare.passive()) {
            Queue existing = queues.get(queue);
            return existing == null ? notFound("queue", queue, vhost) : declared(existing);
        }
        String name = queue.isEmpty() ? "amq.gen-" + ++generated : queue;
        Queue q = queues.computeIfAbsent(name, n -> new Queue(n, exclusive ? connectionId : null));
        if (holdDeclares) {
            CompletableFuture<QueueDeclared> held = new CompletableFuture<>();
            heldDeclares.add(held);
            return held;
        }
        return declared(q);
    }

    @Override
    public synchronized CompletionStage<Void> bindQueue(String vhost, BindingChange change, String connectionId) {
        String queue = change.destination();
        String exchange = change.source();
        String routingKey = change.routingKey();
        if (!queues.containsKey(queue)) {
            return notFound("queue", queue, vhost);
        }
        if (!exchanges.containsKey(exchange)) {
            return notFound("exchange", exchange, vhost);
        }
        List<String[]> list = bindings.computeIfAbsent(exchange, e -> new ArrayList<>());
        if (change.bind()) {
            list.add(new String[] {queue, routingKey});
        } else {
            list.removeIf(b -> b[0].equals(queue) && b[1].equals(routingKey));
        }
        return done();
    }

    @Override
    public synchronized CompletionStage<Long> purgeQueue(String vhost, String queue, String connectionId) {
        Queue q = queues.get(queue);
        if (q == null) {
            return notFound("queue", queue, vhost);
        }
        long count = q.ready.size();
        q.ready.clear();
        return CompletableFuture.completedFuture(count);
    }

    @Override
    public synchronized CompletionStage<Long> deleteQueue(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId) {
        Queue q = queues.remove(queue);
        if (q == null) {
            return CompletableFuture.completedFuture(0L);
        }
        for (FakeConsumer consumer : q.consumers) {
            consumer.sink.cancelled(consumer.tag);
        }
        return CompletableFuture.completedFuture((long) q.ready.size());
    }

    @Override
    public synchronized PublishOutcome publish(
            String vhost,
            String exchange,
            String routingKey,
            BasicProperties properties,
            ByteBuffer header,
            ByteBuf body,
            String user) {
        String type = exchanges.get(exchange);
        if (type == null) {
            throw new BrokerFailure(ReplyCode.NOT_FOUND, "no exchange '" + exchange + "' in vhost '" + vhost + "'");
        }
        publishes++;
        List<Queue> targets = new ArrayList<>();
        if (exchange.isEmpty()) {
            Queue q = queues.get(routingKey);
            if (q != null) {
                targets.add(q);
            }
        } else {
            for (String[] binding : bindings.getOrDefault(exchange, List.of())) {
                if (type.equals("fanout") || binding[1].equals(routingKey)) {
                    Queue q = queues.get(binding[0]);
                    if (q != null && !targets.contains(q)) {
                        targets.add(q);
                    }
                }
            }
        }
        if (targets.isEmpty()) {
            return new PublishOutcome.Unroutable();
        }
        Message message = new Message(exchange, routingKey, copy(header), ByteBufUtil.getBytes(body));
        for (Queue q : targets) {
            long offset = q.nextOffset++;
            q.ready.put(offset, new Stored(offset, message, false));
            if (autoDispatch) {
                dispatch(q);
            }
        }
        if (holdDurables) {
            CompletableFuture<Void> held = new CompletableFuture<>();
            heldDurables.add(held);
            return new PublishOutcome.Routed(held);
        }
        return new PublishOutcome.Routed(done());
    }

    @Override
    public synchronized CompletionStage<QueueHandle> consume(ConsumeRequest request) {
        Queue q = queues.get(request.queue());
        if (q == null) {
            return notFound("queue", request.queue(), request.vhost());
        }
        String consumerTag = request.consumerTag();
        long channelId = request.channelId();
        int prefetch = request.prefetch();
        DeliverySink sink = request.sink();
        boolean noAck = request.noAck();
        q.consumers.add(new FakeConsumer(consumerTag, channelId, noAck, prefetch, sink));
        sinks.put(consumerTag, sink);
        consumerChannels.put(consumerTag, channelId);
        prefetches.put(consumerTag, prefetch);
        if (autoDispatch) {
            dispatch(q);
        }
        if (holdConsumes) {
            CompletableFuture<QueueHandle> held = new CompletableFuture<>();
            heldConsumes.add(held);
            return held;
        }
        return CompletableFuture.completedFuture(q.handle);
    }

    @Override
    public synchronized void cancel(QueueHandle queue, long channelId, String consumerTag) {
        cancelled.add(new Cancelled(queue.name(), channelId, consumerTag));
        log.add("cancel " + consumerTag);
        Queue q = queues.get(queue.name());
        if (q != null) {
            q.consumers.removeIf(c -> c.tag.equals(consumerTag) && c.channelId == channelId);
        }
    }

    @Override
    public synchronized CompletionStage<Optional<Delivery>> get(
            String vhost, String queue, boolean noAck, String connectionId) {
        Queue q = queues.get(queue);
        if (q == null) {
            return notFound("queue", queue, vhost);
        }
        Map.Entry<Long, Stored> first = q.ready.pollFirstEntry();
        if (first == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        Stored stored = first.getValue();
        if (!noAck) {
            q.unacked.put(stored.offset(), stored);
        }
        return CompletableFuture.completedFuture(Optional.of(delivery(q, stored, q.ready.size())));
    }

    @Override
    public synchronized void settle(QueueHandle queue, long[] offsets, Settlement settlement) {
        settled.add(new Settled(queue.name(), offsets.clone(), settlement));
        log.add("settle " + queue.name() + " " + settlement + " " + java.util.Arrays.toString(offsets));
        Queue q = queues.get(queue.name());
        if (q == null) {
            return;
        }
        for (long offset : offsets) {
            Stored stored = q.unacked.remove(offset);
            FakeConsumer consumer = q.deliveredTo.remove(offset);
            if (consumer != null) {
                consumer.unacked.remove(offset);
            }
            if (stored != null && settlement == Settlement.REQUEUE) {
                q.ready.put(offset, new Stored(offset, stored.message(), true));
            }
        }
        if (autoDispatch) {
            dispatch(q);
        }
    }

    @Override
    public synchronized void connectionClosed(String connectionId) {
        closedConnections.add(connectionId);
        queues.values().removeIf(q -> connectionId.equals(q.owner));
    }

    // ---------------------------------------------------------------- test controls

    synchronized void addUser(String user, String password) {
        users.put(user, password);
    }

    synchronized void addQueue(String name) {
        queues.computeIfAbsent(name, n -> new Queue(n, null));
    }

    /** Stores a message in {@code queue} as if published there, without dispatching it. */
    synchronized void enqueue(String queue, String body) {
        Queue q = queues.get(queue);
        long offset = q.nextOffset++;
        q.ready.put(
                offset,
                new Stored(
                        offset,
                        new Message(
                                "",
                                queue,
                                ContentHeaderCodec.encoded(
                                        ContentHeader.basic(body.getBytes().length, BasicProperties.EMPTY)),
                                body.getBytes()),
                        false));
    }

    synchronized void dispatch(String queue) {
        dispatch(queues.get(queue));
    }

    /** Deletes a queue as another client would: its consumers get {@link DeliverySink#cancelled}. */
    synchronized void deleteQueueExternally(String queue) {
        deleteQueue("/", queue, false, false, "someone-else");
    }

    synchronized Handle handle(String queue) {
        return queues.get(queue).handle;
    }

    synchronized int readyCount(String queue) {
        return queues.get(queue).ready.size();
    }

    synchronized int consumerCount() {
        return queues.values().stream().mapToInt(q -> q.consumers.size()).sum();
    }

    /** Messages delivered (or got) with ack required and not settled yet, over all queues. */
    synchronized int unsettledCount() {
        return queues.values().stream().mapToInt(q -> q.unacked.size()).sum();
    }

    synchronized boolean hasQueue(String queue) {
        return queues.containsKey(queue);
    }

    // ---------------------------------------------------------------- internals

    private void dispatch(Queue q) {
        if (q == null || q.consumers.isEmpty()) {
            return;
        }
        int turn = 0;
        int idle = 0;
        while (!q.ready.isEmpty() && idle < q.consumers.size()) {
            FakeConsumer consumer = q.consumers.get(turn++ % q.consumers.size());
            if (!consumer.noAck && consumer.prefetch > 0 && consumer.unacked.size() >= consumer.prefetch) {
                idle++;
                continue;
            }
            idle = 0;
            Stored stored = q.ready.pollFirstEntry().getValue();
            if (!consumer.noAck) {
                q.unacked.put(stored.offset(), stored);
                q.deliveredTo.put(stored.offset(), consumer);
                consumer.unacked.add(stored.offset());
            }
            consumer.sink.deliver(consumer.tag, delivery(q, stored, 0));
        }
    }

    private Delivery delivery(Queue q, Stored stored, long messageCount) {
        Message message = stored.message();
        ByteBuf body = Unpooled.wrappedBuffer(message.body());
        deliveryBodies.add(body);
        return new Delivery(
                q.handle,
                stored.offset(),
                stored.redelivered(),
                message.exchange(),
                message.routingKey(),
                message.header(),
                body,
                messageCount);
    }

    private static ByteBuffer copy(ByteBuffer header) {
        ByteBuffer copy = ByteBuffer.allocate(header.remaining());
        copy.put(header.duplicate());
        return copy.flip();
    }

    private static CompletionStage<QueueDeclared> declared(Queue q) {
        return CompletableFuture.completedFuture(new QueueDeclared(q.name, q.ready.size(), q.consumers.size()));
    }

    private static <T> CompletionStage<T> notFound(String kind, String name, String vhost) {
        return CompletableFuture.failedFuture(
                new BrokerFailure(ReplyCode.NOT_FOUND, "no " + kind + " '" + name + "' in vhost '" + vhost + "'"));
    }

    private static CompletionStage<Void> done() {
        return CompletableFuture.completedFuture(null);
    }
}
