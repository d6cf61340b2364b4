package io.ganglion.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.ganglion.cli.BrokerChild;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A mass expiry beside a live queue: fills one queue with {@code --messages} messages whose {@code expiration} makes
 * them all expire at one moment, while a probe publishes to another queue of the same broker one message at a time
 * with confirms. Reports the probe's confirm latency (p50, p99, max) in the seconds before the moment (the control)
 * and from the moment until the full queue is empty, and how long the expiry took.
 */
@Command(
        name = "expiry",
        mixinStandardHelpOptions = true,
        description = "Expire a large queue at once and measure the confirms of another queue meanwhile.")
final class ExpiryBench implements java.util.concurrent.Callable<Integer> {
    @Option(
            names = "--messages",
            defaultValue = "1000000",
            description = "messages to expire (default ${DEFAULT-VALUE})")
    int messages;

    @Option(names = "--size", defaultValue = "100", description = "body bytes (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--type", defaultValue = "quorum", description = "queue type (default ${DEFAULT-VALUE})")
    String type;

    @Option(
            names = "--expire-after-s",
            defaultValue = "75",
            description = "seconds from the start to the moment every message expires; the fill must end before it"
                    + " (default ${DEFAULT-VALUE})")
    int expireAfterSeconds;

    @Option(names = "--heap", defaultValue = "1g", description = "broker -Xmx (default ${DEFAULT-VALUE})")
    String heap;

    @Option(
            names = "--bound-ms",
            defaultValue = "50",
            description = "longest probe confirm allowed while the queue expires (default ${DEFAULT-VALUE})")
    long boundMs;

    /** One probe confirm: when it was sent (ns) and how long it took (ns). */
    private record Sample(long atNanos, long latencyNanos) {}

    @Override
    public Integer call() throws Exception {
        Path data = Files.createTempDirectory("ganglion-expiry");
        try (BrokerChild broker = new BrokerChild(data, List.of("-Xmx" + heap)).start()) {
            return run(broker);
        } finally {
            BacklogBench.deleteTree(data);
        }
    }

    private int run(BrokerChild broker) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.amqpPort);
        factory.setAutomaticRecoveryEnabled(false);
        long start = System.nanoTime();
        long deadlineMs = System.currentTimeMillis() + expireAfterSeconds * 1000L;
        long deadlineNanos = start + expireAfterSeconds * 1_000_000_000L;
        List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
        try (Connection filling = factory.newConnection();
                Connection probing = factory.newConnection()) {
            Channel fill = filling.createChannel();
            fill.queueDeclare("expiring", true, false, false, Map.of("x-queue-type", type));
            Channel probe = probing.createChannel();
            probe.queueDeclare("probe", true, false, false, Map.of("x-queue-type", type));
            probe.confirmSelect();
            probing.createChannel().basicConsume("probe", true, (tag, delivery) -> {}, tag -> {});
            Thread prober = Thread.ofPlatform().daemon().start(() -> probe(probe, samples));
            double fillSeconds = fill(fill, deadlineMs);
            if (System.nanoTime() >= deadlineNanos) {
                System.out.printf(
                        "the fill took %.1f s, past --expire-after-s %d: raise it%n", fillSeconds, expireAfterSeconds);
                return 2;
            }
            System.out.printf(
                    "filled %,d messages of %d B in %.1f s; all expire at +%d s%n",
                    messages, size, fillSeconds, expireAfterSeconds);
            Thread.sleep(Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000));
            long drainedNanos;
            Channel counts = filling.createChannel();
            while (counts.queueDeclarePassive("expiring").getMessageCount() > 0) {
                Thread.sleep(5);
            }
            drainedNanos = System.nanoTime();
            Thread.sleep(1_000);
            prober.interrupt();
            prober.join(5_000);
            return report(samples, deadlineNanos, drainedNanos);
        }
    }

    /** Publishes the messages with confirms, each expiring at {@code deadlineMs}; returns the seconds it took. */
    private double fill(Channel channel, long deadlineMs) throws Exception {
        long started = System.nanoTime();
        BacklogBench.publishConfirmed(channel, "expiring", messages, new byte[size], i -> {
            long left = Math.max(1, deadlineMs - System.currentTimeMillis());
            return new AMQP.BasicProperties.Builder()
                    .expiration(Long.toString(left))
                    .build();
        });
        return (System.nanoTime() - started) / 1e9;
    }

    private static void probe(Channel channel, List<Sample> samples) {
        byte[] body = new byte[100];
        try {
            while (!Thread.currentThread().isInterrupted()) {
                long sent = System.nanoTime();
                channel.basicPublish("", "probe", null, body);
                channel.waitForConfirmsOrDie(10_000);
                samples.add(new Sample(sent, System.nanoTime() - sent));
                Thread.sleep(2);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            System.out.println("probe stopped: " + e);
        }
    }

    private int report(List<Sample> samples, long deadlineNanos, long drainedNanos) {
        List<Long> control = new ArrayList<>();
        List<Long> expiring = new ArrayList<>();
        synchronized (samples) {
            for (Sample sample : samples) {
                long end = sample.atNanos() + sample.latencyNanos();
                if (sample.atNanos() >= deadlineNanos - 10_000_000_000L && end < deadlineNanos) {
                    control.add(sample.latencyNanos());
                } else if (end >= deadlineNanos && sample.atNanos() <= drainedNanos) {
                    expiring.add(sample.latencyNanos());
                }
            }
        }
        double expirySeconds = (drainedNanos - deadlineNanos) / 1e9;
        System.out.printf(
                "expired %,d messages in %.3f s after their moment (%,.0f msg/s)%n",
                messages, expirySeconds, messages / Math.max(expirySeconds, 1e-3));
        System.out.println("probe confirms, 10 s before the moment: " + summary(control));
        System.out.println("probe confirms, while the queue expired: " + summary(expiring));
        long max = expiring.stream().mapToLong(Long::longValue).max().orElse(0) / 1_000_000;
        boolean ok = !expiring.isEmpty() && max <= boundMs;
        System.out.printf(
                "expiry bench: longest probe confirm while expiring %d ms against a bound of %d ms: %s%n",
                max, boundMs, ok ? "1 passed, 0 failed" : "0 passed, 1 failed");
        return ok ? 0 : 1;
    }

    private static String summary(List<Long> latencies) {
        if (latencies.isEmpty()) {
            return "no samples";
        }
        List<Long> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        return String.format(
                "%d samples, p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                sorted.size(),
                sorted.get(sorted.size() / 2) / 1e6,
                sorted.get(Math.min(sorted.size() - 1, (int) (sorted.size() * 0.99))) / 1e6,
                sorted.get(sorted.size() - 1) / 1e6);
    }
}
