package io.ganglion.amqp.protocol;

/** The class ids of AMQP 0-9-1 as RabbitMQ numbers them. */
public final class ClassId {
    public static final int CONNECTION = 10;
    public static final int CHANNEL = 20;
    /** Deprecated by 0-9-1; RabbitMQ still answers {@code access.request}. */
    public static final int ACCESS = 30;

    public static final int EXCHANGE = 40;
    public static final int QUEUE = 50;
    public static final int BASIC = 60;
    /** RabbitMQ extension: publisher confirms. */
    public static final int CONFIRM = 85;

    public static final int TX = 90;

    private ClassId() {}
}
