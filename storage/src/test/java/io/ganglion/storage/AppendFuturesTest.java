package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class AppendFuturesTest {
    @Test
    void shouldCompleteEachFutureWhenAReportCoversItsOffset() {
        AppendFutures futures = new AppendFutures(-1, Long.MAX_VALUE, null);
        CompletableFuture<Long> zero = futures.future(0);
        CompletableFuture<Long> five = futures.future(5);
        CompletableFuture<Long> three = futures.future(3); // asked out of order
        futures.durable(3);
        assertThat(zero).isCompletedWithValue(0L);
        assertThat(three).isCompletedWithValue(3L);
        assertThat(five).isNotDone();
        futures.durable(9);
        assertThat(five).isCompletedWithValue(5L);
        assertThat(futures.future(7)).as("asked after its report").isCompletedWithValue(7L);
    }

    @Test
    void shouldFailEveryRecordFromTheFirstFailedOneOn() {
        AppendFutures futures = new AppendFutures(-1, Long.MAX_VALUE, null);
        CompletableFuture<Long> durable = futures.future(1);
        CompletableFuture<Long> failed = futures.future(2);
        CompletableFuture<Long> later = futures.future(4);
        futures.durable(1);
        StorageException cause = new StorageException("disk full");
        futures.failed(2, cause);
        assertThat(durable).isCompletedWithValue(1L);
        assertThat(failed).isCompletedExceptionally();
        assertThat(later).isCompletedExceptionally();
        assertThat(futures.future(6)).isCompletedExceptionally(); // a refused later record
        assertThat(futures.future(1)).isCompletedWithValue(1L);
    }

    @Test
    void shouldKeepWhatWasReportedThroughTheCutInTheNextGeneration() {
        AppendFutures futures = new AppendFutures(-1, Long.MAX_VALUE, null);
        futures.durable(10);
        futures.failed(11, new StorageException("write failed"));
        AppendFutures afterCut = futures.next(10); // truncated back to the durable offset: the failure is gone
        assertThat(afterCut.future(10)).isCompletedWithValue(10L);
        assertThat(afterCut.future(11)).as("a new record at the old offset").isNotDone();
        AppendFutures keptFailure = futures.next(12); // cut above the failure: 11 and 12 stay failed
        assertThat(keptFailure.future(12)).isCompletedExceptionally();
        assertThat(futures.future(11))
                .as("the old generation keeps its outcomes")
                .isCompletedExceptionally();
    }
}
