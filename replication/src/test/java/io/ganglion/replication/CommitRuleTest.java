package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.NodeId;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The commit rule, alone and through the owner, for W = 1, 2, 3 over E of 1 to 5, with seeded generators. */
class CommitRuleTest {

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 60);
    }

    /** The largest c such that at least W reports are at or beyond it: the definition, by brute force. */
    private static long bruteForce(long[] durable, int w) {
        long best = -1;
        for (long candidate : durable) {
            int atLeast = 0;
            for (long value : durable) {
                if (value >= candidate) {
                    atLeast++;
                }
            }
            if (atLeast >= w) {
                best = Math.max(best, candidate);
            }
        }
        return best;
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldBeTheWthHighestDurableOffset(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int e = 1; e <= 5; e++) {
            for (int w = 1; w <= Math.min(3, e); w++) {
                int reporting = random.nextInt(e + 1);
                long[] durable = new long[reporting];
                for (int i = 0; i < reporting; i++) {
                    durable[i] = random.nextLong(100);
                }
                assertThat(CommitRule.commitOffset(durable, w))
                        .as("seed %d, E %d, W %d, reports %s", seed, e, w, java.util.Arrays.toString(durable))
                        .isEqualTo(reporting < w ? -1 : bruteForce(durable, w));
            }
        }
    }

    /**
     * An owner with E - 1 followers, each of which durably holds a random prefix of the owner's log or never reports
     * (held): the owner confirms exactly the publishes at or below the W-th highest durable offset.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldConfirmExactlyUpToTheCommitOffset(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int e = 1 + random.nextInt(5);
        int w = 1 + random.nextInt(Math.min(3, e));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < e; i++) {
            ids.add("n" + i);
        }
        Harness harness = new Harness(ids.toArray(String[]::new));
        harness.activate(1, w, "n0", ids.subList(1, e).toArray(String[]::new));
        harness.settle();
        int publishes = 5 + random.nextInt(20);
        for (int i = 0; i < publishes; i++) {
            harness.publish("n0", 1, 7, i);
        }
        // the owner's log: epoch start at 0, messages at 1..publishes
        List<Long> reports = new ArrayList<>();
        for (int i = 1; i < e; i++) {
            Harness.Node follower = harness.node("n" + i);
            if (random.nextInt(4) == 0) {
                harness.down.add(follower.id); // held: never reports
            }
        }
        harness.deliverAll();
        for (int i = 1; i < e; i++) {
            Harness.Node follower = harness.node("n" + i);
            if (harness.down.contains(follower.id)) {
                continue;
            }
            long upTo = random.nextLong(publishes + 1);
            follower.durable = upTo;
            follower.on(new ReplicaEvent.AppendDurable(upTo));
            reports.add(upTo);
        }
        harness.deliverAll();
        Harness.Node owner = harness.node("n0");
        owner.sync();
        reports.add(owner.durable);
        // the epoch start (offset 0) committed while every member was up; the commit offset never moves back
        long commit = Math.max(
                0,
                CommitRule.commitOffset(
                        reports.stream().mapToLong(Long::longValue).toArray(), w));

        long confirmedUpTo =
                owner.confirms().stream().mapToLong(c -> c.offset()).max().orElse(0);
        assertThat(owner.confirms()).as("seed %d", seed).hasSize((int) Math.max(0, commit));
        if (commit >= 1) {
            assertThat(confirmedUpTo).isEqualTo(commit);
            assertThat(owner.delivered()).isEqualTo(commit);
        }
        assertThat(owner.replica.commitOffset()).isEqualTo(commit);
        assertThat(owner.replica.owning()).contains(Epoch.of(1));
        assertThat(NodeId.of("n0")).isEqualTo(owner.id);
    }
}
