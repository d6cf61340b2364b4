package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AuthenticationFailureException;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.CancelCallback;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.LongString;
import com.rabbitmq.client.ShutdownSignalException;
import io.ganglion.testing.OwnPublishes;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One broker, the real RabbitMQ Java client, every part of the protocol surface a client relies on. */
class ProtocolIT {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final OneBroker broker = new OneBroker();

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static int replyCode(Throwable e) {
        Throwable cause = e;
        while (cause != null && !(cause instanceof ShutdownSignalException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("a shutdown signal in %s", e).isNotNull();
        Object reason = ((ShutdownSignalException) cause).getReason();
        if (reason instanceof AMQP.Channel.Close close) {
            return close.getReplyCode();
        }
        return ((AMQP.Connection.Close) reason).getReplyCode();
    }

    // ---------------------------------------------------------------------------------------------- handshake

    @Test
    void shouldAnnounceServerPropertiesAndCapabilities() throws Exception {
        try (Connection connection = broker.connect()) {
            Map<String, Object> properties = connection.getServerProperties();
            assertThat(properties.get("product").toString()).isEqualTo("Ganglion");
            assertThat(properties.get("version").toString()).isEqualTo("3.10.8");
            assertThat(properties.get("information").toString()).startsWith("Ganglion " + Broker.VERSION);
            assertThat(properties).containsKeys("platform", "cluster_name", "copyright");
            @SuppressWarnings("unchecked")
            Map<String, Object> capabilities = (Map<String, Object>) properties.get("capabilities");
            assertThat(capabilities)
                    .containsEntry("publisher_confirms", true)
                    .containsEntry("exchange_exchange_bindings", true)
                    .containsEntry("basic.nack", true)
                    .containsEntry("consumer_cancel_notify", true)
                    .containsEntry("connection.blocked", true)
                    .containsEntry("authentication_failure_close", true)
                    .containsEntry("per_consumer_qos", true);
            assertThat(connection.getFrameMax()).isEqualTo(131072);
            assertThat(connection.getChannelMax()).isEqualTo(2047);
        }
    }

    @Test
    void shouldRefuseWrongPasswordWithAccessRefused() {
        ConnectionFactory factory = broker.factory();
        factory.setPassword("wrong");
        assertThatThrownBy(factory::newConnection).isInstanceOf(AuthenticationFailureException.class);
    }

    @Test
    void shouldRefuseUnknownVhost() {
        ConnectionFactory factory = broker.factory();
        factory.setVirtualHost("nope");
        assertThatThrownBy(factory::newConnection)
                .satisfies(e -> assertThat(replyCode(e)).isEqualTo(530));
    }

    // ---------------------------------------------------------------------------------------------- routing

    @Test
    void shouldRouteByExchangeType() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            String q1 = channel.queueDeclare().getQueue();
            String q2 = channel.queueDeclare().getQueue();
            assertThat(q1).startsWith("amq.gen-");
            channel.exchangeDeclare("r.direct", BuiltinExchangeType.DIRECT);
            channel.exchangeDeclare("r.topic", BuiltinExchangeType.TOPIC);
            channel.exchangeDeclare("r.fanout", BuiltinExchangeType.FANOUT);
            channel.exchangeDeclare("r.headers", BuiltinExchangeType.HEADERS);
            channel.queueBind(q1, "r.direct", "k1");
            channel.queueBind(q2, "r.topic", "a.*.c");
            channel.queueBind(q1, "r.fanout", "");
            channel.queueBind(q2, "r.fanout", "");
            channel.queueBind(q1, "r.headers", "", Map.of("x-match", "any", "h", "v"));
            channel.confirmSelect();

            channel.basicPublish("r.direct", "k1", null, bytes("direct"));
            channel.basicPublish("r.topic", "a.b.c", null, bytes("topic"));
            channel.basicPublish("r.fanout", "", null, bytes("fanout"));
            channel.basicPublish(
                    "r.headers",
                    "",
                    new AMQP.BasicProperties.Builder().headers(Map.of("h", "v")).build(),
                    bytes("headers"));
            channel.basicPublish("", q2, null, bytes("default"));
            channel.waitForConfirmsOrDie(5_000);

            assertThat(drain(channel, q1)).containsExactly("direct", "fanout", "headers");
            assertThat(drain(channel, q2)).containsExactly("topic", "fanout", "default");
        }
    }

    /** Sender-selected distribution (RabbitMQ's "Sender-selected Distribution" page), as RabbitMQ 3.10.8 answers. */
    @Test
    void shouldRouteByTheCcAndBccHeadersAndRemoveBcc() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            for (String queue : List.of("cc.a", "cc.b", "cc.c", "cc.d")) {
                channel.queueDeclare(queue, false, false, false, null);
            }
            channel.exchangeDeclare("cc.topic", BuiltinExchangeType.TOPIC);
            channel.queueBind("cc.d", "cc.topic", "audit.#");
            channel.queueBind("cc.b", "cc.topic", "billing.*");
            channel.confirmSelect();

            // the default exchange: each key a queue name; a queue reached by several keys gets one copy
            Map<String, Object> headers = new java.util.LinkedHashMap<>();
            headers.put("CC", List.of("cc.b", "cc.a", 42));
            headers.put("BCC", List.of("cc.c", "cc.b"));
            headers.put("kept", "yes");
            channel.basicPublish(
                    "",
                    "cc.a",
                    new AMQP.BasicProperties.Builder().headers(headers).build(),
                    bytes("to all"));
            // a topic exchange matches every key against its bindings
            channel.basicPublish(
                    "cc.topic",
                    "orders.new",
                    new AMQP.BasicProperties.Builder()
                            .headers(Map.of("CC", List.of("audit.orders"), "BCC", List.of("billing.eu")))
                            .build(),
                    bytes("topic"));
            channel.waitForConfirmsOrDie(5_000);

