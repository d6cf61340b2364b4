package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.AccessMethod;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConfirmMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.FrameErrorException;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.MethodId;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.SyntaxErrorException;
import io.ganglion.amqp.protocol.TxMethod;
import io.ganglion.amqp.protocol.UnknownMethodException;
import io.netty.buffer.ByteBuf;

/**
 * Method frame payloads to {@link Method} records and back.
 *
 * <pre>
 * +----------+-----------+---------------------------------------------+
 * | class id | method id | arguments, in the spec's order              |
 * | short    | short     | consecutive bits packed into octets, LSB 1st |
 * +----------+-----------+---------------------------------------------+
 * </pre>
 *
 * Decoding is exact, as RabbitMQ's generated {@code decode_method_fields/2} is: the arguments must fill the payload,
 * no more and no less, or the frame is a {@code 501 FRAME_ERROR}. Unused bits of a bit octet are ignored.
 */
public final class MethodCodec {
    private MethodCodec() {}

    /**
     * Decodes a whole method frame payload: class id, method id and arguments. Consumes {@code payload}.
     *
     * @throws UnknownMethodException when the ids name no method ({@code 503})
     * @throws FrameErrorException when the payload is short, long or malformed ({@code 501})
     */
    public static Method decode(ByteBuf payload) {
        if (payload.readableBytes() < FrameDescriptor.METHOD_ARGUMENTS_OFFSET) {
            throw tooShort(payload.readableBytes());
        }
        int classId = payload.readUnsignedShort();
        int methodId = payload.readUnsignedShort();
        return decode(classId, methodId, payload);
    }

    /**
     * Decodes the arguments of method {@code classId.methodId}. Consumes {@code arguments}.
     *
     * @throws UnknownMethodException when the ids name no method ({@code 503})
     * @throws FrameErrorException when the arguments are short, long or malformed ({@code 501}); the fault carries
     *     the method's ids
     */
    public static Method decode(int classId, int methodId, ByteBuf arguments) {
        MethodId id = MethodId.lookup(classId, methodId);
        if (id == null) {
            throw new UnknownMethodException(classId, methodId);
        }
        try {
            WireReader r = new WireReader(arguments);
            Method method = decode(id, r);
            r.end();
            return method;
        } catch (FrameErrorException e) {
            throw cannotDecode(id, e);
        }
    }

    /**
     * Writes the method frame payload of {@code method}: class id, method id and arguments.
     *
     * @throws SyntaxErrorException when a short string is longer than 255 octets or a table is nested too deep
     *     ({@code 502}); {@code out} then holds a partial payload
     */
    public static void encode(ByteBuf out, Method method) {
        out.writeShort(method.classId());
        out.writeShort(method.methodId());
        try {
            WireWriter w = new WireWriter(out);
            encode(method, w);
            w.finish();
        } catch (SyntaxErrorException e) {
            throw cannotEncode(method, e);
        }
    }

