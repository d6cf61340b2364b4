package io.ganglion.sim;

import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.RuntimeSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * One seeded run with random faults. Everything comes from the seed: the cluster (3 to 5 brokers, in one run of three
 * a node with a slow disk), the objects (3 to 6 queues and streams of 1 to 3 copies, every durability mode, each with
 * a publisher and, for queues, a consumer), and a fault every 0.2 to 3 s for 15 to 30 s of virtual time: crashes with
 * restart after 20 ms to 8 s (new incarnation), the controller, an owner or a follower killed, links cut, a node
 * isolated, random halves, a bridge, slow links (late heartbeats), a node draining, message drop bursts, and the
 * follower loss hold switched between 0, 0.5 s, 3 s and 300 s. In one run of three every queue has a message TTL of
 * 50 to 400 ms, drawn from a generator of its own, so that the runs without one keep their courses. Then every fault
 * heals and:
 *
 * <ol>
 *   <li>every object is activated again within {@link #RECOVERY_BOUND_MS};
 *   <li>every object confirms a publish again within {@link #RECOVERY_BOUND_MS} of the heal (it serves);
 *   <li>publishing stops, the workload drains, and the total-queue check runs.
 * </ol>
 */
public final class RandomFaults {
    /** How long after the last fault heals every object must be activated, and serving, again. */
    public static final long RECOVERY_BOUND_MS = 30_000;

    private static final long DRAIN_BOUND_MS = 30_000;

    /** Mixed into the seed for the message TTL's own generator ("ttl_ttl_"). */
    private static final long TTL_SALT = 0x7474_6c5f_7474_6c5fL;

    private RandomFaults() {}

    public static SimResult run(long seed) {
        return run(seed, SimConfig.of(seed, 3));
    }

    /**
     * Runs {@code seed} with the bugs of {@code template} (its node count, drop rate and message TTL are drawn from
     * the seed).
     */
    public static SimResult run(long seed, SimConfig template) {
        SplittableRandom draw = new SplittableRandom(seed ^ 0x6de6bd9d97f6ef91L);
        int nodes = 3 + draw.nextInt(3);
        double dropRate = draw.nextInt(3) == 0 ? 0.01 : 0.0;
        SimCluster cluster = new SimCluster(new SimConfig(seed, nodes, dropRate, messageTtlMs(seed), template.bugs()));
        if (draw.nextInt(3) == 0) {
            cluster.slowDisk(cluster.nodes().get(draw.nextInt(nodes)), 20 + draw.nextLong(80));
        }
        int objects = 3 + draw.nextInt(4);
        List<ObjectId> ids = new ArrayList<>();
        for (int i = 0; i < objects; i++) {
            ObjectKind kind = draw.nextInt(5) == 0 ? ObjectKind.STREAM : ObjectKind.QUEUE;
            int copies = 1 + draw.nextInt(Math.min(3, nodes));
            DurabilityMode mode = DurabilityMode.values()[draw.nextInt(3)];
            if (draw.nextInt(3) > 0) {
                copies = 3;
                mode = DurabilityMode.MAJORITY_DURABLE;
            }
            ids.add(cluster.createWithClients("o" + i, kind, copies, mode, 40 + draw.nextLong(80)));
        }
        cluster.runFor(2_000);
        long faultEnd = cluster.now() + 15_000 + draw.nextLong(15_000);
        for (long at = cluster.now() + 200 + draw.nextLong(2_800); at < faultEnd; at += 200 + draw.nextLong(2_800)) {
            int action = draw.nextInt(12);
            long delay = draw.nextInt(10) < 3 ? 20 + draw.nextLong(280) : 500 + draw.nextLong(7_500);
            long pick = draw.nextLong();
            long holdChoice = draw.nextInt(4);
            cluster.scheduler().at(at, "fault " + action, () -> fault(cluster, ids, action, delay, pick, holdChoice));
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
        long serveDeadline = healedAt + RECOVERY_BOUND_MS;
        while (!serving(cluster, ids, healedAt) && cluster.now() < serveDeadline) {
            cluster.runFor(50);
        }
        for (ObjectId object : ids) {
            if (cluster.invariants().lastConfirmMs(object) <= healedAt) {
                extra.add(object + " confirmed nothing within " + RECOVERY_BOUND_MS
                        + " ms after the faults healed at t=" + healedAt + ": " + cluster.history(object));
            }
        }
        if (!cluster.drainAndCheck(DRAIN_BOUND_MS)) {
            extra.add("the workload did not drain within " + DRAIN_BOUND_MS + " ms: "
                    + cluster.workload().unconfirmed() + " unconfirmed, "
                    + cluster.invariants().undelivered() + " confirmed and undelivered; forwarding "
                    + cluster.brokers().stream()
                            .filter(SimBroker::alive)
                            .map(broker -> String.valueOf(broker.forwarding()))
                            .toList());
        }
        cluster.image().projectedAssignments().forEach((object, assignment) -> {
            if (!cluster.broker(assignment.owner())
                    .mayOwn(object, assignment.epoch().value())) {
                cluster.stats().stalledAfterHeal++;
            }
        });
        return cluster.finish(extra);
    }

    /** The message TTL of the run's queues: in one run of three 50 to 400 ms, else none. */
    static long messageTtlMs(long seed) {
        SplittableRandom draw = new SplittableRandom(seed ^ TTL_SALT);
        return draw.nextInt(3) == 0 ? 50 + draw.nextLong(351) : SimConfig.NO_TTL;
    }

    private static boolean serving(SimCluster cluster, List<ObjectId> ids, long healedAt) {
        for (ObjectId object : ids) {
            if (cluster.invariants().lastConfirmMs(object) <= healedAt) {
                return false;
            }
        }
        return true;
    }

    private static void fault(
            SimCluster cluster, List<ObjectId> ids, int action, long delay, long pick, long holdChoice) {
        List<NodeId> nodes = cluster.nodes();
        NodeId node = nodes.get((int) Math.floorMod(pick, (long) nodes.size()));
        NodeId other = nodes.get((int) Math.floorMod(pick >>> 16, (long) nodes.size()));
        ObjectId object = ids.get((int) Math.floorMod(pick >>> 32, (long) ids.size()));
        Optional<Assignment> active = cluster.history(object).validate();
        switch (action) {
            case 0 -> crashFor(cluster, node, delay);
            case 1 -> cluster.controller().ifPresent(controller -> crashFor(cluster, controller, delay));
            case 2 -> {
                cluster.partition(node, other);
                cluster.scheduler().after(delay, "heal " + node, () -> cluster.heal(node, other));
            }
            case 3 -> {
                cluster.isolate(node);
                cluster.scheduler().after(delay, "heal " + node, () -> healNode(cluster, node));
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
            case 6 -> {
                long[] holds = {0, 500, 3_000, 300_000};
                cluster.setting(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS, holds[(int) holdChoice]);
            }
            case 7 -> {
                // random halves: each node on a side by one bit of the pick
                List<NodeId> side = new ArrayList<>();
                for (int i = 0; i < nodes.size(); i++) {
                    if (((pick >>> (40 + i)) & 1) == 1) {
                        side.add(nodes.get(i));
                    }
                }
                cluster.partition(side);
                cluster.scheduler().after(delay, "heal-all", cluster::healAll);
            }
            case 8 -> {
                // a bridge: two halves that cannot reach each other, and one node that reaches both
                List<NodeId> left = new ArrayList<>();
                List<NodeId> right = new ArrayList<>();
                for (NodeId candidate : nodes) {
                    if (!candidate.equals(node)) {
                        (left.size() <= right.size() ? left : right).add(candidate);
                    }
                }
                for (NodeId a : left) {
                    for (NodeId b : right) {
                        cluster.partition(a, b);
                    }
                }
                cluster.scheduler().after(delay, "heal-all", cluster::healAll);
            }
            case 9 -> {
                // late heartbeats: every link of the node slowed by 200 ms to 1.5 s
                long extra = 200 + Math.floorMod(pick >>> 8, 1_300L);
                for (NodeId peer : nodes) {
                    cluster.slowLink(node, peer, extra);
                }
                cluster.scheduler().after(delay, "unslow " + node, () -> {
                    for (NodeId peer : cluster.nodes()) {
                        cluster.slowLink(node, peer, 0);
                    }
                });
            }
            case 10 -> active.ifPresent(assignment -> crashFor(cluster, assignment.owner(), delay));
            default ->
                active.filter(assignment -> !assignment.followers().isEmpty())
                        .ifPresent(assignment -> crashFor(
                                cluster,
                                assignment.followers().get((int) Math.floorMod(pick >>> 24, (long)
                                        assignment.followers().size())),
                                delay));
        }
    }

    private static void crashFor(SimCluster cluster, NodeId node, long delay) {
        cluster.crash(node);
        cluster.scheduler().after(delay, "restart " + node, () -> cluster.restart(node));
    }

    private static void healNode(SimCluster cluster, NodeId node) {
        for (NodeId peer : cluster.nodes()) {
            cluster.heal(node, peer);
        }
    }
}
