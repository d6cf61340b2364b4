package io.ganglion.amqp.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class EarlierPublishesTest {
    private final EarlierPublishes publishes = new EarlierPublishes();

    @Test
    void shouldHaveNothingToWaitForWhenEveryPublishIsDone() {
        assertThat(publishes.allDone()).isNull();
        publishes.add(CompletableFuture.completedFuture(null));
        CompletableFuture<Void> done = new CompletableFuture<>();
        publishes.add(done);
        done.complete(null);
        assertThat(publishes.allDone()).isNull();
        assertThat(publishes.size()).isZero();
    }

    @Test
    void shouldCompleteOnlyOnceEveryEarlierPublishCompletedEvenWhenOneFailed() {
        CompletableFuture<Void> first = new CompletableFuture<>();
        CompletableFuture<Void> second = new CompletableFuture<>();
        publishes.add(first);
        publishes.add(second);
        CompletableFuture<Void> all = publishes.allDone();
        CompletableFuture<Void> later = new CompletableFuture<>();
        publishes.add(later); // after the operation: not waited for

        second.complete(null);
        assertThat(all).isNotDone();
        first.completeExceptionally(new IllegalStateException("nacked"));
        assertThat(all).isCompletedWithValue(null);
        assertThat(publishes.allDone()).isNotNull();
    }

    @Test
    void shouldStayBoundedWhenPublishesCompleteOutOfOrder() {
        CompletableFuture<Void> stuck = new CompletableFuture<>();
        publishes.add(stuck);
        List<CompletableFuture<Void>> later = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            CompletableFuture<Void> publish = new CompletableFuture<>();
            publishes.add(publish);
            later.add(publish);
            publish.complete(null);
        }
        assertThat(publishes.size()).isLessThanOrEqualTo(128);
        stuck.complete(null);
        assertThat(publishes.allDone()).isNull();
        assertThat(later).allMatch(CompletableFuture::isDone);
    }
}
