package io.ganglion.cli;

import static io.ganglion.cli.TestCluster.ctl;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ganglion ctl} against a broker process: users and vhosts managed from the command line. */
class CtlIT {
    @TempDir
    Path dir;

    @Test
    void shouldManageUsersAndVhosts() throws Exception {
        try (BrokerChild broker = new BrokerChild(dir.resolve("b"), List.of("-Xmx256m"))) {
            broker.start();
            assertThat(ctl(broker, 0, "status")).contains("node: ganglion-1").contains("version: 0.1.0");
            ctl(broker, 0, "vhosts", "add", "shop");
            ctl(broker, 0, "users", "add", "alice", "s3cret");
            assertThat(ctl(broker, 0, "vhosts", "list")).contains("shop");
            assertThat(ctl(broker, 0, "users", "list")).contains("alice").contains("guest");

            ConnectionFactory factory = new ConnectionFactory();
            factory.setPort(broker.amqpPort);
            factory.setUsername("alice");
            factory.setPassword("s3cret");
            factory.setVirtualHost("shop");
            try (Connection connection = factory.newConnection()) {
                connection.createChannel().queueDeclare("orders", true, false, false, null);
            }
            assertThat(ctl(broker, 0, "queues")).contains("shop\torders\tclassic\ttrue");

            ctl(broker, 0, "users", "delete", "alice");
            ctl(broker, 1, "users", "delete", "alice");
            ctl(broker, 2, "vhosts", "rename", "shop");
        }
    }
}
