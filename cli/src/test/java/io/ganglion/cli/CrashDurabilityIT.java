package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.ganglion.testing.Poll;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 a broker while a publisher with confirms is running, restart it, and check with a total-queue check that every
 * confirmed message is there: none lost; duplicates and unconfirmed extras are counted, never unexpected ids.
 */
class CrashDurabilityIT {
    @TempDir
    Path dir;

    @Test
    void shouldKeepEveryConfirmedMessageAcrossKillNine() throws Exception {
        int rounds = Integer.getInteger("ganglion.crashRounds", 3);
        SplittableRandom random = new SplittableRandom(Long.getLong("ganglion.seed", 42));
        Set<Long> confirmed = new ConcurrentSkipListSet<>();
        Set<Long> published = new ConcurrentSkipListSet<>();
        try (BrokerChild broker = new BrokerChild(dir.resolve("b"), List.of("-Xmx256m"))) {
            broker.start();
            try (Connection connection = factory(broker).newConnection()) {
                connection.createChannel().queueDeclare("crash.q", true, false, false, null);
            }
            java.util.concurrent.atomic.AtomicLong ids = new java.util.concurrent.atomic.AtomicLong();
            for (int round = 0; round < rounds; round++) {
                int killAfter = random.nextInt(500, 3_000);
                long target = confirmed.size() + killAfter;
                Connection connection = factory(broker).newConnection();
                Channel channel = connection.createChannel();
                channel.confirmSelect();
                java.util.concurrent.ConcurrentNavigableMap<Long, Long> outstanding =
                        new java.util.concurrent.ConcurrentSkipListMap<>();
                java.util.concurrent.Semaphore window = new java.util.concurrent.Semaphore(500);
                channel.addConfirmListener(
                        (tag, multiple) -> {
                            var acked = multiple
                                    ? outstanding.headMap(tag, true)
                                    : outstanding.subMap(tag, true, tag, true);
                            confirmed.addAll(acked.values());
                            window.release(acked.size());
                            acked.clear();
                        },
                        (tag, multiple) -> {
                            var nacked = multiple
                                    ? outstanding.headMap(tag, true)
                                    : outstanding.subMap(tag, true, tag, true);
                            window.release(nacked.size());
                            nacked.clear();
                        });
                Thread publisher = new Thread(() -> {
                    try {
                        while (!Thread.currentThread().isInterrupted()) {
                            window.acquire();
                            long id = ids.getAndIncrement();
                            published.add(id);
                            outstanding.put(channel.getNextPublishSeqNo(), id);
                            channel.basicPublish(
                                    "",
                                    "crash.q",
                                    null,
                                    ByteBuffer.allocate(100).putLong(id).array());
                        }
                    } catch (Exception stopped) {
                        // the kill closed the connection under the publisher, or the test interrupted it
                    }
                });
                publisher.start();
                Poll.within(Duration.ofSeconds(60), Duration.ofMillis(1), () -> confirmed.size() >= target);
                broker.kill(); // mid-stream: publishes are in flight
                publisher.interrupt();
                publisher.join(10_000);
                try {
                    connection.abort();
                } catch (Exception ignored) {
                    // already dead
                }
                broker.start();
            }
            Set<Long> seen = new HashSet<>();
            int duplicates = 0;
            try (Connection connection = factory(broker).newConnection()) {
                Channel channel = connection.createChannel();
                GetResponse response;
                while ((response = channel.basicGet("crash.q", true)) != null) {
                    long id = ByteBuffer.wrap(response.getBody()).getLong();
                    assertThat(published).as("unexpected id %d", id).contains(id);
                    if (!seen.add(id)) {
                        duplicates++;
                    }
                }
            }
            Set<Long> lost = new HashSet<>(confirmed);
            lost.removeAll(seen);
            System.out.printf(
                    "crash test: rounds=%d published=%d confirmed=%d consumed=%d lost=%d duplicates=%d%n",
                    rounds, published.size(), confirmed.size(), seen.size(), lost.size(), duplicates);
            assertThat(confirmed).as("the publisher saw confirms").hasSizeGreaterThanOrEqualTo(500 * rounds);
            assertThat(lost).as("confirmed but lost").isEmpty();
        }
    }

    private static ConnectionFactory factory(BrokerChild broker) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.amqpPort);
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }
}
