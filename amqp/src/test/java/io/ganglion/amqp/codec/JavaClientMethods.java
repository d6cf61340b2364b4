package io.ganglion.amqp.codec;

import static io.ganglion.amqp.codec.JavaClientValues.javaTable;
import static io.ganglion.amqp.codec.JavaClientValues.longString;
import static io.ganglion.amqp.codec.JavaClientValues.table;

import com.rabbitmq.client.impl.AMQImpl;
import io.ganglion.amqp.protocol.AccessMethod;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConfirmMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.TxMethod;

/** Our method records to the RabbitMQ Java client's {@code AMQImpl} methods and back, field by field. */
final class JavaClientMethods {
    private JavaClientMethods() {}

    static com.rabbitmq.client.impl.Method toJava(Method method) {
        return switch (method) {
            case ConnectionMethod.Start m ->
                new AMQImpl.Connection.Start(
                        m.versionMajor(),
                        m.versionMinor(),
                        javaTable(m.serverProperties()),
                        longString(m.mechanisms()),
                        longString(m.locales()));
            case ConnectionMethod.StartOk m ->
                new AMQImpl.Connection.StartOk(
                        javaTable(m.clientProperties()), m.mechanism(), longString(m.response()), m.locale());
            case ConnectionMethod.Secure m -> new AMQImpl.Connection.Secure(longString(m.challenge()));
            case ConnectionMethod.SecureOk m -> new AMQImpl.Connection.SecureOk(longString(m.response()));
            case ConnectionMethod.Tune m ->
                new AMQImpl.Connection.Tune(m.channelMax(), (int) m.frameMax(), m.heartbeat());
            case ConnectionMethod.TuneOk m ->
                new AMQImpl.Connection.TuneOk(m.channelMax(), (int) m.frameMax(), m.heartbeat());
            case ConnectionMethod.Open m -> new AMQImpl.Connection.Open(m.virtualHost(), m.capabilities(), m.insist());
            case ConnectionMethod.OpenOk m -> new AMQImpl.Connection.OpenOk(m.knownHosts());
            case ConnectionMethod.Close m ->
                new AMQImpl.Connection.Close(m.replyCode(), m.replyText(), m.failingClassId(), m.failingMethodId());
            case ConnectionMethod.CloseOk m -> new AMQImpl.Connection.CloseOk();
            case ConnectionMethod.Blocked m -> new AMQImpl.Connection.Blocked(m.reason());
            case ConnectionMethod.Unblocked m -> new AMQImpl.Connection.Unblocked();
            case ConnectionMethod.UpdateSecret m ->
                new AMQImpl.Connection.UpdateSecret(longString(m.newSecret()), m.reason());
            case ConnectionMethod.UpdateSecretOk m -> new AMQImpl.Connection.UpdateSecretOk();
            case ChannelMethod.Open m -> new AMQImpl.Channel.Open(m.outOfBand());
            case ChannelMethod.OpenOk m -> new AMQImpl.Channel.OpenOk(longString(m.channelId()));
            case ChannelMethod.Flow m -> new AMQImpl.Channel.Flow(m.active());
            case ChannelMethod.FlowOk m -> new AMQImpl.Channel.FlowOk(m.active());
            case ChannelMethod.Close m ->
                new AMQImpl.Channel.Close(m.replyCode(), m.replyText(), m.failingClassId(), m.failingMethodId());
            case ChannelMethod.CloseOk m -> new AMQImpl.Channel.CloseOk();
            case AccessMethod.Request m ->
                new AMQImpl.Access.Request(m.realm(), m.exclusive(), m.passive(), m.active(), m.write(), m.read());
            case AccessMethod.RequestOk m -> new AMQImpl.Access.RequestOk(m.ticket());
            case ExchangeMethod.Declare m ->
                new AMQImpl.Exchange.Declare(
                        m.ticket(),
                        m.exchange(),
                        m.type(),
                        m.passive(),
                        m.durable(),
                        m.autoDelete(),
                        m.internal(),
                        m.nowait(),
                        javaTable(m.arguments()));
            case ExchangeMethod.DeclareOk m -> new AMQImpl.Exchange.DeclareOk();
            case ExchangeMethod.Delete m ->
                new AMQImpl.Exchange.Delete(m.ticket(), m.exchange(), m.ifUnused(), m.nowait());
            case ExchangeMethod.DeleteOk m -> new AMQImpl.Exchange.DeleteOk();
            case ExchangeMethod.Bind m ->
                new AMQImpl.Exchange.Bind(
                        m.ticket(), m.destination(), m.source(), m.routingKey(), m.nowait(), javaTable(m.arguments()));
            case ExchangeMethod.BindOk m -> new AMQImpl.Exchange.BindOk();
            case ExchangeMethod.Unbind m ->
                new AMQImpl.Exchange.Unbind(
                        m.ticket(), m.destination(), m.source(), m.routingKey(), m.nowait(), javaTable(m.arguments()));
            case ExchangeMethod.UnbindOk m -> new AMQImpl.Exchange.UnbindOk();
            case QueueMethod.Declare m ->
                new AMQImpl.Queue.Declare(
                        m.ticket(),
                        m.queue(),
                        m.passive(),
                        m.durable(),
                        m.exclusive(),
                        m.autoDelete(),
                        m.nowait(),
                        javaTable(m.arguments()));
            case QueueMethod.DeclareOk m ->
                new AMQImpl.Queue.DeclareOk(m.queue(), (int) m.messageCount(), (int) m.consumerCount());
            case QueueMethod.Bind m ->
                new AMQImpl.Queue.Bind(
                        m.ticket(), m.queue(), m.exchange(), m.routingKey(), m.nowait(), javaTable(m.arguments()));
            case QueueMethod.BindOk m -> new AMQImpl.Queue.BindOk();
            case QueueMethod.Purge m -> new AMQImpl.Queue.Purge(m.ticket(), m.queue(), m.nowait());
            case QueueMethod.PurgeOk m -> new AMQImpl.Queue.PurgeOk((int) m.messageCount());
            case QueueMethod.Delete m ->
                new AMQImpl.Queue.Delete(m.ticket(), m.queue(), m.ifUnused(), m.ifEmpty(), m.nowait());
            case QueueMethod.DeleteOk m -> new AMQImpl.Queue.DeleteOk((int) m.messageCount());
            case QueueMethod.Unbind m ->
                new AMQImpl.Queue.Unbind(m.ticket(), m.queue(), m.exchange(), m.routingKey(), javaTable(m.arguments()));
            case QueueMethod.UnbindOk m -> new AMQImpl.Queue.UnbindOk();
            case BasicMethod.Qos m -> new AMQImpl.Basic.Qos((int) m.prefetchSize(), m.prefetchCount(), m.global());
            case BasicMethod.QosOk m -> new AMQImpl.Basic.QosOk();
            case BasicMethod.Consume m ->
                new AMQImpl.Basic.Consume(
                        m.ticket(),
                        m.queue(),
                        m.consumerTag(),
                        m.noLocal(),
                        m.noAck(),
                        m.exclusive(),
                        m.nowait(),
                        javaTable(m.arguments()));
            case BasicMethod.ConsumeOk m -> new AMQImpl.Basic.ConsumeOk(m.consumerTag());
            case BasicMethod.Cancel m -> new AMQImpl.Basic.Cancel(m.consumerTag(), m.nowait());
            case BasicMethod.CancelOk m -> new AMQImpl.Basic.CancelOk(m.consumerTag());
            case BasicMethod.Publish m ->
                new AMQImpl.Basic.Publish(m.ticket(), m.exchange(), m.routingKey(), m.mandatory(), m.immediate());
            case BasicMethod.Return m ->
                new AMQImpl.Basic.Return(m.replyCode(), m.replyText(), m.exchange(), m.routingKey());
            case BasicMethod.Deliver m ->
                new AMQImpl.Basic.Deliver(
                        m.consumerTag(), m.deliveryTag(), m.redelivered(), m.exchange(), m.routingKey());
            case BasicMethod.Get m -> new AMQImpl.Basic.Get(m.ticket(), m.queue(), m.noAck());
            case BasicMethod.GetOk m ->
                new AMQImpl.Basic.GetOk(
                        m.deliveryTag(), m.redelivered(), m.exchange(), m.routingKey(), (int) m.messageCount());
            case BasicMethod.GetEmpty m -> new AMQImpl.Basic.GetEmpty(m.clusterId());
            case BasicMethod.Ack m -> new AMQImpl.Basic.Ack(m.deliveryTag(), m.multiple());
            case BasicMethod.Reject m -> new AMQImpl.Basic.Reject(m.deliveryTag(), m.requeue());
            case BasicMethod.RecoverAsync m -> new AMQImpl.Basic.RecoverAsync(m.requeue());
            case BasicMethod.Recover m -> new AMQImpl.Basic.Recover(m.requeue());
            case BasicMethod.RecoverOk m -> new AMQImpl.Basic.RecoverOk();
            case BasicMethod.Nack m -> new AMQImpl.Basic.Nack(m.deliveryTag(), m.multiple(), m.requeue());
            case ConfirmMethod.Select m -> new AMQImpl.Confirm.Select(m.nowait());
            case ConfirmMethod.SelectOk m -> new AMQImpl.Confirm.SelectOk();
            case TxMethod.Select m -> new AMQImpl.Tx.Select();
            case TxMethod.SelectOk m -> new AMQImpl.Tx.SelectOk();
            case TxMethod.Commit m -> new AMQImpl.Tx.Commit();
            case TxMethod.CommitOk m -> new AMQImpl.Tx.CommitOk();
            case TxMethod.Rollback m -> new AMQImpl.Tx.Rollback();
            case TxMethod.RollbackOk m -> new AMQImpl.Tx.RollbackOk();
        };
    }

