package io.ganglion.amqp.protocol;

import java.util.Optional;

/**
 * Every method of AMQP 0-9-1 as RabbitMQ speaks it, RabbitMQ's extensions included: its class and method ids, its name
 * in the spec's spelling, whether content (a header and a body) follows it, and whether it is synchronous: whether the
 * peer must answer it with its {@code -ok} method ({@code rabbit_framing_amqp_0_9_1:is_method_synchronous/1}). Methods
 * with a {@code nowait} bit are synchronous only when it is clear; {@link Method#isSynchronous()} reads the bit.
 *
 * <p>Not here: {@code basic.credit} (60, 200-202), which RabbitMQ 3 carried for its AMQP 1.0 plugin and RabbitMQ 4
 * dropped; it decodes as an unknown method.
 */
public enum MethodId {
    CONNECTION_START(ClassId.CONNECTION, 10, "connection.start", false, true),
    CONNECTION_START_OK(ClassId.CONNECTION, 11, "connection.start-ok", false, false),
    CONNECTION_SECURE(ClassId.CONNECTION, 20, "connection.secure", false, true),
    CONNECTION_SECURE_OK(ClassId.CONNECTION, 21, "connection.secure-ok", false, false),
    CONNECTION_TUNE(ClassId.CONNECTION, 30, "connection.tune", false, true),
    CONNECTION_TUNE_OK(ClassId.CONNECTION, 31, "connection.tune-ok", false, false),
    CONNECTION_OPEN(ClassId.CONNECTION, 40, "connection.open", false, true),
    CONNECTION_OPEN_OK(ClassId.CONNECTION, 41, "connection.open-ok", false, false),
    CONNECTION_CLOSE(ClassId.CONNECTION, 50, "connection.close", false, true),
    CONNECTION_CLOSE_OK(ClassId.CONNECTION, 51, "connection.close-ok", false, false),
    CONNECTION_BLOCKED(ClassId.CONNECTION, 60, "connection.blocked", false, false),
    CONNECTION_UNBLOCKED(ClassId.CONNECTION, 61, "connection.unblocked", false, false),
    CONNECTION_UPDATE_SECRET(ClassId.CONNECTION, 70, "connection.update-secret", false, true),
    CONNECTION_UPDATE_SECRET_OK(ClassId.CONNECTION, 71, "connection.update-secret-ok", false, false),
    CHANNEL_OPEN(ClassId.CHANNEL, 10, "channel.open", false, true),
    CHANNEL_OPEN_OK(ClassId.CHANNEL, 11, "channel.open-ok", false, false),
    CHANNEL_FLOW(ClassId.CHANNEL, 20, "channel.flow", false, true),
    CHANNEL_FLOW_OK(ClassId.CHANNEL, 21, "channel.flow-ok", false, false),
    CHANNEL_CLOSE(ClassId.CHANNEL, 40, "channel.close", false, true),
    CHANNEL_CLOSE_OK(ClassId.CHANNEL, 41, "channel.close-ok", false, false),
    ACCESS_REQUEST(ClassId.ACCESS, 10, "access.request", false, true),
    ACCESS_REQUEST_OK(ClassId.ACCESS, 11, "access.request-ok", false, false),
    EXCHANGE_DECLARE(ClassId.EXCHANGE, 10, "exchange.declare", false, true),
    EXCHANGE_DECLARE_OK(ClassId.EXCHANGE, 11, "exchange.declare-ok", false, false),
    EXCHANGE_DELETE(ClassId.EXCHANGE, 20, "exchange.delete", false, true),
    EXCHANGE_DELETE_OK(ClassId.EXCHANGE, 21, "exchange.delete-ok", false, false),
    EXCHANGE_BIND(ClassId.EXCHANGE, 30, "exchange.bind", false, true),
    EXCHANGE_BIND_OK(ClassId.EXCHANGE, 31, "exchange.bind-ok", false, false),
    EXCHANGE_UNBIND(ClassId.EXCHANGE, 40, "exchange.unbind", false, true),
    EXCHANGE_UNBIND_OK(ClassId.EXCHANGE, 51, "exchange.unbind-ok", false, false),
    QUEUE_DECLARE(ClassId.QUEUE, 10, "queue.declare", false, true),
    QUEUE_DECLARE_OK(ClassId.QUEUE, 11, "queue.declare-ok", false, false),
    QUEUE_BIND(ClassId.QUEUE, 20, "queue.bind", false, true),
    QUEUE_BIND_OK(ClassId.QUEUE, 21, "queue.bind-ok", false, false),
    QUEUE_PURGE(ClassId.QUEUE, 30, "queue.purge", false, true),
    QUEUE_PURGE_OK(ClassId.QUEUE, 31, "queue.purge-ok", false, false),
    QUEUE_DELETE(ClassId.QUEUE, 40, "queue.delete", false, true),
    QUEUE_DELETE_OK(ClassId.QUEUE, 41, "queue.delete-ok", false, false),
    QUEUE_UNBIND(ClassId.QUEUE, 50, "queue.unbind", false, true),
    QUEUE_UNBIND_OK(ClassId.QUEUE, 51, "queue.unbind-ok", false, false),
    BASIC_QOS(ClassId.BASIC, 10, "basic.qos", false, true),
    BASIC_QOS_OK(ClassId.BASIC, 11, "basic.qos-ok", false, false),
    BASIC_CONSUME(ClassId.BASIC, 20, "basic.consume", false, true),
    BASIC_CONSUME_OK(ClassId.BASIC, 21, "basic.consume-ok", false, false),
    BASIC_CANCEL(ClassId.BASIC, 30, "basic.cancel", false, true),
    BASIC_CANCEL_OK(ClassId.BASIC, 31, "basic.cancel-ok", false, false),
    BASIC_PUBLISH(ClassId.BASIC, 40, "basic.publish", true, false),
    BASIC_RETURN(ClassId.BASIC, 50, "basic.return", true, false),
    BASIC_DELIVER(ClassId.BASIC, 60, "basic.deliver", true, false),
    BASIC_GET(ClassId.BASIC, 70, "basic.get", false, true),
    BASIC_GET_OK(ClassId.BASIC, 71, "basic.get-ok", true, false),
    BASIC_GET_EMPTY(ClassId.BASIC, 72, "basic.get-empty", false, false),
    BASIC_ACK(ClassId.BASIC, 80, "basic.ack", false, false),
    BASIC_REJECT(ClassId.BASIC, 90, "basic.reject", false, false),
    BASIC_RECOVER_ASYNC(ClassId.BASIC, 100, "basic.recover-async", false, false),
    BASIC_RECOVER(ClassId.BASIC, 110, "basic.recover", false, true),
    BASIC_RECOVER_OK(ClassId.BASIC, 111, "basic.recover-ok", false, false),
    BASIC_NACK(ClassId.BASIC, 120, "basic.nack", false, false),
    CONFIRM_SELECT(ClassId.CONFIRM, 10, "confirm.select", false, true),
    CONFIRM_SELECT_OK(ClassId.CONFIRM, 11, "confirm.select-ok", false, false),
    TX_SELECT(ClassId.TX, 10, "tx.select", false, true),
    TX_SELECT_OK(ClassId.TX, 11, "tx.select-ok", false, false),
    TX_COMMIT(ClassId.TX, 20, "tx.commit", false, true),
    TX_COMMIT_OK(ClassId.TX, 21, "tx.commit-ok", false, false),
    TX_ROLLBACK(ClassId.TX, 30, "tx.rollback", false, true),
    TX_ROLLBACK_OK(ClassId.TX, 31, "tx.rollback-ok", false, false);

