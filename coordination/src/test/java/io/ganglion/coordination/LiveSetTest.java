package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LiveSetTest {
    private static final NodeId A = NodeId.of("a");
    private static final NodeId B = NodeId.of("b");

    @Test
    void shouldExpireSilentNodesWithTheirLastHeartbeat() {
        LiveSet liveSet = LiveSet.empty()
                .heartbeat(A, new Incarnation(1), false, 1_000)
                .heartbeat(B, new Incarnation(2), false, 1_900);

        LiveSet expired = liveSet.expire(2_000, 1_000, 0);

        NodeState a = expired.node(A).orElseThrow();
        assertThat(a.live()).isFalse();
        assertThat(a.reason()).contains(DownReason.LIVENESS_EXPIRY);
        assertThat(a.lastHeartbeatMs()).as("down since its last heartbeat").isEqualTo(1_000);
        assertThat(expired.isLive(B)).isTrue();
    }

    @Test
    void shouldWaitOneExpiryPeriodAfterBecomingController() {
        LiveSet liveSet = LiveSet.empty().heartbeat(A, new Incarnation(1), false, 0);
        assertThat(liveSet.expire(5_000, 1_000, 4_500).isLive(A)).isTrue();
        assertThat(liveSet.expire(5_500, 1_000, 4_500).isLive(A)).isFalse();
    }

    @Test
    void shouldMarkEagerFailoverAndComeBackOnHeartbeat() {
        LiveSet liveSet = LiveSet.empty().heartbeat(A, new Incarnation(1), false, 10);
        LiveSet down = liveSet.eagerFailover(A, 15);
        assertThat(down.node(A).orElseThrow().reason()).contains(DownReason.EAGER_FAILOVER);
        assertThat(down.node(A).orElseThrow().lastHeartbeatMs())
                .as("silent since the connection closed")
                .isEqualTo(15);
        assertThat(down.eagerFailover(A, 16)).isSameAs(down);
        LiveSet back = down.heartbeat(A, new Incarnation(9), false, 20);
        assertThat(back.isLive(A)).isTrue();
        assertThat(back.node(A).orElseThrow().incarnation()).isEqualTo(new Incarnation(9));
    }

    @Test
    void shouldNotPlaceOnDrainingOrDownNodes() {
        LiveSet liveSet =
                LiveSet.empty().heartbeat(A, new Incarnation(1), true, 10).heartbeat(B, new Incarnation(2), false, 10);
        assertThat(liveSet.placeableNodes()).containsExactly(B);
        assertThat(liveSet.eagerFailover(B, 20).placeableNodes()).isEmpty();
    }

    @Test
    void shouldReportOnlyStatusChangesNotHeartbeatTimes() {
        LiveSet committed = LiveSet.empty().heartbeat(A, new Incarnation(1), false, 10);
        assertThat(committed.heartbeat(A, new Incarnation(1), false, 99).changesSince(committed))
                .isEmpty();
        assertThat(committed.heartbeat(A, new Incarnation(2), false, 99).changesSince(committed))
                .extracting(NodeState::incarnation)
                .containsExactly(new Incarnation(2));
        assertThat(committed.eagerFailover(A, 20).changesSince(committed)).hasSize(1);
    }
}
