package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** How {@code ctl queues} shows a replicated queue's lost followers. */
class CtlTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shouldShowHeldFollowersWithTheirHoldAndLeavingOnesAfterThem() throws Exception {
        JsonNode q = JSON.readTree(
                "{\"held\":[{\"node\":\"ganglion-2\",\"since_ms\":0,\"until_ms\":300000}],\"leaving\":[\"ganglion-3\"]}");
        assertThat(Ctl.Queues.held(q.path("held"), q.path("leaving")))
                .isEqualTo("ganglion-2(since 1970-01-01T00:00:00Z until 1970-01-01T00:05:00Z),ganglion-3(leaving)");
        assertThat(Ctl.Queues.held(JSON.readTree("[]"), JSON.readTree("[]"))).isEqualTo("-");
        assertThat(Ctl.Queues.held(JSON.readTree("[]"), q.path("missing")))
                .as("a broker that does not say")
                .isEqualTo("-");
    }
}
