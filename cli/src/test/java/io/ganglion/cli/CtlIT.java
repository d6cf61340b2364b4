package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ganglion ctl} against a broker process: users and vhosts managed from the command line. */
class CtlIT {
    @TempDir
    Path dir;

    private static String ctl(BrokerChild broker, int expectedStatus, String... args) {
        PrintStream out = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
            String[] full = new String[args.length + 3];
            full[0] = "ctl";
            full[1] = "--http-port";
            full[2] = Integer.toString(broker.httpPort);
            System.arraycopy(args, 0, full, 3, args.length);
            assertThat(Main.run(full)).as("ctl %s", List.of(args)).isEqualTo(expectedStatus);
            return bytes.toString(StandardCharsets.UTF_8);
        } finally {
            System.setOut(out);
        }
    }

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
