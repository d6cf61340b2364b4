package io.ganglion.sim;

/** Counters of one run, for reports; never used to decide anything. */
public final class SimStats {
    long ticks;
    long heldTicks;
    long lostProposals;
    long rejectedProposals;
    long activations;
    long followersAdded;
    long followersDropped;
    long confirmed;
    long faults;
    long stalledAfterHeal;
    long published;
    long confirmedPublishes;
    long delivered;
    long redelivered;
    long resent;
    long unknownOutcome;
    long earlyCommits;
    long lost;
    /** Confirmed publishes found out of the order their publisher sent them (one per object at most). */
    long reordered;

    long deliveryHolds;
    long parkedAdmitted;
    long expired;
    long lateDeliveries;
    long reseeds;

    public long ticks() {
        return ticks;
    }

    /** Ticks in which at least one object was kept under the follower loss hold. */
    public long heldTicks() {
        return heldTicks;
    }

    public long lostProposals() {
        return lostProposals;
    }

    public long rejectedProposals() {
        return rejectedProposals;
    }

    /** Followers that joined an activated epoch (HistoryRecord.FollowerAdded committed) instead of a new epoch. */
    public long followersAdded() {
        return followersAdded;
    }

    /** Followers that left an activated epoch (HistoryRecord.FollowerDropped committed) instead of a new epoch. */
    public long followersDropped() {
        return followersDropped;
    }

    public long activations() {
        return activations;
    }

    public long confirmed() {
        return confirmed;
    }

    public long faults() {
        return faults;
    }

    /**
     * Objects activated after the faults healed whose owner refuses to serve the epoch (it restarted before it was
     * declared down). The random runs assert it is 0 (docs/testing.md).
     */
    public long stalledAfterHeal() {
        return stalledAfterHeal;
    }

    public long published() {
        return published;
    }

    /** Publishes whose confirm reached their publisher. */
    public long confirmedPublishes() {
        return confirmedPublishes;
    }

    public long delivered() {
        return delivered;
    }

    public long redelivered() {
        return redelivered;
    }

    /** Publishes sent again (an assignment change, a refusal, a timeout): the forwarding path. */
    public long resent() {
        return resent;
    }

    /** Publishes whose publisher's broker died before the confirm: their outcome is unknown. */
    public long unknownOutcome() {
        return unknownOutcome;
    }

    /** Confirms or deliveries of records durable on fewer than W copies (each also a violation). */
    public long earlyCommits() {
        return earlyCommits;
    }

    /** Confirmed publishes missing at the end (each object also a violation). */
    public long lost() {
        return lost;
    }

    /**
     * Times an owner's queue stopped handing out messages because {@link io.ganglion.replication.Replica#mayDeliver}
     * turned false: the owner lease lapsed, or a new owner waited out a deposed one's.
     */
    public long deliveryHolds() {
        return deliveryHolds;
    }

    /** Queue messages an owner let expire: their TTL passed while they were ready. */
    public long expired() {
        return expired;
    }

    /** Queue messages handed to a consumer after their time (each also a violation). */
    public long lateDeliveries() {
        return lateDeliveries;
    }

    /** Publishes the owner side held for its replica's next epoch and then admitted ({@code PublishIntake}). */
    public long parkedAdmitted() {
        return parkedAdmitted;
    }

    /** Copies that restarted their log from an owner's snapshot (the owner had discarded what they lacked). */
    public long reseeds() {
        return reseeds;
    }

    @Override
    public String toString() {
        return "stalledAfterHeal=" + stalledAfterHeal + " " + "ticks=" + ticks + " heldTicks=" + heldTicks
                + " activations=" + activations + " followersAdded=" + followersAdded + " followersDropped="
                + followersDropped + " commits=" + confirmed
                + " published=" + published
                + " confirmedPublishes="
                + confirmedPublishes + " delivered=" + delivered + " redelivered=" + redelivered + " resent=" + resent
                + " unknownOutcome=" + unknownOutcome + " deliveryHolds=" + deliveryHolds + " parkedAdmitted="
                + parkedAdmitted
                + " reseeds=" + reseeds
                + " expired=" + expired
                + " faults=" + faults
                + " lostProposals="
                + lostProposals + " rejectedProposals=" + rejectedProposals;
    }
}
