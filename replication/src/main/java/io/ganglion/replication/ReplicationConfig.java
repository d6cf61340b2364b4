package io.ganglion.replication;

/**
 * Tuning of the data path, fixed per broker.
 *
 * @param windowRecords records streamed to one follower and not yet acknowledged, at most
 * @param windowBytes bytes streamed to one follower and not yet acknowledged, at most; a follower behind the window is
 *     fed from the log by reads instead of from the live stream
 * @param fetchRecords records per log read (feeding a follower, serving an install)
 * @param resendAfterMs a follower whose reported end stays behind what was sent this long after the last send is fed
 *     again from its end (a message lost on the link)
 * @param progressEveryMs a follower reports its progress at least this often, so an owner learns of it after a fault
 * @param learnerLag a suspended follower (it came back with a new incarnation) is counted again once its durable
 *     offset is within this many records of the owner's log end
 * @param installRetryMs an install waiting on a source this long asks the next source
 * @param ownerLeaseMs the owner lease: with W >= 2 an owner hands messages to consumers only while W - 1 followers
 *     answered a message it sent less than this long ago (by its own clock), and renews it every quarter of it. Must
 *     stay well above the round trip to the followers and well below the recovery's own timings (seal, install,
 *     activate take hundreds of ms at least); see {@link Replica#mayDeliver}
 * @param leaseMarginMs a new owner of an epoch after the first waits {@code ownerLeaseMs + leaseMarginMs} after it
 *     took the epoch before it delivers, so a deposed owner's lease has lapsed; the margin covers clocks running at
 *     different rates on the two brokers (25 % of the lease by default)
 * @param publishIndexCapacity the newest publishes whose ids the owner remembers, to take a re-send of one as the
 *     same message ({@link PublishIndex}); 0 remembers none, for a single copy whose owner never changes (a classic
 *     queue), where a re-sent publish is a new message as at-least-once allows
 */
public record ReplicationConfig(
        int windowRecords,
        long windowBytes,
        int fetchRecords,
        long resendAfterMs,
        long progressEveryMs,
        long learnerLag,
        long installRetryMs,
        long ownerLeaseMs,
        long leaseMarginMs,
        int publishIndexCapacity) {

    /** The default owner lease: a few round trips plus a few renewals, far below any recovery. */
    public static final long DEFAULT_OWNER_LEASE_MS = 400;

    /** The default margin for clock rates: 25 % of the default lease. */
    public static final long DEFAULT_LEASE_MARGIN_MS = 100;

    public ReplicationConfig {
        if (windowRecords < 1 || windowBytes < 1 || fetchRecords < 1) {
            throw new IllegalArgumentException("window and fetch sizes must be positive");
        }
        if (publishIndexCapacity < 0) {
            throw new IllegalArgumentException("publish index capacity must not be negative: " + publishIndexCapacity);
        }
        if (ownerLeaseMs < 4 || leaseMarginMs < 0) {
            throw new IllegalArgumentException("owner lease must be at least 4 ms and its margin not negative: "
                    + ownerLeaseMs + ", " + leaseMarginMs);
        }
    }

    /**
     * The broker's tuning. The window covers what one busy publisher keeps in flight: a follower reports progress only
     * when its copy is durable, so a full window waits a whole round trip with the follower's force in it, and records
     * beyond the window go to the follower by log reads as its reports come. PerfTest with {@code -c 1000} keeps 1,000
     * publishes unconfirmed and its consumer acks as many, 2,000 records a queue; a window of 256 records stops the
     * stream at every 256th record for a round trip and caps a queue's confirms well below what the cores allow
     * (docs/benchmarks.md). 4,096 records and 4 MiB stream that load live, 1 KB bodies too.
     */
    public static ReplicationConfig defaults() {
        return new ReplicationConfig(
                4096,
                4 << 20,
                256,
                200,
                100,
                64,
                500,
                DEFAULT_OWNER_LEASE_MS,
                DEFAULT_LEASE_MARGIN_MS,
                Replica.PUBLISH_INDEX_CAPACITY);
    }

    /** A copy of this tuning with another owner lease and margin. */
    public ReplicationConfig withOwnerLease(long leaseMs, long marginMs) {
        return new ReplicationConfig(
                windowRecords,
                windowBytes,
                fetchRecords,
                resendAfterMs,
                progressEveryMs,
                learnerLag,
                installRetryMs,
                leaseMs,
                marginMs,
                publishIndexCapacity);
    }

    /** A copy of this tuning whose owner remembers no publish ids: for a single copy whose owner never changes. */
    public ReplicationConfig withoutPublishIndex() {
        return new ReplicationConfig(
                windowRecords,
                windowBytes,
                fetchRecords,
                resendAfterMs,
                progressEveryMs,
                learnerLag,
                installRetryMs,
                ownerLeaseMs,
                leaseMarginMs,
                0);
    }

    /** How often an owner renews its lease with an otherwise idle follower: a quarter of the lease. */
    public long leaseRenewMs() {
        return ownerLeaseMs / 4;
    }

    /** How long a new owner of a later epoch waits before it delivers: the lease plus the margin. */
    public long newOwnerDeliveryDelayMs() {
        return ownerLeaseMs + leaseMarginMs;
    }
}
