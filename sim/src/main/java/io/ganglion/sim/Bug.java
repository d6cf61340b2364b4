package io.ganglion.sim;

/**
 * Rule breaks the simulator can inject, test-only, to show that the checker catches them. A healthy run has none.
 */
public enum Bug {
    /**
     * The simulated controller forges seal records for members of E that never sealed as soon as one real seal is in,
     * so it activates without waiting for R seals. {@code AcceptedHistory} cannot tell a forged seal from a real one;
     * the checker compares the seal records with the seals the replicas really performed.
     */
    FORGE_SEALS,
    /**
     * A replica answers a seal without refusing later appends: the owner keeps appending (and confirming) after the
     * recovery point was taken, so a confirmed record may be missing from the next epoch.
     */
    SEAL_WITHOUT_FENCE
}