            for (String queue : List.of("cc.a", "cc.b", "cc.c")) {
                GetResponse got = channel.basicGet(queue, true);
                assertThat(got).as(queue).isNotNull();
                assertThat(text(got.getBody())).isEqualTo("to all");
                assertThat(got.getProps().getHeaders()).containsOnlyKeys("CC", "kept");
                assertThat(got.getProps().getHeaders().get("CC").toString()).isEqualTo("[cc.b, cc.a, 42]");
            }
            GetResponse audit = channel.basicGet("cc.d", true);
            assertThat(text(audit.getBody())).isEqualTo("topic");
            assertThat(audit.getProps().getHeaders()).containsOnlyKeys("CC");
            assertThat(drain(channel, "cc.b")).containsExactly("topic");
            for (String queue : List.of("cc.a", "cc.b", "cc.c", "cc.d")) {
                assertThat(drain(channel, queue)).as(queue).isEmpty();
            }

            // a CC that is not an array refuses the publish
            Channel refused = connection.createChannel();
            refused.basicPublish(
                    "",
                    "cc.a",
                    new AMQP.BasicProperties.Builder()
                            .headers(Map.of("CC", "cc.b"))
                            .build(),
                    bytes("x"));
            assertThatThrownBy(() -> refused.queueDeclarePassive("cc.a"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406))
                    .hasStackTraceContaining("invalid message: {unacceptable_type_in_header,\"CC\",longstr}");
            assertThat(drain(channel, "cc.a")).isEmpty();
        }
    }

    @Test
    void shouldFollowExchangeToExchangeBindings() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            String queue = channel.queueDeclare().getQueue();
            channel.exchangeDeclare("e2e.src", BuiltinExchangeType.TOPIC);
            channel.exchangeDeclare("e2e.dst", BuiltinExchangeType.FANOUT);
            channel.exchangeBind("e2e.dst", "e2e.src", "x.#");
            channel.queueBind(queue, "e2e.dst", "");
            channel.confirmSelect();
            channel.basicPublish("e2e.src", "x.y", null, bytes("through"));
            channel.basicPublish("e2e.src", "z", null, bytes("dropped"));
            channel.waitForConfirmsOrDie(5_000);
            assertThat(drain(channel, queue)).containsExactly("through");
            channel.exchangeUnbind("e2e.dst", "e2e.src", "x.#");
            channel.basicPublish("e2e.src", "x.y", null, bytes("after unbind"));
            channel.waitForConfirmsOrDie(5_000);
            assertThat(drain(channel, queue)).isEmpty();
        }
    }

    @Test
    void shouldDeleteAnAutoDeleteExchangeWhenItsLastExchangeBindingGoes() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare("ad.src", BuiltinExchangeType.TOPIC, false, true, null);
            channel.exchangeDeclare("ad.mid", BuiltinExchangeType.FANOUT, false, true, null);
            channel.exchangeDeclare("ad.dst", BuiltinExchangeType.FANOUT, false, false, null);
            channel.exchangeBind("ad.mid", "ad.src", "a.#");
            channel.exchangeBind("ad.dst", "ad.mid", "");
            channel.exchangeDelete("ad.dst");
            for (String gone : List.of("ad.mid", "ad.src")) {
                Channel probe = connection.createChannel();
                assertThatThrownBy(() -> probe.exchangeDeclarePassive(gone))
                        .as(gone)
                        .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
            }
        }
    }

    @Test
    void shouldAnswerDeletesAndUnbindsOfWhatIsNotThereWithOk() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            String queue = channel.queueDeclare().getQueue();
            assertThat(channel.exchangeDelete("never.declared")).isNotNull();
            assertThat(channel.exchangeDelete("never.declared", true)).isNotNull();
            assertThat(channel.queueDelete("never.declared").getMessageCount()).isZero();
            assertThat(channel.queueUnbind("never.declared", "never.declared", "k"))
                    .isNotNull();
            assertThat(channel.queueUnbind("never.declared", "amq.direct", "k")).isNotNull();
            assertThat(channel.queueUnbind(queue, "never.declared", "k")).isNotNull();
            assertThat(channel.queueUnbind(queue, "amq.direct", "never.bound")).isNotNull();
            assertThat(channel.exchangeUnbind("never.a", "never.b", "k")).isNotNull();
            assertThat(channel.exchangeUnbind("amq.direct", "amq.fanout", "k")).isNotNull();
            assertThat(channel.isOpen()).isTrue();
        }
        try (Connection connection = broker.connect()) {
            Channel builtIn = connection.createChannel();
            assertThatThrownBy(() -> builtIn.exchangeDelete("amq.direct"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(403))
                    .hasStackTraceContaining("deletion of system exchange 'amq.direct' in vhost '/' not allowed");
            Channel defaultExchange = connection.createChannel();
            assertThatThrownBy(() -> defaultExchange.exchangeDelete(""))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(403))
                    .hasStackTraceContaining("operation not permitted on the default exchange");
            Channel bindMissing = connection.createChannel();
            assertThatThrownBy(() -> bindMissing.queueBind("never.declared", "amq.direct", "k"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
        }
    }

    @Test
    void shouldStripLineBreaksFromQueueAndExchangeNames() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            assertThat(channel.queueDeclare("strip\r\n.q", false, false, true, null)
                            .getQueue())
                    .isEqualTo("strip.q");
            channel.queueDeclarePassive("strip.q");
            channel.exchangeDeclare("strip\n.x", BuiltinExchangeType.DIRECT, false, true, null);
            channel.exchangeDeclarePassive("strip.x");
            channel.queueBind("strip.q\n", "strip.x\r", "k");
            channel.confirmSelect();
            channel.basicPublish("strip.x\n", "k", null, bytes("stripped"));
            channel.waitForConfirmsOrDie(5_000);
            GetResponse got = Poll.untilPresent(
                    WAIT, () -> java.util.Optional.ofNullable(channel.basicGet("strip\n.q", true)), () -> "a message");
            assertThat(text(got.getBody())).isEqualTo("stripped");
            assertThat(channel.queueDelete("strip.q\r\n").getMessageCount()).isZero();
            assertThatThrownBy(() -> connection.createChannel().queueDeclarePassive("strip.q"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
        }
    }

    @Test
    void shouldRefuseTheQueueArgumentsItDoesNotEnforce() throws Exception {
        List<Map<String, Object>> unenforced =
                List.of(Map.of("x-max-priority", 5), Map.of("x-single-active-consumer", true));
        try (Connection connection = broker.connect()) {
            for (Map<String, Object> args : unenforced) {
                Channel channel = connection.createChannel();
                String name = args.keySet().iterator().next();
                assertThatThrownBy(() -> channel.queueDeclare("unenforced.q", true, false, false, args))
                        .as("%s", args)
                        .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406))
                        .hasStackTraceContaining("invalid arg '" + name
                                + "' for queue 'unenforced.q' in vhost '/': not supported by Ganglion");
            }
            Channel channel = connection.createChannel();
            channel.queueDeclare(
                    "enforced.q",
                    true,
                    false,
                    false,
                    Map.of(
                            "x-overflow",
                            "drop-head",
                            "x-max-priority",
                            0,
                            "x-single-active-consumer",
                            false,
                            "x-dead-letter-exchange",
                            "dlx",
                            "x-dead-letter-routing-key",
                            "dead",
                            "x-dead-letter-strategy",
                            "at-most-once"));
            channel.queueDelete("enforced.q");
            assertThatThrownBy(() -> connection.createChannel().queueDeclarePassive("unenforced.q"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
        }
    }

    @Test
    void shouldRefuseInvalidQueueArgumentValuesAsRabbitMqDoes() throws Exception {
        Map<Map<String, Object>, String> cases = new java.util.LinkedHashMap<>();
        cases.put(
                Map.of("x-message-ttl", -1),
                "invalid arg 'x-message-ttl' for queue 'args.q' in vhost '/': {value_negative,-1}");
        cases.put(
                Map.of("x-message-ttl", "100"),
                "'x-message-ttl' for queue 'args.q' in vhost '/': \"expected integer, got longstr\"");
        cases.put(Map.of("x-message-ttl", 1.5), "\"expected integer, got double\"");
        cases.put(Map.of("x-message-ttl", 1L << 40), "{value_too_large,1099511627776}");
        cases.put(Map.of("x-expires", 0), "invalid arg 'x-expires' for queue 'args.q' in vhost '/': {value_zero,0}");
        cases.put(Map.of("x-max-length", -1), "{value_negative,-1}");
        cases.put(Map.of("x-max-length-bytes", -5), "{value_negative,-5}");
        cases.put(Map.of("x-max-priority", 256), "{max_value_exceeded,256}");
        cases.put(
                Map.of("x-overflow", "bogus"),
                "invalid arg 'x-overflow' for queue 'args.q' in vhost '/': invalid_overflow");
        cases.put(Map.of("x-overflow", 1), "{unacceptable_type,signedint}");
        cases.put(Map.of("x-single-active-consumer", "yes"), "{unacceptable_type,longstr}");
        cases.put(Map.of("x-queue-mode", "bogus"), "\"unsupported queue mode 'bogus'\"");
        cases.put(
                Map.of("x-dead-letter-exchange", 5),
                "invalid type 'signedint' for arg 'x-dead-letter-exchange' in queue 'args.q' in vhost '/'");
        cases.put(Map.of("x-dead-letter-routing-key", "rk"), "routing_key_but_no_dlx_defined");
        cases.put(
                Map.of("x-dead-letter-strategy", "twice"),
                "invalid arg 'x-dead-letter-strategy' for queue 'args.q' in vhost '/': invalid_dead_letter_strategy");
        cases.put(
                Map.of("x-delivery-limit", "5"),
                "invalid arg 'x-delivery-limit' for queue 'args.q' in vhost '/': \"expected integer, got longstr\"");
        try (Connection connection = broker.connect()) {
            for (Map.Entry<Map<String, Object>, String> entry : cases.entrySet()) {
                Channel channel = connection.createChannel();
                assertThatThrownBy(() -> channel.queueDeclare("args.q", false, false, true, entry.getKey()))
                        .as("%s", entry.getKey())
                        .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406))
                        .hasStackTraceContaining(entry.getValue());
            }
            Channel channel = connection.createChannel();
            assertThatThrownBy(() -> channel.queueDeclarePassive("args.q"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
            Channel consumer = connection.createChannel();
            String queue = consumer.queueDeclare().getQueue();
            assertThatThrownBy(() -> consumer.basicConsume(
                            queue, false, Map.of("x-priority", "banana"), (tag, delivery) -> {}, tag -> {}))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406))
                    .hasStackTraceContaining("invalid arg 'x-priority' for queue '" + queue
                            + "' in vhost '/': \"expected integer, got longstr\"");
            Channel valid = connection.createChannel();
            valid.queueDeclare("args.ok", false, false, true, Map.of("x-message-ttl", 0, "x-max-priority", 0));
            valid.queueDelete("args.ok");
        }
    }

    @Test
    void shouldAnswerResourceLockedForAnotherConnectionsExclusiveQueue() throws Exception {
        try (Connection owner = broker.connect();
                Connection other = broker.connect()) {
            owner.createChannel().queueDeclare("locked.q", false, true, false, null);
            for (boolean exclusive : new boolean[] {true, false}) {
                Channel channel = other.createChannel();
                assertThatThrownBy(() -> channel.queueDeclare("locked.q", false, exclusive, false, null))
                        .satisfies(e -> assertThat(replyCode(e)).isEqualTo(405))
                        .hasStackTraceContaining("cannot obtain exclusive access to locked queue 'locked.q' in vhost"
                                + " '/'. It could be originally declared on another connection");
            }
            Channel passive = other.createChannel();
            assertThatThrownBy(() -> passive.queueDeclarePassive("locked.q"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(405));
        }
    }

    @Test
    void shouldReserveAmqPrefixAndRejectBadExchangeType() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            assertThatThrownBy(() -> channel.exchangeDeclare("amq.mine", BuiltinExchangeType.DIRECT))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(403));
            Channel passive = connection.createChannel();
            assertThatThrownBy(() -> passive.exchangeDeclarePassive("missing"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
            Channel other = connection.createChannel();
            other.exchangeDeclarePassive("amq.match");
            assertThat(other.isOpen()).isTrue();
        }
        Connection connection = broker.connect();
        Channel channel = connection.createChannel();
        assertThatThrownBy(() -> channel.exchangeDeclare("bad.type", "nonsense"))
                .satisfies(e -> assertThat(replyCode(e)).isEqualTo(503));
        assertThat(connection.isOpen()).as("503 is a connection error").isFalse();
    }

    /** A declare through a fresh channel: "ok", or the reply code and text it was closed with. */
    private static String answer(Connection connection, ChannelOp op) throws Exception {
        Channel channel = connection.createChannel();
        try {
            op.run(channel);
            channel.close();
            return "ok";
        } catch (IOException e) {
            Throwable cause = e;
            while (!(cause instanceof ShutdownSignalException)) {
                cause = cause.getCause();
            }
            AMQP.Channel.Close close = (AMQP.Channel.Close) ((ShutdownSignalException) cause).getReason();
            return close.getReplyCode() + " " + close.getReplyText();
        }
    }

    @FunctionalInterface
    private interface ChannelOp {
        void run(Channel channel) throws IOException;
    }

    /** Every answer here is the one RabbitMQ 3.10.8 gave the same client for the same declare. */
    @Test
    void shouldAnswerExchangeDeclaresAsRabbitMqDoes() throws Exception {
        try (Connection c = broker.connect()) {
            String prefix = "406 PRECONDITION_FAILED - inequivalent arg ";
            Channel setup = c.createChannel();
            setup.exchangeDeclare("eq.x", "direct", true, false, false, Map.of("alternate-exchange", "ae1"));
            setup.exchangeDeclare("eq.plain", "direct", true);
            Map<String, Object> ae1 = Map.of("alternate-exchange", "ae1");
            assertThat(answer(c, ch -> ch.exchangeDeclare("", "direct", true)))
                    .isEqualTo("403 ACCESS_REFUSED - operation not permitted on the default exchange");
            assertThat(answer(c, ch -> ch.exchangeDeclarePassive("")))
                    .isEqualTo("403 ACCESS_REFUSED - operation not permitted on the default exchange");
            assertThat(answer(c, ch -> ch.exchangeDeclare("amq.direct", "direct", true)))
                    .isEqualTo("ok");
            assertThat(answer(c, ch -> ch.exchangeDeclare("amq.direct", "fanout", true)))
                    .isEqualTo(
                            prefix
                                    + "'type' for exchange 'amq.direct' in vhost '/': received 'fanout' but current is 'direct'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("amq.direct", "direct", false)))
                    .isEqualTo(
                            prefix
                                    + "'durable' for exchange 'amq.direct' in vhost '/': received 'false' but current is 'true'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("amq.new", "direct", false)))
                    .isEqualTo("403 ACCESS_REFUSED - exchange name 'amq.new' contains reserved prefix 'amq.*'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("eq.x", "direct", true, false, false, ae1)))
                    .isEqualTo("ok");
            assertThat(answer(c, ch -> ch.exchangeDeclare("eq.x", "topic", true, false, false, ae1)))
                    .isEqualTo(prefix
                            + "'type' for exchange 'eq.x' in vhost '/': received 'topic' but current is 'direct'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("eq.x", "direct", true, true, false, ae1)))
                    .isEqualTo(prefix
                            + "'auto_delete' for exchange 'eq.x' in vhost '/': received 'true' but current is 'false'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("eq.x", "direct", true, false, true, ae1)))
                    .isEqualTo(prefix
                            + "'internal' for exchange 'eq.x' in vhost '/': received 'true' but current is 'false'");
            assertThat(answer(
                            c,
                            ch -> ch.exchangeDeclare(
                                    "eq.x", "direct", true, false, false, Map.of("alternate-exchange", "ae2"))))
                    .isEqualTo(
                            prefix
                                    + "'alternate-exchange' for exchange 'eq.x' in vhost '/': received 'ae2' but current is 'ae1'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("eq.x", "direct", true, false, false, null)))
                    .isEqualTo(prefix + "'alternate-exchange' for exchange 'eq.x' in vhost '/': received none but"
                            + " current is the value 'ae1' of type 'longstr'");
            assertThat(answer(c, ch -> ch.exchangeDeclare("eq.plain", "direct", true, false, false, ae1)))
                    .isEqualTo(prefix + "'alternate-exchange' for exchange 'eq.plain' in vhost '/': received the value"
                            + " 'ae1' of type 'longstr' but current is none");
        }
    }

    /** Every answer here is the one RabbitMQ 3.10.8 gave the same client for the same declare. */
    @Test
    void shouldAnswerQueueRedeclaresAsRabbitMqDoes() throws Exception {
        try (Connection c = broker.connect()) {
            String prefix = "406 PRECONDITION_FAILED - inequivalent arg ";
            String of = " for queue 'eq.args' in vhost '/': ";
            Map<String, Object> base = Map.of("x-message-ttl", 1000, "x-max-length", 10);
            c.createChannel().queueDeclare("eq.args", true, false, false, base);
            java.util.function.Function<Map<String, Object>, Map<String, Object>> plus = extra -> {
                Map<String, Object> args = new java.util.HashMap<>(base);
                args.putAll(extra);
                return args;
            };
            assertThat(answer(c, ch -> ch.queueDeclare("eq.args", true, false, false, base)))
                    .isEqualTo("ok");
            assertThat(answer(c, ch -> ch.queueDeclare("eq.args", false, false, false, base)))
                    .isEqualTo(prefix + "'durable'" + of + "received 'false' but current is 'true'");
            assertThat(answer(c, ch -> ch.queueDeclare("eq.args", true, false, true, base)))
                    .isEqualTo(prefix + "'auto_delete'" + of + "received 'true' but current is 'false'");
            assertThat(answer(c, ch -> ch.queueDeclare("eq.args", true, true, false, base)))
                    .startsWith("405 RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'eq.args'");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args", true, false, false, plus.apply(Map.of("x-message-ttl", 2000)))))
                    .isEqualTo(prefix + "'x-message-ttl'" + of + "received '2000' but current is '1000'");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args", true, false, false, plus.apply(Map.of("x-message-ttl", 1000L)))))
                    .as("numbers compare by value")
                    .isEqualTo("ok");
            assertThat(answer(c, ch -> ch.queueDeclare("eq.args", true, false, false, Map.of("x-max-length", 10))))
                    .isEqualTo(prefix + "'x-message-ttl'" + of
                            + "received none but current is the value '1000' of type 'signedint'");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args", true, false, false, plus.apply(Map.of("x-max-length-bytes", 5)))))
                    .isEqualTo(prefix + "'x-max-length-bytes'" + of
                            + "received the value '5' of type 'signedint' but current is none");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args", true, false, false, plus.apply(Map.of("x-queue-type", "quorum")))))
                    .isEqualTo(prefix + "'x-queue-type'" + of
                            + "received the value 'quorum' of type 'longstr' but current is none");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args", true, false, false, plus.apply(Map.of("x-queue-type", "classic")))))
                    .isEqualTo("ok");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args",
                                    true,
                                    false,
                                    false,
                                    plus.apply(Map.of("x-dead-letter-exchange", "dlx")))))
                    .isEqualTo(prefix + "'x-dead-letter-exchange'" + of
                            + "received the value 'dlx' of type 'longstr' but current is none");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args",
                                    true,
                                    false,
                                    false,
                                    plus.apply(Map.of("x-single-active-consumer", true)))))
                    .isEqualTo(prefix + "'x-single-active-consumer'" + of
                            + "received the value 'true' of type 'bool' but current is none");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare(
                                    "eq.args", true, false, false, plus.apply(Map.of("x-queue-mode", "lazy")))))
                    .isEqualTo(prefix + "'x-queue-mode'" + of
                            + "received the value 'lazy' of type 'longstr' but current is none");

            c.createChannel().queueDeclare("eq.typed", true, false, false, Map.of("x-queue-type", "quorum"));
            String typed = " for queue 'eq.typed' in vhost '/': ";
            assertThat(answer(c, ch -> ch.queueDeclare("eq.typed", true, false, false, null)))
                    .isEqualTo(prefix + "'x-queue-type'" + typed
                            + "received none but current is the value 'quorum' of type 'longstr'");
            assertThat(answer(
                            c,
                            ch -> ch.queueDeclare("eq.typed", true, false, false, Map.of("x-queue-type", "classic"))))
                    .isEqualTo(prefix + "'x-queue-type'" + typed + "received 'classic' but current is 'quorum'");
            assertThat(answer(
                            c, ch -> ch.queueDeclare("eq.typed", true, false, false, Map.of("x-queue-type", "stream"))))
                    .isEqualTo(prefix + "'x-queue-type'" + typed + "received 'stream' but current is 'quorum'");
            c.createChannel().queueDelete("eq.typed");
            c.createChannel().queueDelete("eq.args");
        }
    }

    // ---------------------------------------------------------------------------------------------- queues

    @Test
    void shouldRefuseInequivalentRedeclareAndUnknownQueueType() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("eq.q", true, false, false, null);
            channel.queueDeclare("eq.q", true, false, false, Map.of("x-queue-type", "classic"));
            assertThatThrownBy(() -> channel.queueDeclare("eq.q", false, false, false, null))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406));
            Channel typed = connection.createChannel();
            assertThatThrownBy(() -> typed.queueDeclare("eq.bad", true, false, false, Map.of("x-queue-type", "lazy")))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406))
                    .hasStackTraceContaining("unsupported queue type 'lazy'");
            Channel quorum = connection.createChannel();
            assertThat(quorum.queueDeclare("eq.quorum", true, false, false, Map.of("x-queue-type", "quorum"))
                            .getQueue())
                    .isEqualTo("eq.quorum");
            quorum.queueDelete("eq.quorum");
            quorum.queueDelete("eq.q");
        }
    }

    /** RabbitMQ's order: get, count, purge, delete and consume right after a publish observe it (docs/amqp.md). */
    @Test
    void shouldLetAConnectionSeeItsOwnPublishesOnEveryQueueType() throws Exception {
        try (Connection connection = broker.connect()) {
            OwnPublishes.checkQueue(connection, connection, "own.classic", null);
            OwnPublishes.checkQueue(connection, connection, "own.quorum", Map.of("x-queue-type", "quorum"));
            OwnPublishes.checkStream(connection, connection, "own.stream");
        }
    }

    @Test
    void shouldReportCountsAndHonourDeleteConditions() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("counts.q", false, false, false, null);
            channel.confirmSelect();
            for (int i = 0; i < 3; i++) {
                channel.basicPublish("", "counts.q", null, bytes("m" + i));
            }
            channel.waitForConfirmsOrDie(5_000);
            AMQP.Queue.DeclareOk ok = channel.queueDeclarePassive("counts.q");
            assertThat(ok.getMessageCount()).isEqualTo(3);
            assertThat(ok.getConsumerCount()).isZero();
            assertThatThrownBy(() -> channel.queueDelete("counts.q", false, true))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406));
            Channel next = connection.createChannel();
            assertThat(next.queuePurge("counts.q").getMessageCount()).isEqualTo(3);
            assertThat(next.queueDelete("counts.q", false, true).getMessageCount())
                    .isZero();
            assertThatThrownBy(() -> next.queueDeclarePassive("counts.q"))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
        }
    }

    @Test
    void shouldLockExclusiveQueueAndDeleteItWithItsConnection() throws Exception {
        String name;
        try (Connection owner = broker.connect()) {
            Channel channel = owner.createChannel();
            name = channel.queueDeclare("", false, true, false, null).getQueue();
            try (Connection other = broker.connect()) {
                Channel stranger = other.createChannel();
                assertThatThrownBy(() -> stranger.basicGet(name, true))
                        .satisfies(e -> assertThat(replyCode(e)).isEqualTo(405));
            }
        }
        try (Connection later = broker.connect()) {
            Channel channel = later.createChannel();
            assertThatThrownBy(() -> channel.queueDeclarePassive(name))
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
        }
    }

    @Test
    void shouldDeleteAutoDeleteQueueAfterLastConsumerGoes() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("auto.q", false, false, true, null);
            String tag = channel.basicConsume("auto.q", true, (t, d) -> {}, t -> {});
            channel.basicCancel(tag);
            Channel check = connection.createChannel();
            Poll.until(
                    WAIT,
                    Duration.ofMillis(20),
                    () -> {
                        try {
                            check.queueDeclarePassive("auto.q");
                            return false;
                        } catch (IOException e) {
                            return replyCode(e) == 404;
                        }
                    },
                    () -> "auto.q deleted after its last consumer");
        }
    }

    // ---------------------------------------------------------------------------------------------- publish

    @Test
    void shouldReturnMandatoryUnroutableBeforeItsConfirm() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            List<String> events = Collections.synchronizedList(new ArrayList<>());
            channel.addReturnListener(r -> events.add("return " + r.getReplyCode() + " " + text(r.getBody())));
            channel.addConfirmListener(
                    (tag, multiple) -> events.add("ack " + tag), (tag, multiple) -> events.add("nack"));
            channel.confirmSelect();
            channel.basicPublish("amq.direct", "nobody", true, null, bytes("lost"));
            channel.waitForConfirmsOrDie(5_000);
            assertThat(events).containsExactly("return 312 lost", "ack 1");
        }
    }

    @Test
    void shouldCloseConnectionForImmediateAndChannelForMissingExchange() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            channel.basicPublish("missing.exchange", "k", null, bytes("x"));
            assertThatThrownBy(() -> channel.queueDeclare())
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(404));
            assertThat(connection.isOpen()).isTrue();
        }
        Connection connection = broker.connect();
        Channel channel = connection.createChannel();
        channel.basicPublish("", "whatever", false, true, null, bytes("x"));
        Poll.until(WAIT, Duration.ofMillis(20), () -> !connection.isOpen(), () -> "the connection closed");
        assertThat(connection.getCloseReason().getReason())
                .isInstanceOfSatisfying(
                        AMQP.Connection.Close.class,
                        close -> assertThat(close.getReplyCode()).isEqualTo(540));
    }

    // ---------------------------------------------------------------------------------------------- consume

    @Test
    void shouldRequeueUnackedInOriginalOrderWhenChannelCloses() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel publisher = connection.createChannel();
            // not queueDeclare(): that queue is auto-delete and would go with its only consumer
            String queue = publisher
                    .queueDeclare("requeue.q", false, true, false, null)
                    .getQueue();
            publish(publisher, queue, 5);
            Channel consumer = connection.createChannel();
            consumer.basicQos(5);
            BlockingQueue<String> got = new LinkedBlockingQueue<>();
            consumer.basicConsume(queue, false, (tag, d) -> got.add(text(d.getBody())), tag -> {});
            for (int i = 0; i < 5; i++) {
                assertThat(got.poll(5, TimeUnit.SECONDS)).isEqualTo("m" + i);
            }
            consumer.close();
            List<String> again = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                GetResponse response = publisher.basicGet(queue, true);
                assertThat(response.getEnvelope().isRedeliver()).isTrue();
                again.add(text(response.getBody()));
            }
            assertThat(again).containsExactly("m0", "m1", "m2", "m3", "m4");
        }
    }

    @Test
    void shouldHonourPrefetchAndRedeliverOnNackRequeue() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            publish(channel, queue, 4);
            channel.basicQos(2);
            BlockingQueue<com.rabbitmq.client.Delivery> got = new LinkedBlockingQueue<>();
            channel.basicConsume(queue, false, (tag, d) -> got.add(d), tag -> {});
            com.rabbitmq.client.Delivery first = got.poll(5, TimeUnit.SECONDS);
            com.rabbitmq.client.Delivery second = got.poll(5, TimeUnit.SECONDS);
            assertThat(got.poll(300, TimeUnit.MILLISECONDS))
                    .as("prefetch 2 holds the third")
                    .isNull();
            channel.basicNack(second.getEnvelope().getDeliveryTag(), false, true);
            com.rabbitmq.client.Delivery redelivered = got.poll(5, TimeUnit.SECONDS);
            assertThat(text(redelivered.getBody())).isEqualTo("m1");
            assertThat(redelivered.getEnvelope().isRedeliver()).isTrue();
            channel.basicAck(redelivered.getEnvelope().getDeliveryTag(), true); // acks m0 and m1
            assertThat(text(got.poll(5, TimeUnit.SECONDS).getBody())).isEqualTo("m2");
            assertThat(text(got.poll(5, TimeUnit.SECONDS).getBody())).isEqualTo("m3");
            assertThat(first.getEnvelope().isRedeliver()).isFalse();
        }
    }

    /**
     * RabbitMQ's "Consumer Prefetch": a per-consumer and a channel-wide limit together bound each consumer by its own
     * and all of them by the channel's; neither applies to a no-ack consumer.
     */
    @Test
    void shouldCombinePerConsumerAndGlobalQosAndLeaveNoAckConsumersUnlimited() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            String q1 = channel.queueDeclare().getQueue();
            String q2 = channel.queueDeclare().getQueue();
            String q3 = channel.queueDeclare().getQueue();
            publish(channel, q1, 4);
            publish(channel, q2, 4);
            publish(channel, q3, 20);
            channel.basicQos(2, false); // each consumer started after this holds 2 at most
            channel.basicQos(3, true); // the channel's consumers hold 3 together
            BlockingQueue<com.rabbitmq.client.Delivery> got = new LinkedBlockingQueue<>();
            DeliverCallback callback = (tag, d) -> got.add(d);
            String c1 = channel.basicConsume(q1, false, callback, tag -> {});
            channel.basicConsume(q2, false, callback, tag -> {});
            List<com.rabbitmq.client.Delivery> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(got.poll(5, TimeUnit.SECONDS));
            }
            assertThat(held).doesNotContainNull();
            assertThat(got.poll(300, TimeUnit.MILLISECONDS))
                    .as("3 for the channel")
                    .isNull();
            assertThat(held.stream()
                            .collect(java.util.stream.Collectors.groupingBy(
                                    d -> d.getEnvelope().getRoutingKey(), java.util.stream.Collectors.counting())))
                    .as("2 at most per consumer")
                    .allSatisfy((queue, count) -> assertThat(count).isLessThanOrEqualTo(2));
            // acks make room: three more come
            channel.basicAck(held.get(2).getEnvelope().getDeliveryTag(), true);
            for (int i = 0; i < 3; i++) {
                assertThat(got.poll(5, TimeUnit.SECONDS)).isNotNull();
            }

            // a no-ack consumer on the same channel gets everything at once
            BlockingQueue<com.rabbitmq.client.Delivery> free = new LinkedBlockingQueue<>();
            channel.basicConsume(q3, true, (tag, d) -> free.add(d), tag -> {});
            for (int i = 0; i < 20; i++) {
                assertThat(free.poll(5, TimeUnit.SECONDS))
                        .as("no-ack delivery %d", i)
                        .isNotNull();
            }
            assertThat(got.poll(100, TimeUnit.MILLISECONDS)).isNull();
            channel.basicCancel(c1);
        }
    }

    @Test
    void shouldCancelConsumersOfADeletedQueue() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            CountDownLatch cancelled = new CountDownLatch(1);
            CancelCallback onCancel = tag -> cancelled.countDown();
            channel.basicConsume(queue, true, (tag, d) -> {}, onCancel);
            connection.createChannel().queueDelete(queue);
            assertThat(cancelled.await(5, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void shouldGetOrGetEmptyAndRejectUnknownDeliveryTag() throws Exception {
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            assertThat(channel.basicGet(queue, false)).isNull();
            publish(channel, queue, 2);
            GetResponse response = channel.basicGet(queue, false);
            assertThat(text(response.getBody())).isEqualTo("m0");
            assertThat(response.getMessageCount()).isEqualTo(1);
            channel.basicReject(response.getEnvelope().getDeliveryTag(), false);
            channel.basicAck(999, false);
            assertThatThrownBy(() -> channel.queueDeclare())
                    .satisfies(e -> assertThat(replyCode(e)).isEqualTo(406));
        }
    }

    @Test
    void shouldCarryPropertiesAndLargeBodiesIntact() throws Exception {
        try (Connection connection = broker.connect();
                Channel channel = connection.createChannel()) {
            String queue = channel.queueDeclare().getQueue();
            byte[] body = new byte[1_000_000];
            new java.util.Random(7).nextBytes(body);
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                    .contentType("application/octet-stream")
                    .deliveryMode(2)
                    .priority(3)
                    .correlationId("c-1")
                    .messageId("m-1")
                    .headers(Map.of("k", "v", "n", 42))
                    .timestamp(new java.util.Date(1_700_000_000_000L))
                    .build();
            channel.confirmSelect();
            channel.basicPublish("", queue, properties, body);
            channel.basicPublish("", queue, null, new byte[0]);
            channel.waitForConfirmsOrDie(5_000);
            GetResponse big = channel.basicGet(queue, true);
            assertThat(big.getBody()).isEqualTo(body);
            assertThat(big.getProps().getCorrelationId()).isEqualTo("c-1");
            assertThat(big.getProps().getPriority()).isEqualTo(3);
            assertThat(big.getProps().getTimestamp()).isEqualTo(new java.util.Date(1_700_000_000_000L));
            assertThat(((LongString) big.getProps().getHeaders().get("k")).toString())
                    .isEqualTo("v");
            assertThat(channel.basicGet(queue, true).getBody()).isEmpty();
        }
    }

    /**
     * Every basic property, and a header of every field type the Java client writes (byte, short, int, long, float,
     * double, decimal, timestamp, void, byte array, boolean, string, nested table and array), published to the default
     * exchange, come back unchanged from a classic and a quorum queue; a headers exchange binding with typed
     * arguments, kept in the metadata log, matches them.
     */
    @Test
    void shouldRoundTripEveryPropertyAndFieldTypeThroughTheDefaultExchange() throws Exception {
        Map<String, Object> nested = new java.util.LinkedHashMap<>();
        nested.put("inner", 7);
        nested.put("list", List.of(1, "two", List.of(3L)));
        Map<String, Object> headers = new java.util.LinkedHashMap<>();
        headers.put("byte", (byte) -5);
        headers.put("short", (short) -300);
        headers.put("int", -70_000);
        headers.put("long", 1L << 40);
        headers.put("float", 1.5f);
        headers.put("double", -2.25d);
        headers.put("decimal", new java.math.BigDecimal("12.345"));
        headers.put("timestamp", new java.util.Date(1_700_000_000_000L));
        headers.put("void", null);
        headers.put("bytes", new byte[] {0, 1, (byte) 0xff});
        headers.put("bool", true);
        headers.put("string", "été");
        headers.put("table", nested);
        headers.put("array", List.of((byte) 1, 2.5d, "x", nested));
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .contentType("application/json")
                .contentEncoding("gzip")
                .headers(headers)
                .deliveryMode(2)
                .priority(9)
                .correlationId("corr")
                .replyTo("reply.q")
                .expiration("60000")
                .messageId("id-1")
                .timestamp(new java.util.Date(1_600_000_000_000L))
                .type("order.created")
                .userId("guest")
                .appId("app")
                .clusterId("cluster")
                .build();
        try (Connection connection = broker.connect()) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("types.classic", true, false, false, null);
            channel.queueDeclare("types.quorum", true, false, false, Map.of("x-queue-type", "quorum"));
            channel.queueDeclare("types.matched", true, false, false, null);
            channel.exchangeDeclare("types.headers", BuiltinExchangeType.HEADERS);
            Map<String, Object> match = new java.util.LinkedHashMap<>(headers);
            match.remove("void");
            match.remove("float");
            match.remove("double");
            match.put("x-match", "all");
            channel.queueBind("types.matched", "types.headers", "", match);
            channel.confirmSelect();
            channel.basicPublish("", "types.classic", properties, bytes("typed"));
            channel.basicPublish("", "types.quorum", properties, bytes("typed"));
            channel.basicPublish("types.headers", "", properties, bytes("typed"));
            channel.waitForConfirmsOrDie(5_000);
            for (String queue : List.of("types.classic", "types.quorum", "types.matched")) {
                GetResponse got = channel.basicGet(queue, true);
                assertThat(got).as(queue).isNotNull();
                AMQP.BasicProperties back = got.getProps();
                assertThat(plain(back.getHeaders())).as(queue).isEqualTo(plain(headers));
                assertThat(List.of(
                                back.getContentType(),
                                back.getContentEncoding(),
                                back.getDeliveryMode(),
                                back.getPriority(),
                                back.getCorrelationId(),
                                back.getReplyTo(),
                                back.getExpiration(),
                                back.getMessageId(),
                                back.getTimestamp(),
                                back.getType(),
                                back.getUserId(),
                                back.getAppId(),
                                back.getClusterId()))
                        .as(queue)
                        .isEqualTo(List.of(
                                properties.getContentType(),
                                properties.getContentEncoding(),
                                properties.getDeliveryMode(),
                                properties.getPriority(),
                                properties.getCorrelationId(),
                                properties.getReplyTo(),
                                properties.getExpiration(),
                                properties.getMessageId(),
                                properties.getTimestamp(),
                                properties.getType(),
                                properties.getUserId(),
                                properties.getAppId(),
                                properties.getClusterId()));
            }
        }
    }

    /**
     * With a negotiated frame_max of 4096 the client splits bodies into frames of up to 4088 octets: every size around
     * the frame boundaries arrives whole, and deliveries come back split to the same limit.
     */
    @Test
    void shouldDeliverBodiesSplitAtEveryFrameBoundaryIntact() throws Exception {
        ConnectionFactory factory = broker.factory();
        factory.setRequestedFrameMax(4096);
        try (Connection connection = factory.newConnection()) {
            assertThat(connection.getFrameMax()).isEqualTo(4096);
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            int[] sizes = {0, 1, 4087, 4088, 4089, 8176, 8177, 4088 * 5 - 1, 100_000};
            java.util.Random random = new java.util.Random(11);
            List<byte[]> bodies = new ArrayList<>();
            channel.confirmSelect();
            for (int size : sizes) {
                byte[] body = new byte[size];
                random.nextBytes(body);
                bodies.add(body);
                channel.basicPublish("", queue, null, body);
            }
            channel.waitForConfirmsOrDie(5_000);
            for (int i = 0; i < sizes.length; i++) {
                assertThat(channel.basicGet(queue, true).getBody())
                        .as("size %d", sizes[i])
                        .isEqualTo(bodies.get(i));
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- helpers

    /** A field value comparable by equals, its Java type kept: strings as strings, tables sorted, bytes listed. */
    private static Object plain(Object value) {
        return switch (value) {
            case null -> "void";
            case LongString s -> "S:" + s;
            case String s -> "S:" + s;
            case byte[] b -> "x:" + java.util.Arrays.toString(b);
            case Map<?, ?> m -> {
                Map<String, Object> sorted = new java.util.TreeMap<>();
                m.forEach((k, v) -> sorted.put(k.toString(), plain(v)));
                yield sorted;
            }
            case List<?> l -> l.stream().map(ProtocolIT::plain).toList();
            default -> value.getClass().getSimpleName() + ":" + value;
        };
    }

    static void publish(Channel channel, String queue, int count) throws Exception {
        channel.confirmSelect();
        for (int i = 0; i < count; i++) {
            channel.basicPublish("", queue, null, bytes("m" + i));
        }
        channel.waitForConfirmsOrDie(5_000);
    }

    static List<String> drain(Channel channel, String queue) throws IOException {
        List<String> bodies = new ArrayList<>();
        GetResponse response;
        while ((response = channel.basicGet(queue, true)) != null) {
            bodies.add(text(response.getBody()));
        }
        return bodies;
    }
}
