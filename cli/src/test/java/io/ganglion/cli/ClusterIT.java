package io.ganglion.cli;

import static io.ganglion.cli.TestCluster.EVERY;
import static io.ganglion.cli.TestCluster.WAIT;
import static io.ganglion.cli.TestCluster.await;
import static io.ganglion.cli.TestCluster.ctl;
import static io.ganglion.cli.TestCluster.ctlErr;
import static io.ganglion.cli.TestCluster.get;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.ganglion.testing.ClusterTest;
import io.ganglion.testing.OwnPublishes;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three broker processes on loopback forming one cluster: the metadata log on Ratis, liveness through the peer link,
 * the controller on the Ratis leader. Brokers are killed with SIGKILL.
 */
@ClusterTest
class ClusterIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private List<BrokerChild> brokers = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        brokers = TestCluster.start(dir, 3);
    }

    @AfterEach
    void stopCluster() throws Exception {
        BrokerChild.stopTogether(brokers);
    }

    @Test
    void shouldKeepMetadataAndElectAnotherControllerWhenTheControllerIsKilled() throws Exception {
        BrokerChild first = brokers.get(0);
        String controller = get(first, "/api/nodes").path("controller").asText();
        // declared through a broker that survives: a classic queue lives on the broker it was declared through
        BrokerChild declaring = brokers.stream()
                .filter(b -> !b.nodeId().equals(controller))
                .findFirst()
                .orElseThrow();
        try (Connection connection = connect(declaring)) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("orders", "topic", true);
            channel.queueDeclare("eu-orders", true, false, false, null);
            channel.queueBind("eu-orders", "orders", "eu.#");
        }
        ctl(brokers.get(1), 0, "settings", "set", "replication.follower_loss_hold_ms", "4321");
        for (BrokerChild broker : brokers) {
            await(
                    broker,
                    "/api/settings/replication.follower_loss_hold_ms",
                    s -> s.path("value").asLong() == 4321);
        }

        BrokerChild killed = byId(controller);
        long incarnation =
                node(get(first, "/api/nodes"), controller).path("incarnation").asLong();
        killed.kill();
        List<BrokerChild> survivors = brokers.stream().filter(b -> b != killed).toList();
        for (BrokerChild broker : survivors) {
            JsonNode nodes = await(
                    broker,
                    "/api/nodes",
                    n -> !n.path("controller").asText(controller).equals(controller)
                            && node(n, controller).path("status").asText().equals("down"));
            assertThat(nodes.path("controller").asText())
                    .isIn(survivors.stream().map(BrokerChild::nodeId).toList());
        }
        for (BrokerChild broker : survivors) {
            try (Connection connection = connect(broker)) {
                Channel channel = connection.createChannel();
                channel.exchangeDeclarePassive("orders");
                assertThat(channel.queueDeclarePassive("eu-orders").getQueue()).isEqualTo("eu-orders");
                // the binding survived too: a publish through each survivor is routed to the queue
                long before = channel.queueDeclarePassive("eu-orders").getMessageCount();
                channel.confirmSelect();
                channel.basicPublish("orders", "eu.de", null, "routed".getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(10_000);
                assertThat(channel.queueDeclarePassive("eu-orders").getMessageCount())
                        .isEqualTo(before + 1);
            }
            assertThat(get(broker, "/api/settings/replication.follower_loss_hold_ms")
                            .path("value")
                            .asLong())
                    .isEqualTo(4321);
        }
        // the new controller commits: a declaration through a survivor is seen by the other survivor
        try (Connection connection = connect(survivors.get(0))) {
            connection.createChannel().queueDeclare("after-failover", true, false, false, null);
        }
        try (Connection connection = connect(survivors.get(1))) {
            assertThat(connection
                            .createChannel()
                            .queueDeclarePassive("after-failover")
                            .getQueue())
                    .isEqualTo("after-failover");
        }

        killed.launch().awaitListening();
        for (BrokerChild broker : brokers) {
            await(
                    broker,
                    "/api/nodes",
                    n -> node(n, controller).path("status").asText().equals("live")
                            && node(n, controller).path("incarnation").asLong() == incarnation + 1);
        }
        // the restarted broker reaches the queue's home once their peer link is up again (within about a second)
        Poll.until(
                WAIT,
                EVERY,
                () -> {
                    try (Connection connection = connect(killed)) {
                        return connection
                                .createChannel()
                                .queueDeclarePassive("after-failover")
                                .getQueue()
                                .equals("after-failover");
                    } catch (java.io.IOException e) {
                        return false;
                    }
                },
                () -> "the restarted broker reaching after-failover");
    }

    /**
     * A connection sees its own publishes also when the queue is owned by another broker: each queue is declared
     * through broker 1 (a classic queue lives there, a quorum queue and a stream are owned there, client-local) and
     * used through broker 2.
     */
    @Test
    void shouldLetAConnectionSeeItsOwnPublishesToAQueueOwnedByAnotherBroker() throws Exception {
        try (Connection owning = connect(brokers.get(0));
                Connection client = connect(brokers.get(1))) {
            OwnPublishes.checkQueue(owning, client, "own.classic", null);
            OwnPublishes.checkQueue(owning, client, "own.quorum", java.util.Map.of("x-queue-type", "quorum"));
            OwnPublishes.checkStream(owning, client, "own.stream");
        }
        // owned by the declaring broker, not the client's (the queues were deleted by the checks)
        assertThat(TestCluster.queue(brokers.get(1), "own.stream").path("owner").asText())
                .isEqualTo(brokers.get(0).nodeId());
    }

    @Test
    void shouldMarkADrainingNodeAndRefuseBadSettings() throws Exception {
        assertThat(ctl(brokers.get(0), 0, "node", "drain", "ganglion-3")).contains("ganglion-3 draining");
        for (BrokerChild broker : brokers) {
            await(
                    broker,
                    "/api/nodes",
                    n -> node(n, "ganglion-3").path("draining").asBoolean());
        }
        assertThat(ctl(brokers.get(2), 0, "nodes")).contains("ganglion-3\tlive").contains("\tyes\t");
        ctl(brokers.get(1), 0, "node", "undrain", "ganglion-3");
        for (BrokerChild broker : brokers) {
            await(
                    broker,
                    "/api/nodes",
                    n -> !node(n, "ganglion-3").path("draining").asBoolean());
        }
        ctl(brokers.get(0), 1, "node", "drain", "no-such-node");

        String unknown = ctlErr(brokers.get(0), 1, "settings", "set", "no.such.setting", "5");
        assertThat(unknown).contains("unknown setting 'no.such.setting'");
        String invalid = ctlErr(brokers.get(0), 1, "settings", "set", "liveness.expiry_ms", "-5");
        assertThat(invalid).contains("liveness.expiry_ms");
        assertThat(ctl(brokers.get(0), 0, "settings", "list")).contains("replication.follower_loss_hold_ms = 300000");
        assertThat(ctl(brokers.get(2), 0, "status"))
                .contains("controller: ganglion-")
                .contains("ganglion-1\tlive\t1\t");
    }

    /**
     * A cluster stopped as one (what {@code ganglion local} does on Ctrl-C): every broker gets SIGTERM before any is
     * waited for, every one exits, and none logs an error for the others' stops.
     */
    @Test
    void shouldStopTheWholeClusterTogetherWithoutAnError() throws Exception {
        try (Connection connection = connect(brokers.get(0))) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("stopping", true, false, false, java.util.Map.of("x-queue-type", "quorum"));
            channel.confirmSelect();
            for (int i = 0; i < 100; i++) {
                channel.basicPublish("", "stopping", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            assertThat(channel.waitForConfirms(30_000)).isTrue();
        }
        // what each broker logs from here on (the metadata warm-up at start logs its own refused connections)
        List<Integer> linesBefore = new ArrayList<>();
        for (BrokerChild broker : brokers) {
            linesBefore.add(logLines(broker).size());
        }
        BrokerChild.stopTogether(brokers);
        for (int i = 0; i < brokers.size(); i++) {
            BrokerChild broker = brokers.get(i);
            assertThat(broker.alive()).as(broker.nodeId()).isFalse();
            List<String> lines = logLines(broker);
            assertThat(lines.subList(linesBefore.get(i), lines.size()))
                    .as(broker.nodeId() + "'s log while stopping")
                    .noneMatch(line -> line.contains(" ERROR "));
        }
    }

    private static List<String> logLines(BrokerChild broker) throws IOException {
        return java.nio.file.Files.readAllLines(broker.dataDir.resolve("broker.out"), StandardCharsets.ISO_8859_1);
    }

    @Test
    void shouldServeAQueueThroughEveryBroker() throws Exception {
        try (Connection first = connect(brokers.get(0));
                Connection second = connect(brokers.get(1));
                Connection third = connect(brokers.get(2))) {
            Channel declaring = first.createChannel();
            declaring.exchangeDeclare("events", "direct", true);
            declaring.queueDeclare("audit", true, false, false, null);
            declaring.queueBind("audit", "events", "audit");
            // bindings commit on every broker's image; wait until the third routes like the first
            await(brokers.get(2), "/api/queues", queues -> queues.toString().contains("audit"));

            Channel publisher = second.createChannel();
            publisher.confirmSelect();
            int messages = 500;
            for (int i = 0; i < messages; i++) {
                publisher.basicPublish(
                        "events",
                        "audit",
                        new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                                .messageId("m" + i)
                                .build(),
                        ("message " + i).getBytes(StandardCharsets.UTF_8));
            }
            assertThat(publisher.waitForConfirms(30_000))
                    .as("every publish confirmed")
                    .isTrue();
            assertThat(third.createChannel().queueDeclarePassive("audit").getMessageCount())
                    .isEqualTo(messages);

            Channel getter = second.createChannel();
            com.rabbitmq.client.GetResponse got = getter.basicGet("audit", false);
            assertThat(got).isNotNull();
            assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("message 0");
            getter.basicReject(got.getEnvelope().getDeliveryTag(), true);

            Channel consuming = third.createChannel();
            consuming.basicQos(50);
            java.util.Set<String> received = java.util.concurrent.ConcurrentHashMap.newKeySet();
            java.util.concurrent.CountDownLatch all = new java.util.concurrent.CountDownLatch(1);
            String consumerTag = consuming.basicConsume(
                    "audit",
                    false,
                    (tag, delivery) -> {
                        received.add(delivery.getProperties().getMessageId());
                        consuming.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                        if (received.size() == messages) {
                            all.countDown();
                        }
                    },
                    tag -> {});
            assertThat(all.await(30, java.util.concurrent.TimeUnit.SECONDS))
                    .as("received %s of %s", received.size(), messages)
                    .isTrue();
            Poll.until(
                    WAIT,
                    EVERY,
                    () -> first.createChannel().queueDeclarePassive("audit").getMessageCount() == 0,
                    () -> "audit empty on the first broker");
            consuming.basicCancel(consumerTag);

            Channel purging = second.createChannel();
            purging.confirmSelect();
            purging.basicPublish("events", "audit", null, "left over".getBytes(StandardCharsets.UTF_8));
            purging.waitForConfirmsOrDie(10_000);
            assertThat(purging.queuePurge("audit").getMessageCount()).isEqualTo(1);
            assertThat(second.createChannel().queueDelete("audit").getMessageCount())
                    .isZero();
            await(brokers.get(0), "/api/queues", queues -> !queues.toString().contains("audit"));
        }
    }

    @Test
    void shouldNackPublishesAndCancelConsumersWhenTheHomeIsKilled() throws Exception {
        BrokerChild home = brokers.get(0);
        BrokerChild other = brokers.get(1);
        try (Connection declaring = connect(home)) {
            declaring.createChannel().queueDeclare("far", true, false, false, null);
        }
        await(other, "/api/queues", queues -> queues.toString().contains("far"));
        try (Connection connection = connect(other)) {
            Channel consumer = connection.createChannel();
            java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(1);
            consumer.basicConsume("far", true, new com.rabbitmq.client.DefaultConsumer(consumer) {
                @Override
                public void handleCancel(String consumerTag) {
                    cancelled.countDown();
                }
            });
            home.kill();
            assertThat(cancelled.await(10, java.util.concurrent.TimeUnit.SECONDS))
                    .as("the consumer on a surviving broker is cancelled")
                    .isTrue();
            Channel publisher = connection.createChannel();
            publisher.confirmSelect();
            publisher.basicPublish("", "far", null, "into the void".getBytes(StandardCharsets.UTF_8));
            assertThat(publisher.waitForConfirms(10_000))
                    .as("nacked, not confirmed")
                    .isFalse();
        }
    }

    @Test
    void shouldRefuseABrokerOfAnotherCluster() throws Exception {
        // its id sorts before the others, so it is the one that dials them (the smaller id of a pair dials) and their
        // refusal shows in their logs; with any id it never joins: its metadata group is another cluster's
        int peerPort = BrokerChild.freePort();
        String seeds = brokers.get(0).setting("cluster.seeds") + ",a-stranger@127.0.0.1:" + peerPort + ":"
                + BrokerChild.freePort();
        BrokerChild stranger = new BrokerChild(
                dir.resolve("stranger"),
                List.of("-Xmx128m", "--enable-native-access=ALL-UNNAMED"),
                BrokerChild.freePort(),
                BrokerChild.freePort(),
                java.util.Map.of("node.id", "a-stranger", "cluster.name", "elsewhere", "cluster.seeds", seeds));
        try {
            stranger.launch();
            Poll.until(
                    WAIT,
                    EVERY,
                    () -> {
                        for (BrokerChild broker : brokers) {
                            java.nio.file.Path log = broker.dataDir.resolve("broker.out");
                            if (java.nio.file.Files.readString(log).contains("reason=cluster_mismatch")) {
                                return true;
                            }
                        }
                        return false;
                    },
                    () -> "a broker refusing the stranger (reason=cluster_mismatch)");
            JsonNode nodes = get(brokers.get(0), "/api/nodes");
            assertThat(nodes.path("nodes").size()).isEqualTo(3);
            assertThat(node(nodes, "a-stranger").isEmpty()).isTrue();
        } finally {
            stranger.kill();
        }
    }

    // ------------------------------------------------------------------------------------------------------ helpers

    private BrokerChild byId(String id) {
        return brokers.stream().filter(b -> b.nodeId().equals(id)).findFirst().orElseThrow();
    }

    private static Connection connect(BrokerChild broker) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.amqpPort);
        return factory.newConnection();
    }

    private static JsonNode node(JsonNode nodes, String id) {
        for (JsonNode node : nodes.path("nodes")) {
            if (node.path("node").asText().equals(id)) {
                return node;
            }
        }
        return JSON.createObjectNode();
    }
}
