package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PlacementTest {

    private static ObjectSpec queue(int i, int copies) {
        return new ObjectSpec(
                ObjectId.of("/", String.format("q%03d", i)), ObjectKind.QUEUE, copies, DurabilityMode.MAJORITY_DURABLE);
    }

    private static LiveSet allLive(int count) {
        LiveSet liveSet = LiveSet.empty();
        for (NodeId node : Generators.nodes(count)) {
            liveSet = liveSet.heartbeat(node, new Incarnation(1), false, 0);
        }
        return liveSet;
    }

    @Test
    void shouldBalanceOwnersAndCopiesOnAFreshCluster() {
        List<Placement.Current> objects = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            objects.add(new Placement.Current(queue(i, 3), Optional.empty()));
        }
        SortedMap<ObjectId, Proposal> proposals = Placement.propose(objects, allLive(5));

        Map<NodeId, Integer> owners = new HashMap<>();
        Map<NodeId, Integer> copies = new HashMap<>();
        for (Proposal proposal : proposals.values()) {
            owners.merge(proposal.owner(), 1, Integer::sum);
            proposal.members().forEach(node -> copies.merge(node, 1, Integer::sum));
        }
        assertThat(owners.values()).containsOnly(6);
        assertThat(copies.values()).containsOnly(18);
    }

    @Test
    void shouldPlaceANewObjectOnItsPreferredOwnerWhenThatNodeIsPlaceable() {
        NodeId n2 = NodeId.of("n2");
        List<Placement.Current> objects = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ObjectSpec preferred = new ObjectSpec(
                    queue(i, 3).id(), ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE, Optional.of(n2));
            objects.add(new Placement.Current(preferred, Optional.empty()));
        }
        SortedMap<ObjectId, Proposal> proposals = Placement.propose(objects, allLive(3));
        assertThat(proposals.values()).allSatisfy(proposal -> {
            assertThat(proposal.owner()).isEqualTo(n2);
            assertThat(proposal.followers()).hasSize(2).doesNotContain(n2);
        });

        // a draining (or down) preferred node is passed over: the least loaded node owns it
        ObjectSpec preferred =
                new ObjectSpec(queue(9, 3).id(), ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE, Optional.of(n2));
        Proposal proposal = Placement.propose(
                        List.of(new Placement.Current(preferred, Optional.empty())),
                        allLive(3).eagerFailover(n2, 0))
                .get(preferred.id());
        assertThat(proposal.owner()).isNotEqualTo(n2);

        // an object that has members keeps its owner: the preference is for the first placement only
        NodeId n0 = NodeId.of("n0");
        Assignment current = new Assignment(Epoch.of(1), n0, List.of(NodeId.of("n1"), n2), true);
        assertThat(Placement.propose(List.of(new Placement.Current(preferred, Optional.of(current))), allLive(3))
                        .get(preferred.id())
                        .owner())
                .isEqualTo(n0);
    }

    @Test
    void shouldKeepLiveMembersAndReplaceOnlyTheLostOne() {
        NodeId n0 = NodeId.of("n0");
        NodeId n1 = NodeId.of("n1");
        NodeId n2 = NodeId.of("n2");
        Assignment current = new Assignment(Epoch.of(4), n1, List.of(n2, n0), true);
        LiveSet liveSet = allLive(4).eagerFailover(n2, 0);

        Proposal proposal = Placement.propose(
                        List.of(new Placement.Current(queue(0, 3), Optional.of(current))), liveSet)
                .get(queue(0, 3).id());

        assertThat(proposal.owner()).isEqualTo(n1);
        assertThat(proposal.followers()).containsExactly(n0, NodeId.of("n3"));
    }

    @Test
    void shouldPromoteAKeptFollowerWhenTheOwnerIsLost() {
        NodeId n0 = NodeId.of("n0");
        Assignment current = new Assignment(Epoch.of(1), n0, List.of(NodeId.of("n1"), NodeId.of("n2")), true);
        Proposal proposal = Placement.propose(
                        List.of(new Placement.Current(queue(0, 3), Optional.of(current))),
                        allLive(3).eagerFailover(n0, 0))
                .get(queue(0, 3).id());
        assertThat(proposal.owner()).isEqualTo(NodeId.of("n1"));
        assertThat(proposal.followers()).containsExactly(NodeId.of("n2"));
    }

    @Test
    void shouldProposeNothingWithoutPlaceableNodes() {
        LiveSet liveSet = allLive(2).eagerFailover(NodeId.of("n0"), 0).eagerFailover(NodeId.of("n1"), 0);
        assertThat(Placement.propose(List.of(new Placement.Current(queue(0, 3), Optional.empty())), liveSet))
                .isEmpty();
    }

    static LongStream seeds() {
        return Generators.seeds(300);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldHoldPlacementInvariantsForRandomLiveSets(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int nodeCount = random.nextInt(1, 8);
        LiveSet liveSet = Generators.randomLiveSet(random, nodeCount, 1_000_000);
        List<NodeId> nodes = Generators.nodes(nodeCount);
        List<Placement.Current> objects = new ArrayList<>();
        int objectCount = random.nextInt(1, 40);
        for (int i = 0; i < objectCount; i++) {
            int copies = random.nextInt(1, 6);
            Optional<Assignment> current = Optional.empty();
            if (random.nextBoolean()) {
                List<NodeId> shuffled = new ArrayList<>(nodes);
                java.util.Collections.shuffle(shuffled, new java.util.Random(random.nextLong()));
                int members = Math.min(copies, nodeCount);
                current = Optional.of(new Assignment(Epoch.of(1), shuffled.get(0), shuffled.subList(1, members), true));
            }
            objects.add(new Placement.Current(queue(i, copies), current));
        }

        SortedMap<ObjectId, Proposal> proposals = Placement.propose(objects, liveSet);
        List<Placement.Current> reversed = new ArrayList<>(objects);
        java.util.Collections.reverse(reversed);
        assertThat(Placement.propose(reversed, liveSet))
                .as("seed %d: deterministic", seed)
                .isEqualTo(proposals);

        int placeable = liveSet.placeableNodes().size();
        assertThat(proposals).as("seed %d", seed).hasSize(placeable == 0 ? 0 : objectCount);
        for (Placement.Current object : objects) {
            Proposal proposal = proposals.get(object.spec().id());
            if (proposal == null) {
                continue;
            }
            List<NodeId> members = proposal.members();
            assertThat(new HashSet<>(members))
                    .as("seed %d: two copies on one node", seed)
                    .hasSameSizeAs(members);
            assertThat(members)
                    .as("seed %d: wanted copies", seed)
                    .hasSize(Math.min(object.spec().copies(), placeable));
            Set<NodeId> before =
                    new HashSet<>(object.members().map(Assignment::members).orElse(List.of()));
            for (NodeId member : members) {
                assertThat(liveSet.isPlaceable(member))
                        .as("seed %d: copy on %s", seed, member)
                        .isTrue();
            }
            for (NodeId kept : before) {
                if (liveSet.isPlaceable(kept) && members.size() >= before.size()) {
                    assertThat(members)
                            .as("seed %d: live member %s kept", seed, kept)
                            .contains(kept);
                }
            }
        }
    }
}
