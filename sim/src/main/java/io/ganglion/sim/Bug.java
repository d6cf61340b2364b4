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
    SEAL_WITHOUT_FENCE,
    /**
     * Recovery proceeds once W - 1 members of E sealed instead of R = |E| - W + 1: the controller forges the missing
     * seal records (the coordination history enforces R itself, so the wrong threshold is injected where the seals
     * are counted, at the controller).
     */
    R_IS_W_MINUS_ONE,
    /** Owners confirm and deliver once W - 1 copies are durable: the broker hands the owner machine W - 1 as W. */
    CONFIRM_AT_W_MINUS_ONE,
    /** A replica acknowledges an install (and a catch-up) when asked, before it holds the recovery point. */
    ACTIVATE_BEFORE_INSTALL,
    /** The simulated disk acknowledges a seal persist without writing the sealed epoch: a crash forgets the seal. */
    SKIP_SEAL_PERSIST,
    /**
     * Owners ignore the owner lease ({@code Replica.mayDeliver}): a deposed owner that neither is sealed nor hears of
     * the new epoch goes on delivering, and a new owner delivers at once, so a consumer can get a message again
     * without the redelivered flag.
     */
    NO_OWNER_LEASE,
    /**
     * The shipping owner side ({@code serving.QueueOwner}) lifts a delivery hold but never holds again: an owner whose
     * lease ran out (deposed, cut off from its followers) goes on delivering while a new owner delivers the same
     * messages.
     */
    DELIVER_ON_EXPIRED_LEASE,
    /**
     * The shipping owner side reports the lowest unsettled offset as its low water at once, ignoring the resend
     * window: a settled record goes before a publish re-sent after it arrives, and a copy reseeded or restarted since
     * (its dedupe index rebuilt from what it holds) appends the re-send again.
     */
    DISCARD_INSIDE_RESEND_WINDOW,
    /**
     * The shipping owner side rebuilds its queue after a failover (or a restart) without the messages' expiry times:
     * what the new owner inherits from the log never expires, and goes to consumers after its time (runs with a message
     * TTL only).
     */
    REBUILD_WITHOUT_EXPIRY,
    /**
     * The shipping forwarding lanes ({@code serving.ForwardLanes}) take a publish the broker's own replica gave back as
     * a new one, with a sequence of its own: the next owner appends it again even when the old owner committed it.
     */
    ADOPT_AS_NEW,
    /**
     * The shipping forwarding lanes send every publish without naming the one before it, so the owner's intake ({@code
     * serving.PublishIntake}) cannot hold a later publish behind one it sent back: a queue's publishes from one broker
     * are committed out of the order they came.
     */
    SEND_WITHOUT_AFTER,
    /**
     * The owner answers a drop request at once, without waiting until the members left hold every record it confirmed
     * with the leaving follower: a recovery sealing R' of the smaller E may then miss a confirmed record.
     */
    DROP_WITHOUT_PROOF,
    /**
     * The controller runtime hands the controller core the committed image with its commands in flight applied, as
     * if they were committed: the core then sends seals for a recovery whose proposal may be lost with its leader, and
     * installs to a recovery point that may lose to a higher seal committed first.
     */
    TICK_ON_PROPOSED_STEPS
}
