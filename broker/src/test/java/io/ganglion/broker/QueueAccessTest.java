package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class QueueAccessTest {

    @Test
    void shouldAskAgainWhileTheOwnerIsMovingAndGiveUpAtTheDeadline() {
        BrokerFailure moving = new BrokerFailure(ReplyCode.NOT_FOUND, "not served here now (its owner is moving)");
        java.util.function.Predicate<Throwable> isMoving = failure -> failure == moving;
        long later = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);

        // served at the third attempt: the caller sees only the value
        AtomicInteger attempts = new AtomicInteger();
        CompletionStage<String> served = QueueAccess.retryWhile(
                () -> attempts.incrementAndGet() < 3
                        ? CompletableFuture.failedFuture(moving)
                        : CompletableFuture.completedFuture("served"),
                isMoving,
                later,
                Runnable::run);
        assertThat(served.toCompletableFuture().join()).isEqualTo("served");
        assertThat(attempts).hasValue(3);

        // another failure (thrown, not returned) ends it at once
        AtomicInteger refused = new AtomicInteger();
        CompletionStage<String> locked = QueueAccess.retryWhile(
                () -> {
                    refused.incrementAndGet();
                    throw new BrokerFailure(ReplyCode.RESOURCE_LOCKED, "exclusive");
                },
                isMoving,
                later,
                Runnable::run);
        assertThatThrownBy(() -> locked.toCompletableFuture().join())
                .cause()
                .isInstanceOf(BrokerFailure.class)
                .hasMessageContaining("exclusive");
        assertThat(refused).hasValue(1);

        // still moving at the deadline: the last failure, as it was
        AtomicInteger tried = new AtomicInteger();
        CompletionStage<String> gaveUp = QueueAccess.retryWhile(
                () -> {
                    tried.incrementAndGet();
                    return CompletableFuture.failedFuture(moving);
                },
                isMoving,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200),
                CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS));
        assertThatThrownBy(() -> gaveUp.toCompletableFuture().join()).cause().isSameAs(moving);
        assertThat(tried.get()).isBetween(2, 11);
    }
}
