package io.ganglion.coordination;

import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What one controller tick decided.
 *
 * @param commands metadata commands to propose, in order
 * @param requests seal, install and catch-up requests to send to brokers now
 * @param held objects keeping their assignment under the follower loss hold, with the lost followers
 * @param backoff the recovery driver's retry state for the next tick
 */
public record TickResult(
        List<CoordinationCommand> commands,
        List<RecoveryRequest> requests,
        SortedMap<ObjectId, List<NodeId>> held,
        RecoveryBackoff backoff) {

    public TickResult {
        commands = List.copyOf(commands);
        requests = List.copyOf(requests);
        held = Collections.unmodifiableSortedMap(new TreeMap<>(held));
    }
}
