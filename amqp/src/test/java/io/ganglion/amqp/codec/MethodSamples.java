package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.AccessMethod;
import io.ganglion.amqp.protocol.BasicMethod;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ConfirmMethod;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.ExchangeMethod;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.MethodId;
import io.ganglion.amqp.protocol.QueueMethod;
import io.ganglion.amqp.protocol.TxMethod;

/** A random record of every method, from a {@link Gen}. */
final class MethodSamples {
    private MethodSamples() {}

    static Method random(MethodId id, Gen g) {
        return switch (id) {
            case CONNECTION_START ->
                new ConnectionMethod.Start(g.octet(), g.octet(), g.table(), g.longstr(), g.longstr());
            case CONNECTION_START_OK ->
                new ConnectionMethod.StartOk(g.table(), g.shortstr(), g.longstr(), g.shortstr());
            case CONNECTION_SECURE -> new ConnectionMethod.Secure(g.longstr());
            case CONNECTION_SECURE_OK -> new ConnectionMethod.SecureOk(g.longstr());
            case CONNECTION_TUNE -> new ConnectionMethod.Tune(g.ushort(), g.uint(), g.ushort());
            case CONNECTION_TUNE_OK -> new ConnectionMethod.TuneOk(g.ushort(), g.uint(), g.ushort());
            case CONNECTION_OPEN -> new ConnectionMethod.Open(g.shortstr(), g.shortstr(), g.bit());
            case CONNECTION_OPEN_OK -> new ConnectionMethod.OpenOk(g.shortstr());
            case CONNECTION_CLOSE -> new ConnectionMethod.Close(g.ushort(), g.shortstr(), g.ushort(), g.ushort());
            case CONNECTION_CLOSE_OK -> new ConnectionMethod.CloseOk();
            case CONNECTION_BLOCKED -> new ConnectionMethod.Blocked(g.shortstr());
            case CONNECTION_UNBLOCKED -> new ConnectionMethod.Unblocked();
            case CONNECTION_UPDATE_SECRET -> new ConnectionMethod.UpdateSecret(g.longstr(), g.shortstr());
            case CONNECTION_UPDATE_SECRET_OK -> new ConnectionMethod.UpdateSecretOk();
            case CHANNEL_OPEN -> new ChannelMethod.Open(g.shortstr());
            case CHANNEL_OPEN_OK -> new ChannelMethod.OpenOk(g.longstr());
            case CHANNEL_FLOW -> new ChannelMethod.Flow(g.bit());
            case CHANNEL_FLOW_OK -> new ChannelMethod.FlowOk(g.bit());
            case CHANNEL_CLOSE -> new ChannelMethod.Close(g.ushort(), g.shortstr(), g.ushort(), g.ushort());
            case CHANNEL_CLOSE_OK -> new ChannelMethod.CloseOk();
            case ACCESS_REQUEST -> new AccessMethod.Request(g.shortstr(), g.bit(), g.bit(), g.bit(), g.bit(), g.bit());
            case ACCESS_REQUEST_OK -> new AccessMethod.RequestOk(g.ushort());
            case EXCHANGE_DECLARE ->
                new ExchangeMethod.Declare(
                        g.ushort(), g.shortstr(), g.shortstr(), g.bit(), g.bit(), g.bit(), g.bit(), g.bit(), g.table());
            case EXCHANGE_DECLARE_OK -> new ExchangeMethod.DeclareOk();
            case EXCHANGE_DELETE -> new ExchangeMethod.Delete(g.ushort(), g.shortstr(), g.bit(), g.bit());
            case EXCHANGE_DELETE_OK -> new ExchangeMethod.DeleteOk();
            case EXCHANGE_BIND ->
                new ExchangeMethod.Bind(g.ushort(), g.shortstr(), g.shortstr(), g.shortstr(), g.bit(), g.table());
            case EXCHANGE_BIND_OK -> new ExchangeMethod.BindOk();
            case EXCHANGE_UNBIND ->
                new ExchangeMethod.Unbind(g.ushort(), g.shortstr(), g.shortstr(), g.shortstr(), g.bit(), g.table());
            case EXCHANGE_UNBIND_OK -> new ExchangeMethod.UnbindOk();
            case QUEUE_DECLARE ->
                new QueueMethod.Declare(
                        g.ushort(), g.shortstr(), g.bit(), g.bit(), g.bit(), g.bit(), g.bit(), g.table());
            case QUEUE_DECLARE_OK -> new QueueMethod.DeclareOk(g.shortstr(), g.uint(), g.uint());
            case QUEUE_BIND ->
                new QueueMethod.Bind(g.ushort(), g.shortstr(), g.shortstr(), g.shortstr(), g.bit(), g.table());
            case QUEUE_BIND_OK -> new QueueMethod.BindOk();
            case QUEUE_PURGE -> new QueueMethod.Purge(g.ushort(), g.shortstr(), g.bit());
            case QUEUE_PURGE_OK -> new QueueMethod.PurgeOk(g.uint());
            case QUEUE_DELETE -> new QueueMethod.Delete(g.ushort(), g.shortstr(), g.bit(), g.bit(), g.bit());
            case QUEUE_DELETE_OK -> new QueueMethod.DeleteOk(g.uint());
            case QUEUE_UNBIND ->
                new QueueMethod.Unbind(g.ushort(), g.shortstr(), g.shortstr(), g.shortstr(), g.table());
            case QUEUE_UNBIND_OK -> new QueueMethod.UnbindOk();
            case BASIC_QOS -> new BasicMethod.Qos(g.uint(), g.ushort(), g.bit());
            case BASIC_QOS_OK -> new BasicMethod.QosOk();
            case BASIC_CONSUME ->
                new BasicMethod.Consume(
                        g.ushort(), g.shortstr(), g.shortstr(), g.bit(), g.bit(), g.bit(), g.bit(), g.table());
            case BASIC_CONSUME_OK -> new BasicMethod.ConsumeOk(g.shortstr());
            case BASIC_CANCEL -> new BasicMethod.Cancel(g.shortstr(), g.bit());
            case BASIC_CANCEL_OK -> new BasicMethod.CancelOk(g.shortstr());
            case BASIC_PUBLISH -> new BasicMethod.Publish(g.ushort(), g.shortstr(), g.shortstr(), g.bit(), g.bit());
            case BASIC_RETURN -> new BasicMethod.Return(g.ushort(), g.shortstr(), g.shortstr(), g.shortstr());
            case BASIC_DELIVER ->
                new BasicMethod.Deliver(g.shortstr(), g.longlong(), g.bit(), g.shortstr(), g.shortstr());
            case BASIC_GET -> new BasicMethod.Get(g.ushort(), g.shortstr(), g.bit());
            case BASIC_GET_OK -> new BasicMethod.GetOk(g.longlong(), g.bit(), g.shortstr(), g.shortstr(), g.uint());
            case BASIC_GET_EMPTY -> new BasicMethod.GetEmpty(g.shortstr());
            case BASIC_ACK -> new BasicMethod.Ack(g.longlong(), g.bit());
            case BASIC_REJECT -> new BasicMethod.Reject(g.longlong(), g.bit());
            case BASIC_RECOVER_ASYNC -> new BasicMethod.RecoverAsync(g.bit());
            case BASIC_RECOVER -> new BasicMethod.Recover(g.bit());
            case BASIC_RECOVER_OK -> new BasicMethod.RecoverOk();
            case BASIC_NACK -> new BasicMethod.Nack(g.longlong(), g.bit(), g.bit());
            case CONFIRM_SELECT -> new ConfirmMethod.Select(g.bit());
            case CONFIRM_SELECT_OK -> new ConfirmMethod.SelectOk();
            case TX_SELECT -> new TxMethod.Select();
            case TX_SELECT_OK -> new TxMethod.SelectOk();
            case TX_COMMIT -> new TxMethod.Commit();
            case TX_COMMIT_OK -> new TxMethod.CommitOk();
            case TX_ROLLBACK -> new TxMethod.Rollback();
            case TX_ROLLBACK_OK -> new TxMethod.RollbackOk();
        };
    }
}
