package io.ganglion.coordination;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;

/** A small generator for seeded tests. A failing test names its seed; rerun it with that seed alone. */
final class Generators {
    private Generators() {}

    /** Seeds 1..count, for {@code @MethodSource}. */
    static LongStream seeds(int count) {
        return LongStream.rangeClosed(1, count);
    }

    static List<NodeId> nodes(int count) {
        List<NodeId> nodes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            nodes.add(NodeId.of("n" + i));
        }
        return nodes;
    }

    /** A live set over {@code count} nodes, each live, down or draining at random. */
    static LiveSet randomLiveSet(SplittableRandom random, int count, long nowMs) {
        LiveSet liveSet = LiveSet.empty();
        for (NodeId node : nodes(count)) {
            long lastHeartbeat = nowMs - random.nextLong(0, 600_000);
            NodeState state =
                    NodeState.live(node, new Incarnation(random.nextLong()), lastHeartbeat, random.nextInt(6) == 0);
            int roll = random.nextInt(4);
            if (roll == 0) {
                state = state.down(DownReason.LIVENESS_EXPIRY);
            } else if (roll == 1) {
                state = state.down(DownReason.EAGER_FAILOVER);
            }
            liveSet = liveSet.with(state);
        }
        return liveSet;
    }

    static DurabilityMode mode(SplittableRandom random) {
        DurabilityMode[] modes = DurabilityMode.values();
        return modes[random.nextInt(modes.length)];
    }
}
