package io.ganglion.queues.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopologyTest {
    private Topology topology =
            Topology.standard().withQueue("q1").withQueue("q2").withQueue("q3");

    private void bind(String source, String queue, String key) {
        topology = topology.withBinding(new Binding(source, Destination.queue(queue), key, Map.of()));
    }

    @Test
    void shouldHaveTheStandardExchanges() {
        assertThat(topology.exchangeNames())
                .containsExactlyInAnyOrder("", "amq.direct", "amq.fanout", "amq.topic", "amq.headers", "amq.match");
        assertThat(topology.exchange("amq.match").orElseThrow().type()).isEqualTo(ExchangeType.HEADERS);
        assertThat(Exchange.reservedName("amq.custom")).isTrue();
        assertThat(Exchange.reservedName("orders")).isFalse();
    }

    @Test
    void shouldRouteDefaultExchangeByQueueName() {
        assertThat(topology.route("", "q2", Map.of())).containsExactly("q2");
        assertThat(topology.route("", "missing", Map.of())).isEmpty();
    }

    @Test
    void shouldRouteDirectFanoutAndTopic() {
        bind("amq.direct", "q1", "k");
        bind("amq.direct", "q2", "other");
        bind("amq.fanout", "q1", "ignored");
        bind("amq.fanout", "q3", "");
        bind("amq.topic", "q2", "stock.*.nyse");
        bind("amq.topic", "q3", "stock.#");

        assertThat(topology.route("amq.direct", "k", Map.of())).containsExactly("q1");
        assertThat(topology.route("amq.fanout", "anything", Map.of())).containsExactlyInAnyOrder("q1", "q3");
        assertThat(topology.route("amq.topic", "stock.ibm.nyse", Map.of())).containsExactlyInAnyOrder("q2", "q3");
        assertThat(topology.route("amq.topic", "stock", Map.of())).containsExactly("q3");
        assertThat(topology.route("nope", "k", Map.of())).isEmpty();
    }

    @Test
    void shouldRouteThroughExchangeToExchangeBindingsOnceEachEvenInACycle() {
        bind("amq.fanout", "q1", "");
        bind("amq.topic", "q2", "a.#");
        bind("amq.topic", "q1", "#"); // q1 reached twice: routed to once
        topology = topology.withBinding(new Binding("amq.fanout", Destination.exchange("amq.topic"), "", Map.of()));
        topology = topology.withBinding(new Binding("amq.topic", Destination.exchange("amq.fanout"), "#", Map.of()));

        assertThat(topology.route("amq.fanout", "a.b", Map.of())).containsExactly("q1", "q2");
        assertThat(topology.route("amq.topic", "b", Map.of())).containsExactly("q1");
        assertThat(topology.route("amq.direct", "a.b", Map.of())).isEmpty();
    }

    @Test
    void shouldRouteHeadersWithAllAndAny() {
        topology = topology.withBinding(new Binding(
                "amq.headers",
                Destination.queue("q1"),
                "",
                Map.of("x-match", "all", "format", "pdf", "type", "report")));
        topology = topology.withBinding(new Binding(
                "amq.headers", Destination.queue("q2"), "", Map.of("x-match", "any", "format", "pdf", "type", "log")));

        assertThat(topology.route("amq.headers", "", Map.of("format", "pdf", "type", "report")))
                .containsExactlyInAnyOrder("q1", "q2");
        assertThat(topology.route("amq.headers", "", Map.of("format", "zip", "type", "log")))
                .containsExactly("q2");
        assertThat(topology.route("amq.headers", "", Map.of())).isEmpty();
    }

    @Test
    void shouldMatchHeadersAsRabbitMqDoes() {
        Map<String, Object> noMatchMode = Map.of("a", 1);
        assertThat(HeadersMatcher.matches(noMatchMode, Map.of("a", 1L)))
                .as("all by default, numbers by value")
                .isTrue();
        assertThat(HeadersMatcher.matches(Map.of("x-match", "all"), Map.of())).isTrue();
        assertThat(HeadersMatcher.matches(Map.of("x-match", "any"), Map.of("a", 1)))
                .isFalse();
        Map<String, Object> presence = new HashMap<>();
        presence.put("a", null);
        assertThat(HeadersMatcher.matches(presence, Map.of("a", "whatever"))).isTrue();
        assertThat(HeadersMatcher.matches(Map.of("x-match", "all", "x-tenant", "t1"), Map.of()))
                .as("x- headers ignored")
                .isTrue();
        assertThat(HeadersMatcher.matches(Map.of("x-match", "all-with-x", "x-tenant", "t1"), Map.of()))
                .isFalse();
        assertThat(HeadersMatcher.matches(Map.of("b", new byte[] {1, 2}), Map.of("b", new byte[] {1, 2})))
                .isTrue();
        assertThat(HeadersMatcher.validMatchMode(Map.of("x-match", "some"))).isFalse();
    }

    @Test
    void shouldFollowExchangeToExchangeBindingsAndSurviveCycles() {
        topology = topology.withExchange(new Exchange("e1", ExchangeType.FANOUT, true, false, false, Map.of()))
                .withExchange(new Exchange("e2", ExchangeType.DIRECT, true, false, true, Map.of()));
        topology = topology.withBinding(new Binding("e1", Destination.exchange("e2"), "", Map.of()));
        topology = topology.withBinding(new Binding("e2", Destination.exchange("e1"), "k", Map.of()));
        bind("e2", "q1", "k");
        bind("e1", "q3", "");

        assertThat(topology.route("e1", "k", Map.of())).containsExactlyInAnyOrder("q1", "q3");
        assertThat(topology.route("e1", "other", Map.of())).containsExactly("q3");
    }

    @Test
    void shouldDropBindingsWithTheirQueueOrExchange() {
        bind("amq.direct", "q1", "k");
        topology = topology.withExchange(new Exchange("e1", ExchangeType.FANOUT, true, false, false, Map.of()));
        topology = topology.withBinding(new Binding("e1", Destination.queue("q1"), "", Map.of()));
        topology = topology.withBinding(new Binding("amq.fanout", Destination.exchange("e1"), "", Map.of()));

        Topology withoutQueue = topology.withoutQueue("q1");
        assertThat(withoutQueue.route("amq.direct", "k", Map.of())).isEmpty();
        assertThat(withoutQueue.bindingsTo(Destination.queue("q1"))).isEmpty();

        Topology withoutExchange = topology.withoutExchange("e1");
        assertThat(withoutExchange.bindingsFrom("e1")).isEmpty();
        assertThat(withoutExchange.bindingsTo(Destination.exchange("e1"))).isEmpty();
        assertThat(withoutExchange.route("amq.direct", "k", Map.of())).containsExactly("q1");
    }

    @Test
    void shouldTreatARepeatedBindingAsOne() {
        bind("amq.direct", "q1", "k");
        Topology again = topology.withBinding(new Binding("amq.direct", Destination.queue("q1"), "k", Map.of()));
        assertThat(again).isSameAs(topology);
        Topology unbound = topology.withoutBinding(new Binding("amq.direct", Destination.queue("q1"), "k", Map.of()));
        assertThat(unbound.bindingsFrom("amq.direct")).isEmpty();
        assertThat(unbound.withoutBinding(new Binding("amq.direct", Destination.queue("q1"), "k", Map.of())))
                .isSameAs(unbound);
    }

    @Test
    void shouldCompareExchangeDeclarationsForEquivalence() {
        Exchange a = new Exchange("e", ExchangeType.TOPIC, true, false, false, Map.of("alternate-exchange", "ae"));
        assertThat(a.equivalent(
                        new Exchange("e", ExchangeType.TOPIC, true, false, false, Map.of("alternate-exchange", "ae"))))
                .isTrue();
        assertThat(a.equivalent(
                        new Exchange("e", ExchangeType.DIRECT, true, false, false, Map.of("alternate-exchange", "ae"))))
                .isFalse();
        assertThat(a.equivalent(
                        new Exchange("e", ExchangeType.TOPIC, false, false, false, Map.of("alternate-exchange", "ae"))))
                .isFalse();
    }
}
