package io.ganglion.broker;

import io.ganglion.amqp.server.AmqpServer;
import io.ganglion.amqp.server.AmqpServerConfig;
import io.ganglion.amqp.server.BrokerBackend;
import java.io.IOException;

/** Starts the AMQP listener of a broker on its configured interface and port. */
final class AmqpListener {
    private AmqpListener() {}

    static AmqpServer start(BrokerConfig config, BrokerBackend backend) throws IOException {
        try {
            return AmqpServer.start(config.amqpHost(), config.amqpPort(), backend, AmqpServerConfig.defaults());
        } catch (Exception e) {
            throw new IOException(
                    "cannot listen for AMQP on " + config.amqpHost() + ":" + config.amqpPort() + ": " + e.getMessage(),
                    e);
        }
    }
}
