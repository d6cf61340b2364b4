package io.ganglion.amqp.server;

/** What {@code connection.start} tells clients about the server. */
public record ServerInfo(String product, String version, String platform, String clusterName) {}