    static Method fromJava(com.rabbitmq.client.impl.Method method) {
        return switch (method) {
            case AMQImpl.Connection.Start j ->
                new ConnectionMethod.Start(
                        j.getVersionMajor(),
                        j.getVersionMinor(),
                        table(j.getServerProperties()),
                        longString(j.getMechanisms()),
                        longString(j.getLocales()));
            case AMQImpl.Connection.StartOk j ->
                new ConnectionMethod.StartOk(
                        table(j.getClientProperties()), j.getMechanism(), longString(j.getResponse()), j.getLocale());
            case AMQImpl.Connection.Secure j -> new ConnectionMethod.Secure(longString(j.getChallenge()));
            case AMQImpl.Connection.SecureOk j -> new ConnectionMethod.SecureOk(longString(j.getResponse()));
            case AMQImpl.Connection.Tune j ->
                new ConnectionMethod.Tune(j.getChannelMax(), Integer.toUnsignedLong(j.getFrameMax()), j.getHeartbeat());
            case AMQImpl.Connection.TuneOk j ->
                new ConnectionMethod.TuneOk(
                        j.getChannelMax(), Integer.toUnsignedLong(j.getFrameMax()), j.getHeartbeat());
            case AMQImpl.Connection.Open j ->
                new ConnectionMethod.Open(j.getVirtualHost(), j.getCapabilities(), j.getInsist());
            case AMQImpl.Connection.OpenOk j -> new ConnectionMethod.OpenOk(j.getKnownHosts());
            case AMQImpl.Connection.Close j ->
                new ConnectionMethod.Close(j.getReplyCode(), j.getReplyText(), j.getClassId(), j.getMethodId());
            case AMQImpl.Connection.CloseOk j -> new ConnectionMethod.CloseOk();
            case AMQImpl.Connection.Blocked j -> new ConnectionMethod.Blocked(j.getReason());
            case AMQImpl.Connection.Unblocked j -> new ConnectionMethod.Unblocked();
            case AMQImpl.Connection.UpdateSecret j ->
                new ConnectionMethod.UpdateSecret(longString(j.getNewSecret()), j.getReason());
            case AMQImpl.Connection.UpdateSecretOk j -> new ConnectionMethod.UpdateSecretOk();
            case AMQImpl.Channel.Open j -> new ChannelMethod.Open(j.getOutOfBand());
            case AMQImpl.Channel.OpenOk j -> new ChannelMethod.OpenOk(longString(j.getChannelId()));
            case AMQImpl.Channel.Flow j -> new ChannelMethod.Flow(j.getActive());
            case AMQImpl.Channel.FlowOk j -> new ChannelMethod.FlowOk(j.getActive());
            case AMQImpl.Channel.Close j ->
                new ChannelMethod.Close(j.getReplyCode(), j.getReplyText(), j.getClassId(), j.getMethodId());
            case AMQImpl.Channel.CloseOk j -> new ChannelMethod.CloseOk();
            case AMQImpl.Access.Request j ->
                new AccessMethod.Request(
                        j.getRealm(), j.getExclusive(), j.getPassive(), j.getActive(), j.getWrite(), j.getRead());
            case AMQImpl.Access.RequestOk j -> new AccessMethod.RequestOk(j.getTicket());
            case AMQImpl.Exchange.Declare j ->
                new ExchangeMethod.Declare(
                        j.getTicket(),
                        j.getExchange(),
                        j.getType(),
                        j.getPassive(),
                        j.getDurable(),
                        j.getAutoDelete(),
                        j.getInternal(),
                        j.getNowait(),
                        table(j.getArguments()));
            case AMQImpl.Exchange.DeclareOk j -> new ExchangeMethod.DeclareOk();
            case AMQImpl.Exchange.Delete j ->
                new ExchangeMethod.Delete(j.getTicket(), j.getExchange(), j.getIfUnused(), j.getNowait());
            case AMQImpl.Exchange.DeleteOk j -> new ExchangeMethod.DeleteOk();
            case AMQImpl.Exchange.Bind j ->
                new ExchangeMethod.Bind(
                        j.getTicket(),
                        j.getDestination(),
                        j.getSource(),
                        j.getRoutingKey(),
                        j.getNowait(),
                        table(j.getArguments()));
            case AMQImpl.Exchange.BindOk j -> new ExchangeMethod.BindOk();
            case AMQImpl.Exchange.Unbind j ->
                new ExchangeMethod.Unbind(
                        j.getTicket(),
                        j.getDestination(),
                        j.getSource(),
                        j.getRoutingKey(),
                        j.getNowait(),
                        table(j.getArguments()));
            case AMQImpl.Exchange.UnbindOk j -> new ExchangeMethod.UnbindOk();
            case AMQImpl.Queue.Declare j ->
                new QueueMethod.Declare(
                        j.getTicket(),
                        j.getQueue(),
                        j.getPassive(),
                        j.getDurable(),
                        j.getExclusive(),
                        j.getAutoDelete(),
                        j.getNowait(),
                        table(j.getArguments()));
            case AMQImpl.Queue.DeclareOk j ->
                new QueueMethod.DeclareOk(
                        j.getQueue(),
                        Integer.toUnsignedLong(j.getMessageCount()),
                        Integer.toUnsignedLong(j.getConsumerCount()));
            case AMQImpl.Queue.Bind j ->
                new QueueMethod.Bind(
                        j.getTicket(),
                        j.getQueue(),
                        j.getExchange(),
                        j.getRoutingKey(),
                        j.getNowait(),
                        table(j.getArguments()));
            case AMQImpl.Queue.BindOk j -> new QueueMethod.BindOk();
            case AMQImpl.Queue.Purge j -> new QueueMethod.Purge(j.getTicket(), j.getQueue(), j.getNowait());
            case AMQImpl.Queue.PurgeOk j -> new QueueMethod.PurgeOk(Integer.toUnsignedLong(j.getMessageCount()));
            case AMQImpl.Queue.Delete j ->
                new QueueMethod.Delete(j.getTicket(), j.getQueue(), j.getIfUnused(), j.getIfEmpty(), j.getNowait());
            case AMQImpl.Queue.DeleteOk j -> new QueueMethod.DeleteOk(Integer.toUnsignedLong(j.getMessageCount()));
            case AMQImpl.Queue.Unbind j ->
                new QueueMethod.Unbind(
                        j.getTicket(), j.getQueue(), j.getExchange(), j.getRoutingKey(), table(j.getArguments()));
            case AMQImpl.Queue.UnbindOk j -> new QueueMethod.UnbindOk();
            case AMQImpl.Basic.Qos j ->
                new BasicMethod.Qos(Integer.toUnsignedLong(j.getPrefetchSize()), j.getPrefetchCount(), j.getGlobal());
            case AMQImpl.Basic.QosOk j -> new BasicMethod.QosOk();
            case AMQImpl.Basic.Consume j ->
                new BasicMethod.Consume(
                        j.getTicket(),
                        j.getQueue(),
                        j.getConsumerTag(),
                        j.getNoLocal(),
                        j.getNoAck(),
                        j.getExclusive(),
                        j.getNowait(),
                        table(j.getArguments()));
            case AMQImpl.Basic.ConsumeOk j -> new BasicMethod.ConsumeOk(j.getConsumerTag());
            case AMQImpl.Basic.Cancel j -> new BasicMethod.Cancel(j.getConsumerTag(), j.getNowait());
            case AMQImpl.Basic.CancelOk j -> new BasicMethod.CancelOk(j.getConsumerTag());
            case AMQImpl.Basic.Publish j ->
                new BasicMethod.Publish(
                        j.getTicket(), j.getExchange(), j.getRoutingKey(), j.getMandatory(), j.getImmediate());
            case AMQImpl.Basic.Return j ->
                new BasicMethod.Return(j.getReplyCode(), j.getReplyText(), j.getExchange(), j.getRoutingKey());
            case AMQImpl.Basic.Deliver j ->
                new BasicMethod.Deliver(
                        j.getConsumerTag(), j.getDeliveryTag(), j.getRedelivered(), j.getExchange(), j.getRoutingKey());
            case AMQImpl.Basic.Get j -> new BasicMethod.Get(j.getTicket(), j.getQueue(), j.getNoAck());
            case AMQImpl.Basic.GetOk j ->
                new BasicMethod.GetOk(
                        j.getDeliveryTag(),
                        j.getRedelivered(),
                        j.getExchange(),
                        j.getRoutingKey(),
                        Integer.toUnsignedLong(j.getMessageCount()));
            case AMQImpl.Basic.GetEmpty j -> new BasicMethod.GetEmpty(j.getClusterId());
            case AMQImpl.Basic.Ack j -> new BasicMethod.Ack(j.getDeliveryTag(), j.getMultiple());
            case AMQImpl.Basic.Reject j -> new BasicMethod.Reject(j.getDeliveryTag(), j.getRequeue());
            case AMQImpl.Basic.RecoverAsync j -> new BasicMethod.RecoverAsync(j.getRequeue());
            case AMQImpl.Basic.Recover j -> new BasicMethod.Recover(j.getRequeue());
            case AMQImpl.Basic.RecoverOk j -> new BasicMethod.RecoverOk();
            case AMQImpl.Basic.Nack j -> new BasicMethod.Nack(j.getDeliveryTag(), j.getMultiple(), j.getRequeue());
            case AMQImpl.Confirm.Select j -> new ConfirmMethod.Select(j.getNowait());
            case AMQImpl.Confirm.SelectOk j -> new ConfirmMethod.SelectOk();
            case AMQImpl.Tx.Select j -> new TxMethod.Select();
            case AMQImpl.Tx.SelectOk j -> new TxMethod.SelectOk();
            case AMQImpl.Tx.Commit j -> new TxMethod.Commit();
            case AMQImpl.Tx.CommitOk j -> new TxMethod.CommitOk();
            case AMQImpl.Tx.Rollback j -> new TxMethod.Rollback();
            case AMQImpl.Tx.RollbackOk j -> new TxMethod.RollbackOk();
            default -> throw new IllegalArgumentException("no record for " + method.protocolMethodName());
        };
    }
}
