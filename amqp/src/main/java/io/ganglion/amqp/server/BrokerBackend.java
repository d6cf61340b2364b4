package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.QueueMethod;
import io.netty.buffer.ByteBuf;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Everything an AMQP connection needs from the broker, and nothing more.
 *
 * <p>Threads: the connection calls these from its Netty event loop; none of them blocks. Stages complete on any thread
 * (a shard, the metadata log); the connection moves back to its event loop before it touches its state. A stage that
 * fails does so with a {@link BrokerFailure} (or another {@link io.ganglion.amqp.protocol.AmqpException}) carrying the
 * reply code to close with; any other exception means 541 INTERNAL_ERROR.
 *
 * <p>{@code connectionId} names the calling connection, unique in the broker: it owns exclusive queues.
 */
public interface BrokerBackend {
    ServerInfo info();

    /** Checks a user's password, and that a {@code guest} user connects from loopback. Returns the user name. */
    Optional<String> authenticate(String user, String password, SocketAddress remote);

    /** Whether {@code vhost} exists and {@code user} may use it. */
    boolean vhostAllowed(String user, String vhost);

    /**
     * {@code exchange.declare}; with {@code passive}, only checks that it exists (404 otherwise). Its {@code nowait} is
     * the channel's concern.
     */
    CompletionStage<Void> declareExchange(String vhost, ExchangeMethod.Declare declare);

    CompletionStage<Void> deleteExchange(String vhost, String exchange, boolean ifUnused);

    /** {@code exchange.bind} / {@code exchange.unbind}: from {@code source} to {@code destination}. */
    CompletionStage<Void> bindExchange(String vhost, BindingChange change);

    /**
     * {@code queue.declare}. An empty {@code queue} asks for a server-named one ({@code amq.gen-...}). With {@code
     * passive}, only checks that it exists and reports its counts. Its {@code nowait} is the channel's concern.
     */
    CompletionStage<QueueDeclared> declareQueue(String vhost, QueueMethod.Declare declare, String connectionId);

    /** {@code queue.bind} / {@code queue.unbind}. */
    CompletionStage<Void> bindQueue(String vhost, BindingChange change, String connectionId);

    /** {@code queue.purge}: completes with the number of messages purged. */
    CompletionStage<Long> purgeQueue(String vhost, String queue, String connectionId);

    /** {@code queue.delete}: completes with the number of messages deleted. Its consumers get {@code basic.cancel}. */
    CompletionStage<Long> deleteQueue(
            String vhost, String queue, boolean ifUnused, boolean ifEmpty, String connectionId);

    /**
     * {@code basic.publish}, decided at once: the exchange is looked up and the message routed on the calling thread.
     * The broker takes its own reference to {@code body}; the caller still releases its own.
     *
     * @param properties the properties, decoded from {@code header}
     * @param header the content header payload octets as received (class, weight, body size, property flags,
     *     properties), which the message record stores as they are; a read-only view
     * @throws BrokerFailure 404 for a missing exchange, 403 for an internal one
     */
    PublishOutcome publish(
            String vhost,
            String exchange,
            String routingKey,
            BasicProperties properties,
            ByteBuffer header,
            ByteBuf body,
            String user);

    /**
     * {@code basic.consume}: registers the consumer with the queue. Deliveries go to the request's sink, possibly
     * before the stage completes; the connection sends {@code consume-ok} first and holds deliveries until it has.
     */
    CompletionStage<QueueHandle> consume(ConsumeRequest request);

    /** {@code basic.cancel}, or the channel closing: the consumer gets nothing more. */
    void cancel(QueueHandle queue, long channelId, String consumerTag);

    /** {@code basic.get}: one message, or empty when none is ready. */
    CompletionStage<Optional<Delivery>> get(String vhost, String queue, boolean noAck, String connectionId);

    /** Acks, rejects or requeues messages this channel received from {@code queue}. */
    void settle(QueueHandle queue, long[] offsets, Settlement settlement);

    /** The connection closed: its exclusive queues go. Channels have already settled and cancelled. */
    void connectionClosed(String connectionId);
}
