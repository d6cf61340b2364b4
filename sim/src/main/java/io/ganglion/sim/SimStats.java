package io.ganglion.sim;

/** Counters of one run, for reports; never used to decide anything. */
public final class SimStats {
    long ticks;
    long heldTicks;
    long lostProposals;
    long rejectedProposals;
    long activations;
    long confirmed;
    long faults;
    long stalledAfterHeal;

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
     * declared down): the known gap of docs/simulator.md, counted, not failed.
     */
    public long stalledAfterHeal() {
        return stalledAfterHeal;
    }

    @Override
    public String toString() {
        return "stalledAfterHeal=" + stalledAfterHeal + " " + "ticks=" + ticks + " heldTicks=" + heldTicks
                + " activations=" + activations + " confirmed=" + confirmed + " faults=" + faults + " lostProposals="
                + lostProposals + " rejectedProposals=" + rejectedProposals;
    }
}