    private static Method decode(MethodId id, WireReader r) {
        return switch (id) {
            case CONNECTION_START ->
                new ConnectionMethod.Start(r.octet(), r.octet(), r.table(), r.longstr(), r.longstr());
            case CONNECTION_START_OK ->
                new ConnectionMethod.StartOk(r.table(), r.shortstr(), r.longstr(), r.shortstr());
            case CONNECTION_SECURE -> new ConnectionMethod.Secure(r.longstr());
            case CONNECTION_SECURE_OK -> new ConnectionMethod.SecureOk(r.longstr());
            case CONNECTION_TUNE -> new ConnectionMethod.Tune(r.ushort(), r.uint(), r.ushort());
            case CONNECTION_TUNE_OK -> new ConnectionMethod.TuneOk(r.ushort(), r.uint(), r.ushort());
            case CONNECTION_OPEN -> new ConnectionMethod.Open(r.shortstr(), r.shortstr(), r.bit());
            case CONNECTION_OPEN_OK -> new ConnectionMethod.OpenOk(r.shortstr());
            case CONNECTION_CLOSE -> new ConnectionMethod.Close(r.ushort(), r.shortstr(), r.ushort(), r.ushort());
            case CONNECTION_CLOSE_OK -> new ConnectionMethod.CloseOk();
            case CONNECTION_BLOCKED -> new ConnectionMethod.Blocked(r.shortstr());
            case CONNECTION_UNBLOCKED -> new ConnectionMethod.Unblocked();
            case CONNECTION_UPDATE_SECRET -> new ConnectionMethod.UpdateSecret(r.longstr(), r.shortstr());
            case CONNECTION_UPDATE_SECRET_OK -> new ConnectionMethod.UpdateSecretOk();
            case CHANNEL_OPEN -> new ChannelMethod.Open(r.shortstr());
            case CHANNEL_OPEN_OK -> new ChannelMethod.OpenOk(r.longstr());
            case CHANNEL_FLOW -> new ChannelMethod.Flow(r.bit());
            case CHANNEL_FLOW_OK -> new ChannelMethod.FlowOk(r.bit());
            case CHANNEL_CLOSE -> new ChannelMethod.Close(r.ushort(), r.shortstr(), r.ushort(), r.ushort());
            case CHANNEL_CLOSE_OK -> new ChannelMethod.CloseOk();
            case ACCESS_REQUEST -> new AccessMethod.Request(r.shortstr(), r.bit(), r.bit(), r.bit(), r.bit(), r.bit());
            case ACCESS_REQUEST_OK -> new AccessMethod.RequestOk(r.ushort());
            case EXCHANGE_DECLARE ->
                new ExchangeMethod.Declare(
                        r.ushort(), r.shortstr(), r.shortstr(), r.bit(), r.bit(), r.bit(), r.bit(), r.bit(), r.table());
            case EXCHANGE_DECLARE_OK -> new ExchangeMethod.DeclareOk();
            case EXCHANGE_DELETE -> new ExchangeMethod.Delete(r.ushort(), r.shortstr(), r.bit(), r.bit());
            case EXCHANGE_DELETE_OK -> new ExchangeMethod.DeleteOk();
            case EXCHANGE_BIND ->
                new ExchangeMethod.Bind(r.ushort(), r.shortstr(), r.shortstr(), r.shortstr(), r.bit(), r.table());
            case EXCHANGE_BIND_OK -> new ExchangeMethod.BindOk();
            case EXCHANGE_UNBIND ->
                new ExchangeMethod.Unbind(r.ushort(), r.shortstr(), r.shortstr(), r.shortstr(), r.bit(), r.table());
            case EXCHANGE_UNBIND_OK -> new ExchangeMethod.UnbindOk();
            case QUEUE_DECLARE ->
                new QueueMethod.Declare(
                        r.ushort(), r.shortstr(), r.bit(), r.bit(), r.bit(), r.bit(), r.bit(), r.table());
            case QUEUE_DECLARE_OK -> new QueueMethod.DeclareOk(r.shortstr(), r.uint(), r.uint());
            case QUEUE_BIND ->
                new QueueMethod.Bind(r.ushort(), r.shortstr(), r.shortstr(), r.shortstr(), r.bit(), r.table());
            case QUEUE_BIND_OK -> new QueueMethod.BindOk();
            case QUEUE_PURGE -> new QueueMethod.Purge(r.ushort(), r.shortstr(), r.bit());
            case QUEUE_PURGE_OK -> new QueueMethod.PurgeOk(r.uint());
            case QUEUE_DELETE -> new QueueMethod.Delete(r.ushort(), r.shortstr(), r.bit(), r.bit(), r.bit());
            case QUEUE_DELETE_OK -> new QueueMethod.DeleteOk(r.uint());
            case QUEUE_UNBIND ->
                new QueueMethod.Unbind(r.ushort(), r.shortstr(), r.shortstr(), r.shortstr(), r.table());
            case QUEUE_UNBIND_OK -> new QueueMethod.UnbindOk();
            case BASIC_QOS -> new BasicMethod.Qos(r.uint(), r.ushort(), r.bit());
            case BASIC_QOS_OK -> new BasicMethod.QosOk();
            case BASIC_CONSUME ->
                new BasicMethod.Consume(
                        r.ushort(), r.shortstr(), r.shortstr(), r.bit(), r.bit(), r.bit(), r.bit(), r.table());
            case BASIC_CONSUME_OK -> new BasicMethod.ConsumeOk(r.shortstr());
            case BASIC_CANCEL -> new BasicMethod.Cancel(r.shortstr(), r.bit());
            case BASIC_CANCEL_OK -> new BasicMethod.CancelOk(r.shortstr());
            case BASIC_PUBLISH -> new BasicMethod.Publish(r.ushort(), r.shortstr(), r.shortstr(), r.bit(), r.bit());
            case BASIC_RETURN -> new BasicMethod.Return(r.ushort(), r.shortstr(), r.shortstr(), r.shortstr());
            case BASIC_DELIVER ->
                new BasicMethod.Deliver(r.shortstr(), r.longlong(), r.bit(), r.shortstr(), r.shortstr());
            case BASIC_GET -> new BasicMethod.Get(r.ushort(), r.shortstr(), r.bit());
            case BASIC_GET_OK -> new BasicMethod.GetOk(r.longlong(), r.bit(), r.shortstr(), r.shortstr(), r.uint());
            case BASIC_GET_EMPTY -> new BasicMethod.GetEmpty(r.shortstr());
            case BASIC_ACK -> new BasicMethod.Ack(r.longlong(), r.bit());
            case BASIC_REJECT -> new BasicMethod.Reject(r.longlong(), r.bit());
            case BASIC_RECOVER_ASYNC -> new BasicMethod.RecoverAsync(r.bit());
            case BASIC_RECOVER -> new BasicMethod.Recover(r.bit());
            case BASIC_RECOVER_OK -> new BasicMethod.RecoverOk();
            case BASIC_NACK -> new BasicMethod.Nack(r.longlong(), r.bit(), r.bit());
            case CONFIRM_SELECT -> new ConfirmMethod.Select(r.bit());
            case CONFIRM_SELECT_OK -> new ConfirmMethod.SelectOk();
            case TX_SELECT -> new TxMethod.Select();
            case TX_SELECT_OK -> new TxMethod.SelectOk();
            case TX_COMMIT -> new TxMethod.Commit();
            case TX_COMMIT_OK -> new TxMethod.CommitOk();
            case TX_ROLLBACK -> new TxMethod.Rollback();
            case TX_ROLLBACK_OK -> new TxMethod.RollbackOk();
        };
    }

