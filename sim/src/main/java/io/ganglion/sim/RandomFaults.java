package io.ganglion.sim;

import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.RuntimeSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * One seeded run with random faults. Everything comes from the seed: the cluster (3 to 5 brokers), the objects (3 to 6
 * queues and streams of 1 to 3 copies, every durability mode), and a fault every 0.2 to 3 s for 15 to 30 s of virtual
 * time: crashes with restart after 20 ms to 8 s (new incarnation), the controller killed, links cut, a node isolated,
 * a node draining, message drop bursts, and the follower loss hold switched between 0, 0.5 s, 3 s and 300 s. Then
 * every fault heals (all brokers up, links whole, nothing draining) and every object must be activated again within
 * {@link #RECOVERY_BOUND_MS}.
 */
public final class RandomFaults {
    /** How long after the last fault heals every object must be activated again. */
    public static final long RECOVERY_BOUND_MS = 30_000;

    private RandomFaults() {}

    public static SimResult run(long seed) {
        return run(seed, new SimConfig(seed, 3, 0.0, java.util.Set.of()));
    }

    /** Runs {@code seed} with the bugs of {@code template} (its node count and drop rate are drawn from the seed). */
    public static SimResult run(long seed, SimConfig template) {
        SplittableRandom draw = new SplittableRandom(seed ^ 0x6de6bd9d97f6ef91L);
        int nodes = 3 + draw.nextInt(3);
        double dropRate = draw.nextInt(3) == 0 ? 0.01 : 0.0;
        SimCluster cluster = new SimCluster(new SimConfig(seed, nodes, dropRate, template.bugs()));
        int objects = 3 + draw.nextInt(4);
        for (int i = 0; i < objects; i++) {
            ObjectKind kind = draw.nextInt(5) == 0 ? ObjectKind.STREAM : ObjectKind.QUEUE;
            int copies = 1 + draw.nextInt(Math.min(3, nodes));
            DurabilityMode mode = DurabilityMode.values()[draw.nextInt(3)];
            if (draw.nextInt(3) > 0) {
                copies = 3;
                mode = DurabilityMode.MAJORITY_DURABLE;
            }
            cluster.create("o" + i, kind, copies, mode);
        }
        cluster.runFor(2_000);
        long faultEnd = cluster.now() + 15_000 + draw.nextLong(15_000);
        for (long at = cluster.now() + 200 + draw.nextLong(2_800); at < faultEnd; at += 200 + draw.nextLong(2_800)) {
            int action = draw.nextInt(7);
            long delay = draw.nextInt(10) < 3 ? 20 + draw.nextLong(280) : 500 + draw.nextLong(7_500);
            long pick = draw.nextLong();
            long holdChoice = draw.nextInt(4);
            cluster.scheduler().at(at, "fault " + action, () -> fault(cluster, action, delay, pick, holdChoice));
        }
        cluster.runFor(faultEnd - cluster.now());
        cluster.healAll();
        cluster.dropRate(dropRate);
        for (NodeId node : cluster.nodes()) {
            cluster.drain(node, false);
            cluster.restart(node);
        }
        long healedAt = cluster.now();
        List<String> extra = new ArrayList<>();
        if (!cluster.awaitAllActivated(RECOVERY_BOUND_MS)) {
            extra.add("not every object activated within " + RECOVERY_BOUND_MS + " ms after the faults healed at t="
                    + healedAt + ": " + cluster.image().objects().values());
        }
        cluster.runFor(1_000);
        cluster.image().projectedAssignments().forEach((object, assignment) -> {
            if (!cluster.broker(assignment.owner())
                    .mayOwn(object, assignment.epoch().value())) {
                cluster.stats().stalledAfterHeal++;
            }
        });
        return cluster.finish(extra);
    }

    private static void fault(SimCluster cluster, int action, long delay, long pick, long holdChoice) {
        List<NodeId> nodes = cluster.nodes();
        NodeId node = nodes.get((int) Math.floorMod(pick, (long) nodes.size()));
        NodeId other = nodes.get((int) Math.floorMod(pick >>> 16, (long) nodes.size()));
        switch (action) {
            case 0 -> {
                cluster.crash(node);
                cluster.scheduler().after(delay, "restart " + node, () -> cluster.restart(node));
            }
            case 1 -> {
                Optional<NodeId> controller = cluster.controller();
                cluster.killController();
                controller.ifPresent(
                        killed -> cluster.scheduler().after(delay, "restart " + killed, () -> cluster.restart(killed)));
            }
            case 2 -> {
                cluster.partition(node, other);
                cluster.scheduler().after(delay, "heal " + node, () -> cluster.heal(node, other));
            }
            case 3 -> {
                cluster.isolate(node);
                cluster.scheduler().after(delay, "heal " + node, () -> {
                    for (NodeId peer : cluster.nodes()) {
                        cluster.heal(node, peer);
                    }
                });
            }
            case 4 -> {
                cluster.drain(node, true);
                cluster.scheduler().after(delay + 2_000, "undrain " + node, () -> cluster.drain(node, false));
            }
            case 5 -> {
                cluster.dropRate(0.05);
                cluster.scheduler()
                        .after(
                                2_000,
                                "drops-off",
                                () -> cluster.dropRate(cluster.config().dropRate()));
            }
            default -> {
                long[] holds = {0, 500, 3_000, 300_000};
                cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, holds[(int) holdChoice]);
            }
        }
    }
}
