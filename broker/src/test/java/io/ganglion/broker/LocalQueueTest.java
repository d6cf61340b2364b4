package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.amqp.server.Delivery;
import io.ganglion.amqp.server.Settlement;
import io.ganglion.queues.ConsumerKey;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The conditions of a queue.delete, with RabbitMQ 3.10.8's texts, taken from it with Node's amqplib. */
class LocalQueueTest {
    @Test
    void shouldRefuseAnIfEmptyDeleteOfAQueueWithReadyMessages() {
        assertThatThrownBy(() -> new CountingQueue(2, 0).checkDeletable(false, true))
                .isInstanceOfSatisfying(BrokerFailure.class, failure -> {
                    assertThat(failure.replyCode()).isEqualTo(ReplyCode.PRECONDITION_FAILED);
                    assertThat(failure.explanation()).isEqualTo("queue 'q' in vhost 'v' not empty");
                });
    }

    @Test
    void shouldRefuseAnIfUnusedDeleteOfAQueueWithConsumers() {
        assertThatThrownBy(() -> new CountingQueue(0, 1).checkDeletable(true, false))
                .isInstanceOfSatisfying(BrokerFailure.class, failure -> {
                    assertThat(failure.replyCode()).isEqualTo(ReplyCode.PRECONDITION_FAILED);
                    assertThat(failure.explanation()).isEqualTo("queue 'q' in vhost 'v' in use");
                });
    }

    @Test
    void shouldCheckEmptinessBeforeUseAsRabbitMqDoes() {
        assertThatThrownBy(() -> new CountingQueue(1, 1).checkDeletable(true, true))
                .isInstanceOfSatisfying(
                        BrokerFailure.class,
                        failure -> assertThat(failure.explanation()).isEqualTo("queue 'q' in vhost 'v' not empty"));
    }

    @Test
    void shouldAnswerTheReadyCountWhenTheConditionsHold() {
        assertThat(new CountingQueue(0, 0).checkDeletable(true, true)).isZero();
        assertThat(new CountingQueue(3, 2).checkDeletable(false, false)).isEqualTo(3);
    }

    /** A queue {@code q} in vhost {@code v} with fixed counts. */
    private record CountingQueue(int ready, int consumers) implements LocalQueue {
        @Override
        public String name() {
            return "q";
        }

        @Override
        public String vhost() {
            return "v";
        }

        @Override
        public int readyCount() {
            return ready;
        }

        @Override
        public int consumerCount() {
            return consumers;
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> firstServed() {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }

        @Override
        public Shard shard() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void publish(ByteBuffer payload, CompletableFuture<Void> done) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void consume(ConsumerKey key, QueueConsumer consumer) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void cancel(ConsumerKey key) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<Delivery> get(boolean noAck) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void settle(long[] offsets, Settlement settlement) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long purge() {
            throw new UnsupportedOperationException();
        }
    }
}
