package io.ganglion.cli;

import static io.ganglion.cli.ClusterIT.await;
import static io.ganglion.cli.ClusterIT.get;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicated queues ({@code x-queue-type: quorum}, 3 copies, majority_durable) on three broker processes, with the
 * real RabbitMQ client: publishers with confirms and consumers with acks on brokers that survive, and a total-queue
 * check at the end (nothing confirmed lost, nothing unexpected).
 */
class ReplicatedQueueIT {
    @TempDir
    Path dir;

    private List<BrokerChild> brokers = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        brokers = BrokerChild.cluster(dir, 3, 0, 0, 0, 0, List.of("-Xmx256m", "--enable-native-access=ALL-UNNAMED"));
        for (BrokerChild broker : brokers) {
            broker.launch();
        }
        for (BrokerChild broker : brokers) {
            broker.awaitListening();
        }
        for (BrokerChild broker : brokers) {
            await(broker, "/api/nodes", nodes -> {
                int live = 0;
                for (JsonNode node : nodes.path("nodes")) {
                    live += node.path("status").asText().equals("live") ? 1 : 0;
                }
                return live == 3 && !nodes.path("controller").isNull();
            });
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        for (BrokerChild broker : brokers) {
            broker.close();
        }
    }

    @Test
    void shouldConfirmThroughAFollowerLossWithoutANewEpoch() throws Exception {
        try (Connection declaring = connect(brokers.get(0))) {
            declaring.createChannel().queueDeclare("orders", true, false, false, Map.of("x-queue-type", "quorum"));
        }
        JsonNode queue = queue(brokers.get(0), "orders");
        assertThat(queue.path("active").asBoolean())
                .as("activated before declare-ok: %s", queue)
                .isTrue();
        assertThat(queue.path("copies").asInt()).isEqualTo(3);
        String owner = queue.path("owner").asText();
        long epoch = queue.path("epoch").asLong();
        List<String> followers = new ArrayList<>();
        queue.path("followers").forEach(f -> followers.add(f.asText()));
        assertThat(followers).hasSize(2);
        BrokerChild victim = byId(followers.get(0));
        BrokerChild client =
                brokers.stream().filter(b -> b != victim).findFirst().orElseThrow();

        Set<String> consumed = ConcurrentHashMap.newKeySet();
        AtomicInteger unexpected = new AtomicInteger();
        try (Connection publishing = connect(client);
                Connection consuming = connect(client)) {
            Channel publisher = publishing.createChannel();
            publisher.confirmSelect();
            ConcurrentNavigableMap<Long, String> outstanding = new ConcurrentSkipListMap<>();
            Set<String> confirmed = ConcurrentHashMap.newKeySet();
            AtomicInteger nacked = new AtomicInteger();
            publisher.addConfirmListener(new ConfirmListener() {
                @Override
                public void handleAck(long tag, boolean multiple) {
                    settle(tag, multiple, confirmed);
                }

                @Override
                public void handleNack(long tag, boolean multiple) {
                    nacked.incrementAndGet();
                    settle(tag, multiple, ConcurrentHashMap.newKeySet());
                }

                private void settle(long tag, boolean multiple, Set<String> into) {
                    var settled = multiple ? outstanding.headMap(tag, true) : outstanding.subMap(tag, true, tag, true);
                    into.addAll(settled.values());
                    settled.clear();
                }
            });
            Channel consumer = consuming.createChannel();
            consumer.basicQos(100);
            consumer.basicConsume(
                    "orders",
                    false,
                    (tag, delivery) -> {
                        String id = delivery.getProperties().getMessageId();
                        if (id == null || !id.startsWith("m")) {
                            unexpected.incrementAndGet();
                        }
                        consumed.add(id);
                        consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                    },
                    tag -> {});

            int total = 600;
            for (int i = 0; i < total; i++) {
                if (i == total / 3) {
                    victim.kill(); // a follower only: the queue keeps confirming, no new epoch (the hold)
                }
                String id = "m" + i;
                outstanding.put(publisher.getNextPublishSeqNo(), id);
                publisher.basicPublish(
                        "",
                        "orders",
                        new AMQP.BasicProperties.Builder()
                                .messageId(id)
                                .deliveryMode(2)
                                .build(),
                        ("body " + i).getBytes(StandardCharsets.UTF_8));
                if (i % 50 == 0) {
                    Thread.sleep(20);
                }
            }
            assertThat(publisher.waitForConfirms(30_000))
                    .as("every publish confirmed")
                    .isTrue();
            assertThat(nacked.get()).as("nacks").isZero();
            assertThat(confirmed).hasSize(total);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!consumed.containsAll(confirmed) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            Set<String> lost = new java.util.TreeSet<>(confirmed);
            lost.removeAll(consumed);
            assertThat(lost).as("confirmed but never consumed").isEmpty();
            assertThat(unexpected.get()).isZero();
        }
        JsonNode after = queue(client, "orders");
        assertThat(after.path("epoch").asLong())
                .as("the hold kept the epoch: %s", after)
                .isEqualTo(epoch);
        assertThat(after.path("owner").asText()).isEqualTo(owner);
        assertThat(ClusterIT.ctl(client, 0, "queues"))
                .contains("orders\tquorum\ttrue\t" + owner + "\t3 majority_durable\t" + epoch + "\t")
                .contains("\tactive");
    }

