package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.replication.ReplicaEffect.Confirm;
import java.util.List;
import org.junit.jupiter.api.Test;

class AwaitingConfirmsTest {
    private static PublishId id(long sequence) {
        return new PublishId(3, sequence);
    }

    private static List<ReplicaEffect> confirmUpTo(AwaitingConfirms awaiting, long committed) {
        Effects out = new Effects();
        out.begin();
        awaiting.confirmUpTo(committed, out);
        return out.take();
    }

    @Test
    void confirmsInOffsetOrderUpToTheCommitAcrossGrowth() {
        AwaitingConfirms awaiting = new AwaitingConfirms();
        for (long offset = 1; offset <= 40; offset++) {
            awaiting.put(offset, id(offset));
        }
        assertThat(confirmUpTo(awaiting, 10)).hasSize(10).first().isEqualTo(new Confirm(id(1), 1));
        for (long offset = 41; offset <= 70; offset++) {
            awaiting.put(offset, id(offset)); // wraps the ring, then grows it
        }
        List<ReplicaEffect> rest = confirmUpTo(awaiting, 70);
        assertThat(rest).hasSize(60).first().isEqualTo(new Confirm(id(11), 11));
        assertThat(rest.get(59)).isEqualTo(new Confirm(id(70), 70));
        assertThat(awaiting.isEmpty()).isTrue();
    }

    @Test
    void aReSendOfAnEarlierOffsetGoesInItsPlaceAndOneAtAWaitingOffsetReplacesIt() {
        AwaitingConfirms awaiting = new AwaitingConfirms();
        awaiting.put(5, id(5));
        awaiting.put(9, id(9));
        awaiting.put(7, id(7)); // re-sent, appended earlier at 7
        awaiting.put(9, id(9)); // re-sent while it waits
        assertThat(awaiting.size()).isEqualTo(3);
        assertThat(confirmUpTo(awaiting, 8)).containsExactly(new Confirm(id(5), 5), new Confirm(id(7), 7));
        assertThat(confirmUpTo(awaiting, 9)).containsExactly(new Confirm(id(9), 9));
    }
}
