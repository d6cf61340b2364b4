package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PublishIndexTest {
    private static PublishId id(long sequence) {
        return new PublishId(7, sequence);
    }

    @Test
    void remembersTheNewestMessagesOnlyOldestForgottenFirst() {
        PublishIndex index = new PublishIndex(4);
        for (long offset = 0; offset < 10; offset++) {
            index.put(id(offset), offset);
        }
        assertThat(index.size()).isEqualTo(4);
        assertThat(index.get(id(5))).isNull();
        assertThat(index.get(id(6))).isEqualTo(6);
        assertThat(index.get(id(9))).isEqualTo(9);
    }

    @Test
    void truncationForgetsTheNewestAndAnIdAppendedAgainKeepsItsNewOffset() {
        PublishIndex index = new PublishIndex(4);
        index.put(id(1), 10);
        index.put(id(2), 11);
        index.put(id(1), 12); // re-sent after it left a smaller window: appended again
        index.put(id(3), 13);
        index.removeFrom(13);
        assertThat(index.get(id(3))).isNull();
        assertThat(index.get(id(1))).isEqualTo(12);
        index.put(id(4), 13);
        index.put(id(5), 14); // evicts (1 at 10): its id now means offset 12 and stays
        assertThat(index.get(id(1))).isEqualTo(12);
        index.removeFrom(12);
        assertThat(index.get(id(1))).isNull();
        assertThat(index.get(id(2))).isEqualTo(11);
    }

    /** Random puts (ids often repeated), truncations and clears against a map-and-list model of the same rules. */
    @Test
    void agreesWithASimpleModelOverRandomOperations() {
        for (int seed = 0; seed < 20; seed++) {
            java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
            int capacity = 1 + random.nextInt(200);
            PublishIndex index = new PublishIndex(capacity);
            java.util.ArrayDeque<long[]> ring = new java.util.ArrayDeque<>(); // {sequence, offset}
            java.util.HashMap<Long, Long> map = new java.util.HashMap<>();
            long next = 0;
            for (int op = 0; op < 3000; op++) {
                int what = random.nextInt(100);
                if (what < 85) {
                    long sequence = random.nextInt(capacity * 2 + 1);
                    if (ring.size() == capacity) {
                        long[] oldest = ring.pollFirst();
                        map.remove(oldest[0], oldest[1]);
                    }
                    ring.addLast(new long[] {sequence, next});
                    map.put(sequence, next);
                    index.put(id(sequence), next++);
                } else if (what < 98) {
                    long from = Math.max(0, next - random.nextInt(capacity + 1));
                    while (!ring.isEmpty() && ring.peekLast()[1] >= from) {
                        long[] newest = ring.pollLast();
                        map.remove(newest[0], newest[1]);
                    }
                    index.removeFrom(from);
                    next = Math.max(from, ring.isEmpty() ? from : ring.peekLast()[1] + 1);
                } else {
                    ring.clear();
                    map.clear();
                    index.clear();
                }
                assertThat(index.size()).isEqualTo(ring.size());
                for (long sequence = 0; sequence <= capacity * 2L; sequence++) {
                    assertThat(index.get(id(sequence)))
                            .as("seed %d op %d sequence %d", seed, op, sequence)
                            .isEqualTo(map.get(sequence));
                }
            }
        }
    }

    @Test
    void builtFromARecoveredLogKeepsItsNewestByOffset() {
        PublishIndex index = PublishIndex.of(Map.of(id(1), 3L, id(2), 1L, id(3), 2L), 2);
        assertThat(index.get(id(2))).isNull();
        assertThat(index.get(id(3))).isEqualTo(2);
        assertThat(index.get(id(1))).isEqualTo(3);
    }

    /** A growth moves the table a few slots per put: no put rebuilds it whole, and every id is found all along. */
    @Test
    void growsTheTableAFewSlotsPerPutAndFindsEveryIdMeanwhile() {
        int capacity = 1 << 12;
        PublishIndex index = new PublishIndex(capacity);
        long offset = 0;
        int growths = 0;
        while (offset < capacity) {
            index.put(id(offset), offset);
            offset++;
            if (!index.migrating()) {
                continue;
            }
            growths++;
            long ringBefore = offset - 1; // the ring was full at the growth: it held every id put before this one
            long tableSlots = Integer.highestOneBit((int) Math.max(2, ringBefore * 2 - 1)) << 1;
            long putsToMove =
                    (tableSlots + PublishIndex.MIGRATE_SLOTS_PER_PUT - 1) / PublishIndex.MIGRATE_SLOTS_PER_PUT;
            long puts = 0; // after the one that grew the table, which moved nothing yet
            while (index.migrating()) {
                for (long sequence = 0; sequence < offset; sequence += Math.max(1, offset / 64)) {
                    assertThat(index.get(id(sequence)))
                            .as("id %d while moving", sequence)
                            .isEqualTo(sequence);
                }
                assertThat(index.get(id(offset + 1))).isNull();
                index.put(id(offset), offset);
                offset++;
                puts++;
            }
            assertThat(puts)
                    .as("puts that moved a table of %d slots", tableSlots)
                    .isEqualTo(putsToMove);
            assertThat(puts).as("done before the ring fills again").isLessThanOrEqualTo(ringBefore);
        }
        assertThat(growths).as("64 -> 128 -> ... -> 4096").isEqualTo(6);
        for (long sequence = 0; sequence < offset; sequence++) {
            assertThat(index.get(id(sequence))).isEqualTo(sequence);
        }
    }

    @Test
    void anIdPutAgainWhileTheTableMovesKeepsItsNewOffset() {
        PublishIndex index = new PublishIndex(1 << 10);
        for (long offset = 0; offset < 64; offset++) {
            index.put(id(offset), offset);
        }
        index.put(id(1000), 64); // the ring was full: this put grows the table
        assertThat(index.migrating()).isTrue();
        index.put(id(63), 65); // the old table holds 63 at 63, not moved yet (or moved: either way 65 wins)
        while (index.migrating()) {
            index.put(id(2000 + index.size()), 64L + index.size());
        }
        assertThat(index.get(id(63))).isEqualTo(65);
        assertThat(index.get(id(1000))).isEqualTo(64);
        assertThat(index.get(id(0))).isEqualTo(0);
        index.removeFrom(65);
        assertThat(index.get(id(63)))
                .as("the truncated re-append is gone; the first append was before it")
                .isNull();
    }

    @Test
    void anIndexOfNoCapacityRemembersNothing() {
        PublishIndex index = new PublishIndex(0);
        index.put(id(1), 10);
        assertThat(index.get(id(1))).isNull();
        assertThat(index.size()).isZero();
    }
}