    /** Dispatches on the AMQP class; each class's helper is exhaustive over its methods. */
    private static void encode(Method method, WireWriter w) {
        switch (method) {
            case ConnectionMethod m -> encodeConnection(m, w);
            case ChannelMethod m -> encodeChannel(m, w);
            case AccessMethod m -> encodeAccess(m, w);
            case ExchangeMethod m -> encodeExchange(m, w);
            case QueueMethod m -> encodeQueue(m, w);
            case BasicMethod m -> encodeBasic(m, w);
            case ConfirmMethod m -> encodeConfirm(m, w);
            case TxMethod m -> encodeTx(m, w);
        }
    }

    private static void encodeConnection(ConnectionMethod method, WireWriter w) {
        switch (method) {
            case ConnectionMethod.Start m -> {
                w.octet(m.versionMajor());
                w.octet(m.versionMinor());
                w.table(m.serverProperties());
                w.longstr(m.mechanisms());
                w.longstr(m.locales());
            }
            case ConnectionMethod.StartOk m -> {
                w.table(m.clientProperties());
                w.shortstr(m.mechanism());
                w.longstr(m.response());
                w.shortstr(m.locale());
            }
            case ConnectionMethod.Secure m -> {
                w.longstr(m.challenge());
            }
            case ConnectionMethod.SecureOk m -> {
                w.longstr(m.response());
            }
            case ConnectionMethod.Tune m -> {
                w.ushort(m.channelMax());
                w.uint(m.frameMax());
                w.ushort(m.heartbeat());
            }
            case ConnectionMethod.TuneOk m -> {
                w.ushort(m.channelMax());
                w.uint(m.frameMax());
                w.ushort(m.heartbeat());
            }
            case ConnectionMethod.Open m -> {
                w.shortstr(m.virtualHost());
                w.shortstr(m.capabilities());
                w.bit(m.insist());
            }
            case ConnectionMethod.OpenOk m -> {
                w.shortstr(m.knownHosts());
            }
            case ConnectionMethod.Close m -> {
                w.ushort(m.replyCode());
                w.shortstr(m.replyText());
                w.ushort(m.failingClassId());
                w.ushort(m.failingMethodId());
            }
            case ConnectionMethod.CloseOk m -> {}
            case ConnectionMethod.Blocked m -> {
                w.shortstr(m.reason());
            }
            case ConnectionMethod.Unblocked m -> {}
            case ConnectionMethod.UpdateSecret m -> {
                w.longstr(m.newSecret());
                w.shortstr(m.reason());
            }
            case ConnectionMethod.UpdateSecretOk m -> {}
        }
    }

