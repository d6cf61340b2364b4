package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import java.util.Arrays;
import java.util.Collection;

/**
 * The owner lease and the new owner's delivery wait, which together keep two owners from handing out messages at once
 * (see {@link Replica#mayDeliver}). One per replica: it remembers the last epoch this process owned, whose successor
 * here need not wait out a deposed owner.
 */
final class OwnerLease {
    private final ReplicationConfig config;
    /** The last epoch this process took as owner (0: none). */
    private long lastOwnedEpoch;
    /** The delivery wait of {@link #lastOwnedEpoch}: its successor in this process keeps what is left of it. */
    private long lastOwnedDeliverFromMs = Long.MIN_VALUE;

    OwnerLease(ReplicationConfig config) {
        this.config = config;
    }

    /**
     * Takes {@code epoch} as owner at {@code nowMs} and returns the local time before which it delivers nothing. With
     * W >= 2 an owner of an earlier epoch that was not sealed itself may still hold its lease: wait it out, unless that
     * owner was this process (it owned the epoch just before, and taking this one ended that role); then what is left
     * of that epoch's own wait still applies, for the owners before it.
     */
    long takeEpoch(Epoch epoch, int writeRequirement, long nowMs) {
        long deliverFrom = nowMs;
        if (writeRequirement >= 2 && epoch.value() > 1) {
            deliverFrom = lastOwnedEpoch == epoch.value() - 1
                    ? Math.max(nowMs, lastOwnedDeliverFromMs)
                    : nowMs + config.newOwnerDeliveryDelayMs();
        }
        lastOwnedEpoch = epoch.value();
        lastOwnedDeliverFromMs = deliverFrom;
        return deliverFrom;
    }

    /**
     * The local time until which the lease holds on the followers' echoes: {@link Long#MAX_VALUE} when W is 1, {@link
     * Long#MIN_VALUE} when fewer than W - 1 followers answered, else the (W - 1)-th highest echoed send time plus
     * {@link ReplicationConfig#ownerLeaseMs}.
     */
    static long until(Collection<Peer> peers, int writeRequirement, long leaseMs) {
        int needed = writeRequirement - 1;
        if (needed <= 0) {
            return Long.MAX_VALUE;
        }
        long[] echoes = new long[peers.size()];
        int n = 0;
        for (Peer peer : peers) {
            if (peer.echoMs != Long.MIN_VALUE) {
                echoes[n++] = peer.echoMs;
            }
        }
        if (n < needed) {
            return Long.MIN_VALUE;
        }
        Arrays.sort(echoes, 0, n);
        return echoes[n - needed] + leaseMs;
    }

    /**
     * Whether {@code peer} heard nothing from the owner since the last renewal boundary (a multiple of {@code
     * renewMs}): a stamp now renews the lease. The boundaries are the same for every replica, so a broker's idle
     * owners renew together, in one tick, and what they send one peer leaves in one write. Stamps stay at most {@code
     * renewMs} plus a tick apart.
     */
    static boolean renewalDue(Peer peer, long nowMs, long renewMs) {
        return peer.lastStampMs == Long.MIN_VALUE
                || Math.floorDiv(nowMs, renewMs) != Math.floorDiv(peer.lastStampMs, renewMs);
    }
}
