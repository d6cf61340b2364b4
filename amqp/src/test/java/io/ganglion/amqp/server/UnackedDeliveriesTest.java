package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ReplyCode;
import java.util.List;
import org.junit.jupiter.api.Test;

class UnackedDeliveriesTest {
    private final FakeBroker.Handle a = new FakeBroker.Handle("a");
    private final FakeBroker.Handle b = new FakeBroker.Handle("b");
    private final UnackedDeliveries unacked = new UnackedDeliveries();

    private void deliver() {
        unacked.add(1, a, 10);
        unacked.add(2, b, 5);
        unacked.add(3, a, 11);
        unacked.add(4, b, 4);
    }

    private static List<Long> tags(List<UnackedDeliveries.Entry> entries) {
        return entries.stream().map(UnackedDeliveries.Entry::tag).toList();
    }

    @Test
    void shouldTakeOneTagWithoutMultiple() {
        deliver();

        assertThat(tags(unacked.take(3, false))).containsExactly(3L);
        assertThat(unacked.size()).isEqualTo(3);
    }

    @Test
    void shouldTakeEveryTagUpToAndIncludingWithMultiple() {
        deliver();
        unacked.take(2, false);

        assertThat(tags(unacked.take(3, true))).containsExactly(1L, 3L);
        assertThat(tags(unacked.takeAll())).containsExactly(4L);
    }

    @Test
    void shouldTakeAllOnTagZeroWithMultiple() {
        deliver();

        assertThat(tags(unacked.take(0, true))).containsExactly(1L, 2L, 3L, 4L);
        assertThat(unacked.isEmpty()).isTrue();
        assertThat(unacked.take(0, true)).isEmpty();
    }

    @Test
    void shouldRefuseAnUnknownTagWith406AndTakeNothingEvenWithMultiple() {
        deliver();
        unacked.take(3, false);

        assertThatThrownBy(() -> unacked.take(3, true)).isInstanceOfSatisfying(AmqpException.class, e -> {
            assertThat(e.replyCode()).isEqualTo(ReplyCode.PRECONDITION_FAILED);
            assertThat(e.replyText()).isEqualTo("PRECONDITION_FAILED - unknown delivery tag 3");
        });
        assertThat(unacked.size()).isEqualTo(3);
        assertThatThrownBy(() -> unacked.take(0, false)).hasMessage("unknown delivery tag 0");
    }

    @Test
    void shouldPutRestoredEntriesBackInTagOrder() {
        deliver();
        List<UnackedDeliveries.Entry> taken = unacked.take(2, true);

        unacked.restore(taken);

        assertThat(tags(unacked.take(4, true))).containsExactly(1L, 2L, 3L, 4L);
    }

    @Test
    void shouldSettleOncePerQueueWithOffsetsAscending() {
        deliver();
        FakeBroker broker = new FakeBroker();

        UnackedDeliveries.settle(broker, unacked.takeAll(), Settlement.REQUEUE);

        assertThat(broker.log).containsExactly("settle a REQUEUE [10, 11]", "settle b REQUEUE [4, 5]");
    }

    @Test
    void shouldSettleTheDeliveriesOfOneQueueInOneCallWithOffsetsAscending() {
        unacked.add(1, a, 12);
        unacked.add(2, a, 10);
        unacked.add(3, a, 11);
        FakeBroker broker = new FakeBroker();

        UnackedDeliveries.settle(broker, unacked.take(3, true), Settlement.ACK);
        unacked.add(4, a, 13);
        UnackedDeliveries.settle(broker, unacked.take(4, false), Settlement.ACK);

        assertThat(broker.log).containsExactly("settle a ACK [10, 11, 12]", "settle a ACK [13]");
    }
}
