package io.ganglion.amqp.server;

/**
 * What {@code connection.start} tells clients about the server: {@code product} and {@code information} name Ganglion
 * and its {@code version}; the {@code version} property itself is {@link #COMPATIBLE_VERSION}, the RabbitMQ version
 * whose AMQP behaviour Ganglion follows, because client libraries choose code paths by the broker's version.
 */
public record ServerInfo(String product, String version, String platform, String clusterName) {
    /** The RabbitMQ release whose AMQP 0-9-1 answers Ganglion gives, sent as the {@code version} property. */
    public static final String COMPATIBLE_VERSION = "3.10.8";

    /** The {@code information} property: the product, its own version, and what it is compatible with. */
    public String information() {
        return product + " " + version + ", a replicated broker speaking AMQP 0-9-1 as RabbitMQ " + COMPATIBLE_VERSION
                + " does";
    }
}
