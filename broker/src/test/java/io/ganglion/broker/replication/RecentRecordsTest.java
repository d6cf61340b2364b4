package io.ganglion.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.broker.Shard;
import io.ganglion.coordination.Epoch;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RecentRecordsTest {
    private final Shard shard = new Shard(0);

    @AfterEach
    void close() {
        shard.close();
    }

    private static Record message(long offset, int bodyBytes) {
        return new Record.Message(
                Epoch.of(1),
                offset,
                new PublishId(1, offset),
                ByteBuffer.allocate(bodyBytes).asReadOnlyBuffer());
    }

    @Test
    void holdsAContiguousTailAndDropsTheOldestPastItsRecords() {
        RecentRecords recent = new RecentRecords(shard, 128, 1 << 20);
        for (long offset = 0; offset < 300; offset++) {
            recent.appended(message(offset, 10));
        }
        assertThat(recent.size()).isEqualTo(128);
        assertThat(recent.get(171)).isNull();
        assertThat(recent.get(172).offset()).isEqualTo(172);
        assertThat(recent.get(299).offset()).isEqualTo(299);
        assertThat(recent.get(300)).isNull();
    }

    @Test
    void anAppendThatDoesNotFollowStartsAgain() {
        RecentRecords recent = new RecentRecords(shard, 64, 1 << 20);
        recent.appended(message(5, 10));
        recent.appended(message(6, 10));
        recent.appended(message(40, 10)); // an install or reseed moved the log
        assertThat(recent.get(5)).isNull();
        assertThat(recent.get(6)).isNull();
        assertThat(recent.get(40).offset()).isEqualTo(40);
        assertThat(recent.size()).isEqualTo(1);
    }

    @Test
    void truncateCutsTheTailAndGivesItsBytesBack() {
        RecentRecords recent = new RecentRecords(shard, 64, 1 << 20);
        for (long offset = 0; offset < 10; offset++) {
            recent.appended(message(offset, 100));
        }
        long heldBytes = 10L * message(0, 100).size();
        assertThat(shard.reserveRecent(Shard.RECENT_BUDGET_BYTES - heldBytes)).isTrue();
        shard.releaseRecent(Shard.RECENT_BUDGET_BYTES - heldBytes);

        recent.truncateFrom(7);
        assertThat(recent.get(6).offset()).isEqualTo(6);
        assertThat(recent.get(7)).isNull();
        recent.appended(message(7, 100)); // the new suffix follows
        assertThat(recent.get(7).offset()).isEqualTo(7);

        recent.clear();
        assertThat(recent.size()).isZero();
        assertThat(shard.reserveRecent(Shard.RECENT_BUDGET_BYTES)).isTrue(); // nothing held any more
    }

    @Test
    void bytesAreBoundedByItsOwnLimitAndByTheShardBudget() {
        int size = message(0, 1000).size();
        RecentRecords recent = new RecentRecords(shard, 1024, 10L * size);
        for (long offset = 0; offset < 50; offset++) {
            recent.appended(message(offset, 1000));
        }
        assertThat(recent.size()).isEqualTo(10);
        assertThat(recent.get(40).offset()).isEqualTo(40);

        // another queue of the shard takes all of the budget that is left: this one keeps what it has but no more
        RecentRecords other = new RecentRecords(shard, 1024, Long.MAX_VALUE);
        assertThat(shard.reserveRecent(Shard.RECENT_BUDGET_BYTES - 10L * size)).isTrue();
        other.appended(message(0, 1000));
        assertThat(other.size()).isZero();
        recent.appended(message(50, 1000)); // drops its own oldest to make room
        assertThat(recent.size()).isEqualTo(10);
        assertThat(recent.get(50).offset()).isEqualTo(50);
        assertThat(recent.get(40)).isNull();
    }

    @Test
    void aRecordLargerThanTheLimitEmptiesIt() {
        RecentRecords recent = new RecentRecords(shard, 64, 500);
        recent.appended(message(0, 10));
        recent.appended(message(1, 1000));
        assertThat(recent.size()).isZero();
        recent.appended(message(2, 10));
        assertThat(recent.get(2).offset()).isEqualTo(2);
    }
}