    @Test
    void shouldRecoverToANewEpochWhenTheOwnerIsKilled() throws Exception {
        try (Connection declaring = connect(brokers.get(0))) {
            declaring.createChannel().queueDeclare("payments", true, false, false, Map.of("x-queue-type", "quorum"));
        }
        JsonNode queue = queue(brokers.get(0), "payments");
        String owner = queue.path("owner").asText();
        long epoch = queue.path("epoch").asLong();
        BrokerChild victim = byId(owner);
        BrokerChild client =
                brokers.stream().filter(b -> b != victim).findFirst().orElseThrow();
        // a publisher on a surviving broker keeps publishing through the owner's death: every publish is confirmed
        // (re-sent to the new owner, found in its log or appended), none nacked
        Set<String> confirmed = ConcurrentHashMap.newKeySet();
        AtomicInteger nacked = new AtomicInteger();
        try (Connection publishing = connect(client)) {
            Channel publisher = publishing.createChannel();
            publisher.confirmSelect();
            ConcurrentNavigableMap<Long, String> outstanding = new ConcurrentSkipListMap<>();
            publisher.addConfirmListener(new ConfirmListener() {
                @Override
                public void handleAck(long tag, boolean multiple) {
                    var settled = multiple ? outstanding.headMap(tag, true) : outstanding.subMap(tag, true, tag, true);
                    confirmed.addAll(settled.values());
                    settled.clear();
                }

                @Override
                public void handleNack(long tag, boolean multiple) {
                    var settled = multiple ? outstanding.headMap(tag, true) : outstanding.subMap(tag, true, tag, true);
                    nacked.addAndGet(settled.size());
                    settled.clear();
                }
            });
            for (int i = 0; i < 500; i++) {
                if (i == 200) {
                    victim.kill();
                }
                outstanding.put(publisher.getNextPublishSeqNo(), "p" + i);
                publisher.basicPublish(
                        "",
                        "payments",
                        new AMQP.BasicProperties.Builder().messageId("p" + i).build(),
                        ("payment " + i).getBytes(StandardCharsets.UTF_8));
                if (i % 20 == 0) {
                    Thread.sleep(10);
                }
            }
            assertThat(publisher.waitForConfirms(40_000))
                    .as("nacked: %s", nacked.get())
                    .isTrue();
            assertThat(nacked.get()).isZero();
            assertThat(confirmed).hasSize(500);
        }
        JsonNode recovered = await(client, "/api/queues", queues -> {
            for (JsonNode q : queues) {
                if (q.path("name").asText().equals("payments")) {
                    return q.path("active").asBoolean() && q.path("epoch").asLong() > epoch;
                }
            }
            return false;
        });
        Set<String> consumed = ConcurrentHashMap.newKeySet();
        try (Connection consuming = connect(client)) {
            Channel consumer = consuming.createChannel();
            consumer.basicConsume(
                    "payments",
                    false,
                    (tag, delivery) -> {
                        consumed.add(delivery.getProperties().getMessageId());
                        consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                    },
                    tag -> {});
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!consumed.containsAll(confirmed) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
        }
        Set<String> lost = new java.util.TreeSet<>(confirmed);
        lost.removeAll(consumed);
        assertThat(lost).as("confirmed but never consumed after %s", recovered).isEmpty();
    }

    private BrokerChild byId(String id) {
        return brokers.stream().filter(b -> b.nodeId().equals(id)).findFirst().orElseThrow();
    }

    private static JsonNode queue(BrokerChild broker, String name) throws Exception {
        for (JsonNode queue : get(broker, "/api/queues")) {
            if (queue.path("name").asText().equals(name)) {
                return queue;
            }
        }
        throw new AssertionError("no queue " + name + " on " + broker.nodeId());
    }

    private static Connection connect(BrokerChild broker) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.amqpPort);
        return factory.newConnection();
    }
}
