package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.ReplicaEffect.ReplyInstalled;

/**
 * The controller waiting to hear that this replica caught up in an activated epoch (a member that joined it, or an
 * install asked for after the epoch was activated here): answered once this replica follows that epoch and its log
 * durably holds the epoch's start record. Only the latest request waits; one may come before the role it waits for.
 */
final class CatchUpWait {
    private final Effects out;
    /** {@link Epoch#NONE} when nobody waits. */
    private Epoch epoch = Epoch.NONE;

    private NodeId controller;

    CatchUpWait(Effects out) {
        this.out = out;
    }

    void await(NodeId waiting, Epoch caughtUpIn) {
        controller = waiting;
        epoch = caughtUpIn;
    }

    /** Answers the waiting controller if {@code role} follows its epoch and is caught up. */
    void check(Role role) {
        if (epoch.equals(Epoch.NONE)
                || !(role instanceof Following following)
                || !following.epoch().equals(epoch)) {
            return;
        }
        if (following.caughtUp()) {
            out.add(new ReplyInstalled(controller, epoch));
            epoch = Epoch.NONE;
            controller = null;
        }
    }
}