    private static final int MAX_METHOD_ID = 120;
    private static final MethodId[][] BY_CLASS = new MethodId[ClassId.TX + 1][];

    static {
        for (MethodId id : values()) {
            MethodId[] methods = BY_CLASS[id.classId];
            if (methods == null) {
                methods = new MethodId[MAX_METHOD_ID + 1];
                BY_CLASS[id.classId] = methods;
            }
            methods[id.methodId] = id;
        }
    }

    private final int classId;
    private final int methodId;
    private final String amqpName;
    private final boolean hasContent;
    private final boolean synchronous;

    MethodId(int classId, int methodId, String amqpName, boolean hasContent, boolean synchronous) {
        this.classId = classId;
        this.methodId = methodId;
        this.amqpName = amqpName;
        this.hasContent = hasContent;
        this.synchronous = synchronous;
    }

    public int classId() {
        return classId;
    }

    public int methodId() {
        return methodId;
    }

    /** The name in the spec's spelling: {@code "basic.publish"}, {@code "connection.start-ok"}. */
    public String amqpName() {
        return amqpName;
    }

    /** Whether a content header and body frames follow the method frame. */
    public boolean hasContent() {
        return hasContent;
    }

    /** Whether the peer must answer with the {@code -ok} method, when {@code nowait} (if any) is clear. */
    public boolean synchronous() {
        return synchronous;
    }

    /** The method with these ids, if AMQP 0-9-1 as RabbitMQ speaks it has one. */
    public static Optional<MethodId> of(int classId, int methodId) {
        return Optional.ofNullable(lookup(classId, methodId));
    }

    /** The method with these ids, or {@code null}: for the decoder's hot path. */
    public static MethodId lookup(int classId, int methodId) {
        if (classId < 0 || classId >= BY_CLASS.length || methodId < 0 || methodId > MAX_METHOD_ID) {
            return null;
        }
        MethodId[] methods = BY_CLASS[classId];
        return methods == null ? null : methods[methodId];
    }
}
