package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.BodyFrame;
import io.ganglion.amqp.codec.Command;
import io.ganglion.amqp.codec.CommandAssembler;
import io.ganglion.amqp.codec.ContentCommand;
import io.ganglion.amqp.codec.Frame;
import io.ganglion.amqp.codec.MethodCommand;
import io.ganglion.amqp.codec.MethodFrame;
import io.ganglion.amqp.protocol.AccessMethod;
import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConfirmMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.protocol.TxMethod;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * One AMQP channel, server side, as RabbitMQ's {@code rabbit_channel} behaves: it assembles its frames into commands,
 * maps them to the {@link BrokerBackend}, and keeps the channel's publisher confirms. Its consumers, delivery tags,
 * prefetch limits and unacknowledged deliveries are kept by {@link ChannelConsumers}, its transaction by {@link
 * ChannelTransaction}.
 *
 * <pre>
 *   OPEN ──channel.close from client──> (teardown, close-ok) ──> CLOSED, number free
 *     │
 *     └──soft error──> (teardown, channel.close sent) CLOSING ──close-ok──> CLOSED, number free
 *                          discards all but channel.close (answered close-ok) and channel.close-ok
 * </pre>
 *
 * <p><b>Order.</b> Commands run one at a time, in the order received, as in RabbitMQ's channel process: a command that
 * waits for the broker (a declare, a consume, a get, a commit) makes the channel busy, and commands received meanwhile
 * queue in {@link #inbox} until its stage completes. So replies go out in request order, {@code nowait} or not, and a
 * publish after a {@code queue.declare(nowait)} finds the queue. Publishes do not wait: routing is decided at once and
 * only the confirm follows the durable stage.
 *
 * <p><b>Deliveries.</b> A consumer's deliveries are held until its {@code consume-ok} is sent; deliveries beyond the
 * channel's global prefetch ({@code basic.qos global=true}) wait in {@link ChannelConsumers} until acks make room.
 * The per-consumer prefetch is the broker's to enforce. Delivery tags count from 1.
 *
 * <p><b>Teardown</b> (channel closed either way, or the connection going): consumers are cancelled first, then every
 * message the channel holds (unacked, held back, not yet delivered) is requeued, one {@link BrokerBackend#settle} per
 * queue with offsets ascending. Anything arriving later (a delivery, a consume completing) is handed back to the broker.
 *
 * <p>Implementation notes: confined to the connection's event loop; other threads reach it only through
 * {@link AmqpConnection#post}. Soft errors close the channel; hard errors go to {@link AmqpConnection#closeConnection}.
 */
final class AmqpChannel {
    private static final System.Logger LOG = System.getLogger(AmqpChannel.class.getName());

    /** Channel ids unique in the process, so the broker can tell a reopened channel number from the old channel. */
    private static final AtomicLong IDS = new AtomicLong();

    private static final long UINT_MAX = 0xFFFF_FFFFL;
    private static final int NO_ROUTE = ReplyCode.NO_ROUTE.code();

    private enum State {
        OPEN,
        CLOSING,
        CLOSED
    }

    private final AmqpConnection connection;
    private final BrokerBackend backend;
    private final int number;
    private final long id;
    private final CommandAssembler assembler;
    /** Commands (and deferred faults) received while busy, in order. */
    private final ArrayDeque<Object> inbox = new ArrayDeque<>();

    /** Consumers, delivery tags, prefetch, unacked and held deliveries. */
    private final ChannelConsumers consumers;

    private State state = State.OPEN;
    private boolean busy;
    private boolean tornDown;

    private final OversizedContent oversized;

    private String lastDeclaredQueue = "";
    private PublisherConfirms confirms;
    private boolean confirmFlushScheduled;
    /** The open transaction once {@code tx.select} was received, else null. */
    private ChannelTransaction tx;

    AmqpChannel(AmqpConnection connection, int number) {
        this.connection = connection;
        this.backend = connection.backend();
        this.number = number;
        this.id = IDS.incrementAndGet();
        this.assembler = new CommandAssembler(number);
        this.oversized = new OversizedContent(connection.config().maxMessageSize());
        this.consumers = new ChannelConsumers(connection, backend, number, id);
    }

    int number() {
        return number;
    }

    // ---------------------------------------------------------------- frames in

    /** A frame for this channel. Takes ownership of a body frame. On the event loop. */
    void onFrame(Frame frame) {
        if (state != State.OPEN) {
            onFrameWhileClosing(frame);
            return;
        }
        if (oversized.intercept(frame, fault -> {
            assembler.release();
            submit(fault);
        })) {
            return;
        }
        Optional<Command> command = assembler.accept(frame);
        oversized.assembled(frame, command.isPresent());
        command.ifPresent(this::submit);
    }

    private void onFrameWhileClosing(Frame frame) {
        if (frame instanceof MethodFrame methodFrame) {
            onMethodWhileClosing(methodFrame.method());
        } else if (frame instanceof BodyFrame body) {
            body.release();
        }
    }

    private void onMethodWhileClosing(Method method) {
        if (state != State.CLOSING) {
            return;
        }
        if (method instanceof ChannelMethod.Close) {
            connection.send(new MethodCommand(number, new ChannelMethod.CloseOk()));
        } else if (method instanceof ChannelMethod.CloseOk) {
            finish();
        }
    }

    // ---------------------------------------------------------------- running commands in order

    private void submit(Object inbound) {
        if (busy || !inbox.isEmpty()) {
            inbox.add(inbound);
            connection.queued(1);
            return;
        }
        execute(inbound);
    }

    private void drain() {
        while (!busy && !inbox.isEmpty()) {
            Object next = inbox.poll();
            connection.queued(-1);
            if (state == State.OPEN) {
                execute(next);
            } else {
                if (next instanceof Command command) {
                    onMethodWhileClosing(command.method());
                }
                releaseInbound(next);
            }
        }
    }

    private void execute(Object inbound) {
        switch (inbound) {
            case AmqpException fault -> fail(fault, null);
            case MethodCommand command -> {
                if (observesQueue(command.method())) {
                    CompletableFuture<Void> earlier =
                            connection.earlierPublishes().allDone();
                    if (earlier != null) {
                        afterEarlierPublishes(earlier, command);
                        return;
                    }
                }
                run(command);
            }
            case ContentCommand command -> {
                try {
                    dispatch(command.method(), command);
                } catch (AmqpException e) {
                    fail(e, command.method());
                } finally {
                    command.release();
                }
            }
            default -> throw new IllegalStateException("not a command: " + inbound);
        }
    }

    private void run(MethodCommand command) {
        try {
            dispatch(command.method(), null);
        } catch (AmqpException e) {
            fail(e, command.method());
        }
    }

    /** The commands that observe a queue's messages (their count, or the messages themselves). */
    private static boolean observesQueue(Method method) {
        return method instanceof BasicMethod.Get
                || method instanceof BasicMethod.Consume
                || method instanceof QueueMethod.Declare
                || method instanceof QueueMethod.Purge
                || method instanceof QueueMethod.Delete;
    }

    /**
     * Runs {@code command} once the connection's earlier publishes are in their queues (or failed): the channel is
     * busy meanwhile, so its later commands keep their order behind it.
     */
    private void afterEarlierPublishes(CompletableFuture<Void> earlier, MethodCommand command) {
        busy = true;
        earlier.whenComplete((ignored, failure) -> connection.post(() -> {
            busy = false;
            if (state == State.OPEN) {
                run(command);
            }
            drain();
        }));
    }

    /**
     * Waits for {@code stage}: the channel is busy until it completes, then {@code onSuccess} runs on the event loop.
     * If the channel closed meanwhile, {@code onAbandoned} gets the value instead, to hand resources back.
     */
    private <T> void await(
            CompletionStage<T> stage, Method method, Consumer<? super T> onSuccess, Consumer<? super T> onAbandoned) {
        busy = true;
        stage.whenComplete((value, error) -> connection.post(new LoopTask() {
            @Override
            public void run() {
                resume(method, value, error, onSuccess, onAbandoned);
            }

            @Override
            public void abandon() {
                if (error == null && value != null) {
                    onAbandoned.accept(value);
                }
            }
        }));
    }

    private <T> void await(CompletionStage<T> stage, Method method, Consumer<? super T> onSuccess) {
        await(stage, method, onSuccess, value -> {});
    }

    private <T> void resume(
            Method method, T value, Throwable error, Consumer<? super T> onSuccess, Consumer<? super T> onAbandoned) {
        busy = false;
        if (state != State.OPEN) {
            if (error == null && value != null) {
                onAbandoned.accept(value);
            }
            drain();
            return;
        }
        if (error != null) {
            fail(brokerFault(error), method);
        } else {
            try {
                onSuccess.accept(value);
            } catch (AmqpException e) {
                fail(e, method);
            }
        }
        drain();
    }

    /** A stage's failure as the fault to close with: its own reply code, or 541 for anything else. */
    private static AmqpException brokerFault(Throwable error) {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof AmqpException fault) {
            return fault;
        }
        LOG.log(System.Logger.Level.ERROR, "broker stage failed unexpectedly", cause);
        return new ServerFault(
                ReplyCode.INTERNAL_ERROR, "broker failure: " + cause.getClass().getSimpleName());
    }

    /** Closes the channel (soft error) or the connection (hard error) for {@code fault}, raised by {@code method}. */
    private void fail(AmqpException fault, Method method) {
        boolean hasIds = fault.classId() != 0 || fault.methodId() != 0;
        int classId = hasIds || method == null ? fault.classId() : method.classId();
        int methodId = hasIds || method == null ? fault.methodId() : method.methodId();
        if (!fault.replyCode().isSoftError()) {
            connection.closeConnection(fault.replyCode(), fault.replyText(), classId, methodId);
            return;
        }
        if (state != State.OPEN) {
            return;
        }
        LOG.log(
                System.Logger.Level.INFO,
                "closing AMQP channel channel={0} connection={1} code={2} text=\"{3}\"",
                number,
                connection.connectionId(),
                fault.replyCode().code(),
                fault.replyText());
        teardown();
        state = State.CLOSING;
        connection.send(new MethodCommand(
                number, new ChannelMethod.Close(fault.replyCode().code(), fault.replyText(), classId, methodId)));
    }

    // ---------------------------------------------------------------- dispatch

    private void dispatch(Method method, ContentCommand content) {
        switch (method) {
            case ChannelMethod m -> onChannelMethod(m);
            case AccessMethod m -> onAccessMethod(m);
            case ExchangeMethod m -> onExchangeMethod(m);
            case QueueMethod m -> onQueueMethod(m);
            case BasicMethod m -> onBasicMethod(m, content);
            case ConfirmMethod m -> onConfirmMethod(m);
            case TxMethod m -> onTxMethod(m);
            case ConnectionMethod m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onChannelMethod(ChannelMethod method) {
        switch (method) {
            case ChannelMethod.Open m -> throw ServerFault.of(ReplyCode.CHANNEL_ERROR, m, "second 'channel.open' seen");
            case ChannelMethod.Flow m -> {
                if (!m.active()) {
                    throw ServerFault.notImplemented("active=false");
                }
                reply(new ChannelMethod.FlowOk(true));
            }
            case ChannelMethod.Close m -> {
                teardown();
                state = State.CLOSED;
                connection.send(new MethodCommand(number, new ChannelMethod.CloseOk()));
                finish();
            }
            case ChannelMethod.OpenOk m -> throw ServerFault.unimplemented(m);
            case ChannelMethod.FlowOk m -> throw ServerFault.unimplemented(m);
            case ChannelMethod.CloseOk m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onAccessMethod(AccessMethod method) {
        switch (method) {
            case AccessMethod.Request m -> reply(new AccessMethod.RequestOk(1));
            case AccessMethod.RequestOk m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onExchangeMethod(ExchangeMethod method) {
        String vhost = connection.vhost();
        switch (method) {
            case ExchangeMethod.Declare m ->
                await(
                        backend.declareExchange(vhost, m),
                        m,
                        done -> replyUnless(m.nowait(), new ExchangeMethod.DeclareOk()));
            case ExchangeMethod.Delete m ->
                await(
                        backend.deleteExchange(vhost, m.exchange(), m.ifUnused()),
                        m,
                        done -> replyUnless(m.nowait(), new ExchangeMethod.DeleteOk()));
            case ExchangeMethod.Bind m ->
                await(
                        backend.bindExchange(
                                vhost,
                                new BindingChange(m.source(), m.destination(), m.routingKey(), m.arguments(), true)),
                        m,
                        done -> replyUnless(m.nowait(), new ExchangeMethod.BindOk()));
            case ExchangeMethod.Unbind m ->
                await(
                        backend.bindExchange(
                                vhost,
                                new BindingChange(m.source(), m.destination(), m.routingKey(), m.arguments(), false)),
                        m,
                        done -> replyUnless(m.nowait(), new ExchangeMethod.UnbindOk()));
            case ExchangeMethod.DeclareOk m -> throw ServerFault.unimplemented(m);
            case ExchangeMethod.DeleteOk m -> throw ServerFault.unimplemented(m);
            case ExchangeMethod.BindOk m -> throw ServerFault.unimplemented(m);
            case ExchangeMethod.UnbindOk m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onQueueMethod(QueueMethod method) {
        String vhost = connection.vhost();
        String connectionId = connection.connectionId();
        switch (method) {
            case QueueMethod.Declare m ->
                await(backend.declareQueue(vhost, m, connectionId), m, declared -> {
                    lastDeclaredQueue = declared.queue();
                    replyUnless(
                            m.nowait(),
                            new QueueMethod.DeclareOk(
                                    declared.queue(), uint(declared.messageCount()), uint(declared.consumerCount())));
                });
            case QueueMethod.Bind m ->
                await(
                        backend.bindQueue(
                                vhost,
                                queueBinding(m.exchange(), m.queue(), m.routingKey(), m.arguments(), true),
                                connectionId),
                        m,
                        done -> replyUnless(m.nowait(), new QueueMethod.BindOk()));
            case QueueMethod.Unbind m ->
                await(
                        backend.bindQueue(
                                vhost,
                                queueBinding(m.exchange(), m.queue(), m.routingKey(), m.arguments(), false),
                                connectionId),
                        m,
                        done -> reply(new QueueMethod.UnbindOk()));
            case QueueMethod.Purge m ->
                await(
                        backend.purgeQueue(vhost, queueName(m.queue()), connectionId),
                        m,
                        purged -> replyUnless(m.nowait(), new QueueMethod.PurgeOk(uint(purged))));
            case QueueMethod.Delete m ->
                await(
                        backend.deleteQueue(vhost, queueName(m.queue()), m.ifUnused(), m.ifEmpty(), connectionId),
                        m,
                        deleted -> replyUnless(m.nowait(), new QueueMethod.DeleteOk(uint(deleted))));
            case QueueMethod.DeclareOk m -> throw ServerFault.unimplemented(m);
            case QueueMethod.BindOk m -> throw ServerFault.unimplemented(m);
            case QueueMethod.UnbindOk m -> throw ServerFault.unimplemented(m);
            case QueueMethod.PurgeOk m -> throw ServerFault.unimplemented(m);
            case QueueMethod.DeleteOk m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onBasicMethod(BasicMethod method, ContentCommand content) {
        switch (method) {
            case BasicMethod.Qos m -> onQos(m);
            case BasicMethod.Consume m -> onConsume(m);
            case BasicMethod.Cancel m -> onCancel(m);
            case BasicMethod.Publish m -> onPublish(m, content);
            case BasicMethod.Get m -> onGet(m);
            case BasicMethod.Ack m -> settle(consumers.take(m.deliveryTag(), m.multiple()), Settlement.ACK);
            case BasicMethod.Nack m ->
                settle(
                        consumers.take(m.deliveryTag(), m.multiple()),
                        m.requeue() ? Settlement.REQUEUE : Settlement.DISCARD);
            case BasicMethod.Reject m ->
                settle(consumers.take(m.deliveryTag(), false), m.requeue() ? Settlement.REQUEUE : Settlement.DISCARD);
            case BasicMethod.RecoverAsync m -> recover(m.requeue());
            case BasicMethod.Recover m -> {
                recover(m.requeue());
                reply(new BasicMethod.RecoverOk());
            }
            case BasicMethod.QosOk m -> throw ServerFault.unimplemented(m);
            case BasicMethod.ConsumeOk m -> throw ServerFault.unimplemented(m);
            case BasicMethod.CancelOk m -> throw ServerFault.unimplemented(m);
            case BasicMethod.Return m -> throw ServerFault.unimplemented(m);
            case BasicMethod.Deliver m -> throw ServerFault.unimplemented(m);
            case BasicMethod.GetOk m -> throw ServerFault.unimplemented(m);
            case BasicMethod.GetEmpty m -> throw ServerFault.unimplemented(m);
            case BasicMethod.RecoverOk m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onConfirmMethod(ConfirmMethod method) {
        switch (method) {
            case ConfirmMethod.Select m -> {
                if (tx != null) {
                    throw ServerFault.preconditionFailed("cannot switch from tx to confirm mode");
                }
                if (confirms == null) {
                    confirms = new PublisherConfirms();
                }
                replyUnless(m.nowait(), new ConfirmMethod.SelectOk());
            }
            case ConfirmMethod.SelectOk m -> throw ServerFault.unimplemented(m);
        }
    }

    private void onTxMethod(TxMethod method) {
        switch (method) {
            case TxMethod.Select m -> {
                if (confirms != null) {
                    throw ServerFault.preconditionFailed("cannot switch from confirm to tx mode");
                }
                if (tx == null) {
                    tx = new ChannelTransaction();
                }
                reply(new TxMethod.SelectOk());
            }
            case TxMethod.Commit m -> commit(m);
            case TxMethod.Rollback m -> {
                requireTransaction();
                tx.rollback(consumers);
                reply(new TxMethod.RollbackOk());
            }
            case TxMethod.SelectOk m -> throw ServerFault.unimplemented(m);
            case TxMethod.CommitOk m -> throw ServerFault.unimplemented(m);
            case TxMethod.RollbackOk m -> throw ServerFault.unimplemented(m);
        }
    }

    // ---------------------------------------------------------------- publishing

    private void onPublish(BasicMethod.Publish publish, ContentCommand content) {
        if (publish.immediate()) {
            throw ServerFault.notImplemented("immediate=true");
        }
        BasicProperties properties = content.properties();
        PublishChecks.checkUserId(properties, connection.user());
        PublishChecks.checkExpiration(properties);
        if (tx != null) {
            tx.publish(content);
            return;
        }
        route(publish, content);
    }

    /** Routes one publish; returns its durable stage (already complete when it reached no queue). */
    private CompletionStage<Void> route(BasicMethod.Publish publish, ContentCommand content) {
        PublishOutcome outcome = backend.publish(
                connection.vhost(),
                publish.exchange(),
                publish.routingKey(),
                content.properties(),
                content.header(),
                content.body(),
                connection.user());
        switch (outcome) {
            case PublishOutcome.Routed routed -> {
                connection.earlierPublishes().add(routed.durable());
                if (confirms != null) {
                    long seq = confirms.assign();
                    routed.durable().whenComplete((done, error) -> connection.post(() -> onConfirm(seq, error)));
                }
                return routed.durable();
            }
            case PublishOutcome.Unroutable unroutable -> {
                if (publish.mandatory()) {
                    connection.send(new ContentCommand(
                            number,
                            new BasicMethod.Return(
                                    NO_ROUTE, ReplyCode.NO_ROUTE.name(), publish.exchange(), publish.routingKey()),
                            content.header(),
                            content.body().retainedDuplicate()));
                }
                if (confirms != null) {
                    // Decided now, sent at the end of the task: after the return, as RabbitMQ orders them.
                    decide(confirms.assign(), true);
                }
                return CompletableFuture.completedFuture(null);
            }
        }
    }

    private void onConfirm(long seq, Throwable error) {
        if (state != State.OPEN || confirms == null) {
            return;
        }
        if (error != null) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "publish not confirmed channel={0} connection={1} seq={2}: {3}",
                    number,
                    connection.connectionId(),
                    seq,
                    error);
        }
        decide(seq, error == null);
    }

    private void decide(long seq, boolean ack) {
        confirms.decide(seq, ack);
        if (!confirmFlushScheduled) {
            confirmFlushScheduled = true;
            connection.later(this::flushConfirms);
        }
    }

    private void flushConfirms() {
        confirmFlushScheduled = false;
        if (state != State.OPEN || confirms == null) {
            return;
        }
        for (BasicMethod method : confirms.drain()) {
            connection.send(new MethodCommand(number, method));
        }
    }

    // ---------------------------------------------------------------- transactions

    private void requireTransaction() {
        if (tx == null) {
            throw ServerFault.preconditionFailed("channel is not transactional");
        }
    }

    private void commit(TxMethod.Commit commit) {
        requireTransaction();
        CompletionStage<Void> committed =
                tx.commit(publish -> route((BasicMethod.Publish) publish.method(), publish), backend);
        consumers.releaseHeld();
        await(committed, commit, done -> reply(new TxMethod.CommitOk()));
    }

    // ---------------------------------------------------------------- consuming

    private void onQos(BasicMethod.Qos qos) {
        if (qos.prefetchSize() != 0) {
            throw ServerFault.notImplemented("prefetch_size!=0 (" + qos.prefetchSize() + ")");
        }
        consumers.qos(qos.prefetchCount(), qos.global());
        reply(new BasicMethod.QosOk());
    }

    private void onConsume(BasicMethod.Consume consume) {
        String queue = queueName(consume.queue());
        ChannelConsumers.Consumer consumer = consumers.add(consume.consumerTag(), consume.noAck());
        String tag = consumer.tag;
        CompletionStage<QueueHandle> stage = backend.consume(new ConsumeRequest(
                connection.vhost(),
                queue,
                id,
                tag,
                consume.noAck(),
                consume.exclusive(),
                consumers.consumerPrefetch(),
                consume.arguments(),
                new Sink(consumer),
                connection.connectionId()));
        await(
                stage,
                consume,
                handle -> {
                    consumer.handle = handle;
                    replyUnless(consume.nowait(), new BasicMethod.ConsumeOk(tag));
                    consumers.deliverEarly(consumer);
                    if (consumer.cancelledByBroker) {
                        onBrokerCancel(consumer);
                    }
                },
                handle -> backend.cancel(handle, id, tag));
    }

    private void onCancel(BasicMethod.Cancel cancel) {
        consumers.cancel(cancel.consumerTag()); // an unknown tag is not an error: the spec requires it be ignored
        replyUnless(cancel.nowait(), new BasicMethod.CancelOk(cancel.consumerTag()));
    }

    private void onGet(BasicMethod.Get get) {
        String queue = queueName(get.queue());
        await(
                backend.get(connection.vhost(), queue, get.noAck(), connection.connectionId()),
                get,
                result -> {
                    if (result.isEmpty()) {
                        reply(new BasicMethod.GetEmpty());
                        return;
                    }
                    Delivery delivery = result.get();
                    long tag = consumers.tagGet(delivery, get.noAck());
                    connection.send(new ContentCommand(
                            number,
                            new BasicMethod.GetOk(
                                    tag,
                                    delivery.redelivered(),
                                    delivery.exchange(),
                                    delivery.routingKey(),
                                    uint(delivery.messageCount())),
                            delivery.header(),
                            delivery.content()));
                },
                result -> result.ifPresent(delivery -> consumers.giveBack(delivery, !get.noAck())));
    }

    private void onDelivery(ChannelConsumers.Consumer consumer, Delivery delivery) {
        if (state != State.OPEN || !consumer.active) {
            consumers.giveBack(delivery, !consumer.noAck);
            return;
        }
        if (!consumer.ready) {
            consumer.early.add(delivery);
            return;
        }
        consumers.deliverOrHold(consumer, delivery);
    }

    private void onBrokerCancel(ChannelConsumers.Consumer consumer) {
        if (state != State.OPEN || !consumer.active) {
            return;
        }
        if (!consumer.ready) {
            // consume-ok must go first; the cancel follows it.
            consumer.cancelledByBroker = true;
            return;
        }
        consumers.cancelledByBroker(consumer);
        if (connection.consumerCancelNotify()) {
            connection.send(new MethodCommand(number, new BasicMethod.Cancel(consumer.tag, true)));
        }
    }

    private void settle(List<UnackedDeliveries.Entry> entries, Settlement settlement) {
        if (tx != null) {
            tx.settle(entries, settlement);
            return;
        }
        consumers.settle(entries, settlement);
    }

    private void recover(boolean requeue) {
        if (!requeue) {
            throw ServerFault.notImplemented("requeue=false");
        }
        consumers.recover();
    }

    // ---------------------------------------------------------------- closing

    /**
     * Lets go of everything the channel holds with the broker: consumers cancelled first (so nothing is redelivered
     * here), then unacked, held and early deliveries requeued per queue in offset order; partial content and an open
     * transaction dropped. Idempotent.
     */
    private void teardown() {
        if (tornDown) {
            return;
        }
        tornDown = true;
        assembler.release();
        consumers.cancelAll();
        if (tx != null) {
            tx.rollback(consumers); // its settled deliveries are requeued with the unacked ones
        }
        consumers.requeueAll();
    }

    /** The connection is going: tear down and drop queued commands. */
    void dispose() {
        try {
            teardown();
        } finally {
            state = State.CLOSED;
            while (!inbox.isEmpty()) {
                releaseInbound(inbox.poll());
            }
        }
    }

    /** {@code channel.close-ok} sent or received: the number is free. */
    private void finish() {
        state = State.CLOSED;
        connection.channelFinished(this);
        while (!inbox.isEmpty()) {
            releaseInbound(inbox.poll());
            connection.queued(-1);
        }
    }

    private static void releaseInbound(Object inbound) {
        if (inbound instanceof ContentCommand command) {
            command.release();
        }
    }

    // ---------------------------------------------------------------- helpers

    private void reply(Method method) {
        connection.send(new MethodCommand(number, method));
    }

    private void replyUnless(boolean nowait, Method method) {
        if (!nowait) {
            reply(method);
        }
    }

    /** RabbitMQ's shortcut: an empty queue name means the queue last declared on this channel. */
    private String queueName(String queue) {
        if (!queue.isEmpty()) {
            return queue;
        }
        if (lastDeclaredQueue.isEmpty()) {
            throw new ServerFault(ReplyCode.NOT_FOUND, "no previously declared queue");
        }
        return lastDeclaredQueue;
    }

    /**
     * A {@code queue.bind} or {@code queue.unbind}, with RabbitMQ's shortcuts: an empty queue is the last declared one,
     * and an empty queue with an empty routing key binds with that queue's name as the key.
     */
    private BindingChange queueBinding(
            String exchange, String queue, String routingKey, FieldTable arguments, boolean bind) {
        String key = queue.isEmpty() && routingKey.isEmpty() ? queueName(queue) : routingKey;
        return new BindingChange(exchange, queueName(queue), key, arguments, bind);
    }

    private static long uint(long value) {
        return Math.max(0, Math.min(UINT_MAX, value));
    }

    /** Where the broker delivers to one consumer; any thread. */
    private final class Sink implements DeliverySink {
        private final ChannelConsumers.Consumer consumer;

        Sink(ChannelConsumers.Consumer consumer) {
            this.consumer = consumer;
        }

        @Override
        public void deliver(String consumerTag, Delivery delivery) {
            connection.post(new LoopTask() {
                @Override
                public void run() {
                    onDelivery(consumer, delivery);
                }

                @Override
                public void abandon() {
                    delivery.release();
                }
            });
        }

        @Override
        public void cancelled(String consumerTag) {
            connection.post(() -> onBrokerCancel(consumer));
        }
    }
}
