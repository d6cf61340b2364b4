package io.ganglion.broker;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link TestBroker} shared by the tests of a class ({@code @RegisterExtension static final OneBroker broker}),
 * started before the first and stopped after the last, its data in a temporary folder deleted then.
 */
final class OneBroker implements BeforeAllCallback, AfterAllCallback {
    private Path dir;
    private TestBroker broker;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        dir = Files.createTempDirectory("ganglion-it-");
        broker = new TestBroker(dir.resolve("b"));
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        broker.close();
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    ConnectionFactory factory() {
        return broker.factory();
    }

    Connection connect() throws Exception {
        return broker.connect();
    }

    /** Stops the broker and starts it again on the same data and ports. */
    void restart() throws Exception {
        broker.restart();
    }
}
