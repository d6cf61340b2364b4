package io.ganglion.broker;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** A real broker in this JVM on loopback ports, with its data in a test directory. */
final class TestBroker implements AutoCloseable {
    final Path dataDir;
    final int amqpPort;
    final int httpPort;
    private final Map<String, String> extra;
    private Broker broker;

    TestBroker(Path dataDir) throws Exception {
        this(dataDir, Map.of());
    }

    TestBroker(Path dataDir, Map<String, String> extra) throws Exception {
        this.dataDir = dataDir;
        this.amqpPort = freePort();
        this.httpPort = freePort();
        this.extra = extra;
        start();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    Map<String, String> settings() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("data.dir", dataDir.toString());
        settings.put("amqp.port", Integer.toString(amqpPort));
        settings.put("http.port", Integer.toString(httpPort));
        settings.putAll(extra);
        return settings;
    }

    void start() throws Exception {
        broker = Broker.start(BrokerConfig.load(null, settings()));
    }

    void restart() throws Exception {
        broker.close();
        start();
    }

    ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(amqpPort);
        factory.setAutomaticRecoveryEnabled(false);
        factory.setConnectionTimeout(5_000);
        factory.setChannelRpcTimeout(10_000);
        return factory;
    }

    Connection connect() throws Exception {
        return factory().newConnection();
    }

    @Override
    public void close() {
        broker.close();
    }
}
