package io.ganglion.broker;

import io.ganglion.amqp.server.AmqpServer;
import io.ganglion.amqp.server.AmqpServerConfig;
import io.ganglion.amqp.server.BrokerBackend;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;

/**
 * Starts the AMQP listener of a broker on its configured interface and port, its connections on the broker's shard
 * loops (see {@link Shard}).
 */
final class AmqpListener {
    private AmqpListener() {}

    static AmqpServer start(BrokerConfig config, BrokerBackend backend, EventLoopGroup loops) throws IOException {
        try {
            return AmqpServer.start(config.amqpHost(), config.amqpPort(), backend, AmqpServerConfig.defaults(), loops);
        } catch (Exception e) {
            throw new IOException(
                    "cannot listen for AMQP on " + config.amqpHost() + ":" + config.amqpPort() + ": " + e.getMessage(),
                    e);
        }
    }
}