    private static void encodeChannel(ChannelMethod method, WireWriter w) {
        switch (method) {
            case ChannelMethod.Open m -> {
                w.shortstr(m.outOfBand());
            }
            case ChannelMethod.OpenOk m -> {
                w.longstr(m.channelId());
            }
            case ChannelMethod.Flow m -> {
                w.bit(m.active());
            }
            case ChannelMethod.FlowOk m -> {
                w.bit(m.active());
            }
            case ChannelMethod.Close m -> {
                w.ushort(m.replyCode());
                w.shortstr(m.replyText());
                w.ushort(m.failingClassId());
                w.ushort(m.failingMethodId());
            }
            case ChannelMethod.CloseOk m -> {}
        }
    }

    private static void encodeAccess(AccessMethod method, WireWriter w) {
        switch (method) {
            case AccessMethod.Request m -> {
                w.shortstr(m.realm());
                w.bit(m.exclusive());
                w.bit(m.passive());
                w.bit(m.active());
                w.bit(m.write());
                w.bit(m.read());
            }
            case AccessMethod.RequestOk m -> {
                w.ushort(m.ticket());
            }
        }
    }

    private static void encodeExchange(ExchangeMethod method, WireWriter w) {
        switch (method) {
            case ExchangeMethod.Declare m -> {
                w.ushort(m.ticket());
                w.shortstr(m.exchange());
                w.shortstr(m.type());
                w.bit(m.passive());
                w.bit(m.durable());
                w.bit(m.autoDelete());
                w.bit(m.internal());
                w.bit(m.nowait());
                w.table(m.arguments());
            }
            case ExchangeMethod.DeclareOk m -> {}
            case ExchangeMethod.Delete m -> {
                w.ushort(m.ticket());
                w.shortstr(m.exchange());
                w.bit(m.ifUnused());
                w.bit(m.nowait());
            }
            case ExchangeMethod.DeleteOk m -> {}
            case ExchangeMethod.Bind m -> {
                w.ushort(m.ticket());
                w.shortstr(m.destination());
                w.shortstr(m.source());
                w.shortstr(m.routingKey());
                w.bit(m.nowait());
                w.table(m.arguments());
            }
            case ExchangeMethod.BindOk m -> {}
            case ExchangeMethod.Unbind m -> {
                w.ushort(m.ticket());
                w.shortstr(m.destination());
                w.shortstr(m.source());
                w.shortstr(m.routingKey());
                w.bit(m.nowait());
                w.table(m.arguments());
            }
            case ExchangeMethod.UnbindOk m -> {}
        }
    }

