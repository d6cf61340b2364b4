package io.ganglion.replication;

/**
 * What a {@link Replica} is doing in its object's current epoch, with that role's state: {@link Owning} (the owner,
 * sealed or not), {@link Following} (a follower, a learner until the owner counts it), {@link Installing} (being
 * brought to a recovery point for an epoch not activated here yet) or {@link Idle} (none: unassigned, sealed, or
 * awaiting an epoch it has not heard of). The log state every role reads is the replica's {@link LogState}.
 */
sealed interface Role permits Owning, Following, Installing, Idle {}
