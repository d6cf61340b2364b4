package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import java.util.List;
import org.junit.jupiter.api.Test;

class OwnerLeaseTest {
    private static final ReplicationConfig CONFIG = ReplicationConfig.defaults();

    private static Peer echoed(String node, long echoMs) {
        Peer peer = new Peer(NodeId.of(node));
        peer.echoMs = echoMs;
        return peer;
    }

    @Test
    void shouldWaitOutADeposedOwnerUnlessThisProcessOwnedTheEpochBefore() {
        OwnerLease lease = new OwnerLease(CONFIG);
        long delay = CONFIG.newOwnerDeliveryDelayMs();
        assertThat(lease.takeEpoch(Epoch.of(1), 2, 1_000))
                .as("the first epoch has no predecessor")
                .isEqualTo(1_000);
        assertThat(lease.takeEpoch(Epoch.of(3), 2, 2_000)).isEqualTo(2_000 + delay);
        assertThat(lease.takeEpoch(Epoch.of(4), 2, 2_100))
                .as("epoch 3 was this process's: what is left of its wait applies")
                .isEqualTo(2_000 + delay);
        assertThat(lease.takeEpoch(Epoch.of(5), 2, 9_000))
                .as("that wait is over")
                .isEqualTo(9_000);
        assertThat(lease.takeEpoch(Epoch.of(7), 1, 9_500))
                .as("W = 1: no lease to wait out")
                .isEqualTo(9_500);
    }

    @Test
    void shouldHoldUntilTheWMinusFirstHighestEchoPlusTheLease() {
        long leaseMs = CONFIG.ownerLeaseMs();
        List<Peer> peers = List.of(echoed("b", 100), echoed("c", 300), echoed("d", Long.MIN_VALUE));
        assertThat(OwnerLease.until(peers, 1, leaseMs)).isEqualTo(Long.MAX_VALUE);
        assertThat(OwnerLease.until(peers, 2, leaseMs)).isEqualTo(300 + leaseMs);
        assertThat(OwnerLease.until(peers, 3, leaseMs)).isEqualTo(100 + leaseMs);
        assertThat(OwnerLease.until(peers, 4, leaseMs))
                .as("a follower that never answered grants nothing")
                .isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void shouldRenewOncePerBoundary() {
        Peer peer = new Peer(NodeId.of("b"));
        assertThat(OwnerLease.renewalDue(peer, 50, 100)).as("never stamped").isTrue();
        peer.lastStampMs = 120;
        assertThat(OwnerLease.renewalDue(peer, 199, 100)).isFalse();
        assertThat(OwnerLease.renewalDue(peer, 200, 100)).isTrue();
    }
}