    private static void encodeQueue(QueueMethod method, WireWriter w) {
        switch (method) {
            case QueueMethod.Declare m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.bit(m.passive());
                w.bit(m.durable());
                w.bit(m.exclusive());
                w.bit(m.autoDelete());
                w.bit(m.nowait());
                w.table(m.arguments());
            }
            case QueueMethod.DeclareOk m -> {
                w.shortstr(m.queue());
                w.uint(m.messageCount());
                w.uint(m.consumerCount());
            }
            case QueueMethod.Bind m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.shortstr(m.exchange());
                w.shortstr(m.routingKey());
                w.bit(m.nowait());
                w.table(m.arguments());
            }
            case QueueMethod.BindOk m -> {}
            case QueueMethod.Purge m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.bit(m.nowait());
            }
            case QueueMethod.PurgeOk m -> {
                w.uint(m.messageCount());
            }
            case QueueMethod.Delete m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.bit(m.ifUnused());
                w.bit(m.ifEmpty());
                w.bit(m.nowait());
            }
            case QueueMethod.DeleteOk m -> {
                w.uint(m.messageCount());
            }
            case QueueMethod.Unbind m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.shortstr(m.exchange());
                w.shortstr(m.routingKey());
                w.table(m.arguments());
            }
            case QueueMethod.UnbindOk m -> {}
        }
    }

    private static void encodeBasic(BasicMethod method, WireWriter w) {
        switch (method) {
            case BasicMethod.Qos m -> {
                w.uint(m.prefetchSize());
                w.ushort(m.prefetchCount());
                w.bit(m.global());
            }
            case BasicMethod.QosOk m -> {}
            case BasicMethod.Consume m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.shortstr(m.consumerTag());
                w.bit(m.noLocal());
                w.bit(m.noAck());
                w.bit(m.exclusive());
                w.bit(m.nowait());
                w.table(m.arguments());
            }
            case BasicMethod.ConsumeOk m -> {
                w.shortstr(m.consumerTag());
            }
            case BasicMethod.Cancel m -> {
                w.shortstr(m.consumerTag());
                w.bit(m.nowait());
            }
            case BasicMethod.CancelOk m -> {
                w.shortstr(m.consumerTag());
            }
            case BasicMethod.Publish m -> {
                w.ushort(m.ticket());
                w.shortstr(m.exchange());
                w.shortstr(m.routingKey());
                w.bit(m.mandatory());
                w.bit(m.immediate());
            }
            case BasicMethod.Return m -> {
                w.ushort(m.replyCode());
                w.shortstr(m.replyText());
                w.shortstr(m.exchange());
                w.shortstr(m.routingKey());
            }
            case BasicMethod.Deliver m -> {
                w.shortstr(m.consumerTag());
                w.longlong(m.deliveryTag());
                w.bit(m.redelivered());
                w.shortstr(m.exchange());
                w.shortstr(m.routingKey());
            }
            case BasicMethod.Get m -> {
                w.ushort(m.ticket());
                w.shortstr(m.queue());
                w.bit(m.noAck());
            }
            case BasicMethod.GetOk m -> {
                w.longlong(m.deliveryTag());
                w.bit(m.redelivered());
                w.shortstr(m.exchange());
                w.shortstr(m.routingKey());
                w.uint(m.messageCount());
            }
            case BasicMethod.GetEmpty m -> {
                w.shortstr(m.clusterId());
            }
            case BasicMethod.Ack m -> {
                w.longlong(m.deliveryTag());
                w.bit(m.multiple());
            }
            case BasicMethod.Reject m -> {
                w.longlong(m.deliveryTag());
                w.bit(m.requeue());
            }
            case BasicMethod.RecoverAsync m -> {
                w.bit(m.requeue());
            }
            case BasicMethod.Recover m -> {
                w.bit(m.requeue());
            }
            case BasicMethod.RecoverOk m -> {}
            case BasicMethod.Nack m -> {
                w.longlong(m.deliveryTag());
                w.bit(m.multiple());
                w.bit(m.requeue());
            }
        }
    }

    private static void encodeConfirm(ConfirmMethod method, WireWriter w) {
        switch (method) {
            case ConfirmMethod.Select m -> {
                w.bit(m.nowait());
            }
            case ConfirmMethod.SelectOk m -> {}
        }
    }

    private static void encodeTx(TxMethod method, WireWriter w) {
        switch (method) {
            case TxMethod.Select m -> {}
            case TxMethod.SelectOk m -> {}
            case TxMethod.Commit m -> {}
            case TxMethod.CommitOk m -> {}
            case TxMethod.Rollback m -> {}
            case TxMethod.RollbackOk m -> {}
        }
    }

    private static FrameErrorException tooShort(int size) {
        return new FrameErrorException("method frame payload of " + size + " octets has no class and method ids");
    }

    private static FrameErrorException cannotDecode(MethodId id, FrameErrorException cause) {
        return new FrameErrorException(
                "cannot decode " + id.amqpName() + ": " + cause.explanation(), id.classId(), id.methodId());
    }

    private static SyntaxErrorException cannotEncode(Method method, SyntaxErrorException cause) {
        return new SyntaxErrorException(
                "cannot encode " + method.amqpName() + ": " + cause.explanation(), method.classId(), method.methodId());
    }
}
