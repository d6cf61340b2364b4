package io.ganglion.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.ganglion.cli.BrokerChild;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A backlog in a small heap: starts a broker with {@code -Xmx256m}, publishes a backlog with confirms, reports the
 * broker's live heap after a full GC, then consumes the whole backlog. Shows that a queue keeps offsets, not bodies.
 */
@Command(
        name = "backlog",
        mixinStandardHelpOptions = true,
        description = "Publish a large backlog into a broker with a small heap, then drain it.")
final class BacklogBench implements java.util.concurrent.Callable<Integer> {
    @Option(names = "--messages", defaultValue = "1000000", description = "backlog size (default ${DEFAULT-VALUE})")
    int messages;

    @Option(names = "--size", defaultValue = "1024", description = "body bytes (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--heap", defaultValue = "256m", description = "broker -Xmx (default ${DEFAULT-VALUE})")
    String heap;

    @Option(names = "--dir", description = "data directory (default: a temporary one, deleted after)")
    Path dir;

    @Override
    public Integer call() throws Exception {
        Path data = dir != null ? dir : Files.createTempDirectory("ganglion-backlog");
        try {
            return run(data);
        } finally {
            if (dir == null) {
                deleteTree(data);
            }
        }
    }

    /** Deletes a temporary folder the bench made, with what it holds; what cannot be deleted stays. */
    static void deleteTree(Path root) throws java.io.IOException {
        try (var paths = Files.walk(root)) {
            paths.sorted(java.util.Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        }
    }

    private int run(Path data) throws Exception {
        try (BrokerChild broker = new BrokerChild(data, List.of("-Xmx" + heap)).start()) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.amqpPort);
            factory.setAutomaticRecoveryEnabled(false);
            byte[] body = new byte[size];
            long publishStart = System.nanoTime();
            try (Connection connection = factory.newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare("backlog", true, false, false, null);
                publishConfirmed(channel, "backlog", messages, body, i -> {
                    if (i % 100_000 == 0 && i > 0) {
                        System.out.printf("published %,d%n", i);
                    }
                    return null;
                });
            }
            double publishSeconds = (System.nanoTime() - publishStart) / 1e9;
            runJcmd(broker.pid());
            JsonNode overview = overview(broker.httpPort);
            long live = overview.path("heap_live_after_gc_bytes").asLong();
            long max = overview.path("heap_max_bytes").asLong();
            System.out.printf(
                    "backlog: %,d messages of %d B published in %.1f s (%,.0f msg/s)%n",
                    messages, size, publishSeconds, messages / publishSeconds);
            System.out.printf(
                    "broker heap after full GC: %.1f MiB live of %.1f MiB max (%.1f bytes per message)%n",
                    live / 1048576.0, max / 1048576.0, (double) live / messages);
            long drainStart = System.nanoTime();
            long consumed;
            try (Connection connection = factory.newConnection()) {
                Channel channel = connection.createChannel();
                channel.basicQos(1_000);
                CountDownLatch all = new CountDownLatch(messages);
                AtomicLong count = new AtomicLong();
                channel.basicConsume(
                        "backlog",
                        false,
                        (tag, delivery) -> {
                            long n = count.incrementAndGet();
                            if (n % 500 == 0 || n == messages) {
                                channel.basicAck(delivery.getEnvelope().getDeliveryTag(), true);
                            }
                            all.countDown();
                        },
                        tag -> {});
                all.await(600, TimeUnit.SECONDS);
                consumed = count.get();
            }
            double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
            System.out.printf(
                    "drained %,d messages in %.1f s (%,.0f msg/s); broker alive: %b%n",
                    consumed, drainSeconds, consumed / drainSeconds, broker.alive());
            boolean ok = consumed == messages && broker.alive();
            System.out.println(ok ? "backlog bench: 1 passed, 0 failed" : "backlog bench: 0 passed, 1 failed");
            return ok ? 0 : 1;
        }
    }

    /**
     * Publishes {@code count} messages of {@code body} to {@code queue} with confirms, at most 2,000 unconfirmed, each
     * with the properties {@code properties} gives for its index; returns once all are confirmed (a nack fails).
     */
    static void publishConfirmed(
            Channel channel,
            String queue,
            int count,
            byte[] body,
            java.util.function.IntFunction<com.rabbitmq.client.AMQP.BasicProperties> properties)
            throws Exception {
        channel.confirmSelect();
        Semaphore window = new Semaphore(2_000);
        AtomicLong confirmed = new AtomicLong();
        channel.addConfirmListener(
                (tag, multiple) -> {
                    long done = multiple ? tag - confirmed.get() : 1;
                    confirmed.addAndGet(done);
                    window.release((int) done);
                },
                (tag, multiple) -> {
                    throw new IllegalStateException("nack " + tag);
                });
        for (int i = 0; i < count; i++) {
            window.acquire();
            channel.basicPublish("", queue, properties.apply(i), body);
        }
        channel.waitForConfirmsOrDie(120_000);
    }

    private static void runJcmd(long pid) throws Exception {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.run")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start()
                .waitFor(60, TimeUnit.SECONDS);
    }

    private static JsonNode overview(int port) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/overview"))
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                .build();
        HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        return new ObjectMapper().readTree(response.body());
    }
}
