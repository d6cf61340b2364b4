package io.ganglion.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PollTest {
    private static final Duration LONG = Duration.ofSeconds(10);

    @Test
    void shouldReturnOnceTheConditionHoldsCheckingAgainUntilThen() {
        AtomicInteger checks = new AtomicInteger();

        Poll.until(LONG, Duration.ofMillis(1), () -> checks.incrementAndGet() == 3, () -> "the third check");

        assertThat(checks).hasValue(3);
    }

    @Test
    void shouldFailWithWhatWasAwaitedAndTheLastStateSeenOnTimeout() {
        AtomicInteger checks = new AtomicInteger();

        assertThatThrownBy(() -> Poll.until(
                        Duration.ofMillis(50),
                        () -> checks.incrementAndGet() < 0,
                        () -> "a negative count, last " + checks.get()))
                .isInstanceOf(AssertionError.class)
                .hasMessage("a negative count, last " + checks.get() + ": not within PT0.05S");
        assertThat(checks.get()).as("checked until the deadline").isGreaterThan(1);
    }

    @Test
    void shouldReturnTheValueAProbeGave() {
        AtomicInteger reads = new AtomicInteger();

        String value = Poll.untilPresent(
                LONG, () -> reads.incrementAndGet() < 2 ? Optional.empty() : Optional.of("ready"), () -> "a value");

        assertThat(value).isEqualTo("ready");
        assertThat(reads).hasValue(2);
    }

    @Test
    void shouldTellWithoutFailingWhetherTheConditionHeldInTime() {
        assertThat(Poll.within(Duration.ofMillis(30), () -> false)).isFalse();
        assertThat(Poll.within(Duration.ZERO, () -> true)).isTrue();
    }

    @Test
    void shouldCheckOnceMoreAtTheDeadline() {
        long start = System.nanoTime();
        Duration timeout = Duration.ofMillis(100);

        boolean held =
                Poll.within(timeout, Duration.ofSeconds(10), () -> System.nanoTime() - start >= timeout.toNanos());

        assertThat(held).as("the check at the deadline sees the condition hold").isTrue();
    }

    @Test
    void shouldEndTheWaitWhenTheConditionThrows() {
        assertThatThrownBy(() -> untilAConditionThatThrows(new IllegalStateException("broken"), "a broken condition"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("broken");
        assertThatThrownBy(() -> untilAConditionThatThrows(new IOException("refused"), "an answer"))
                .isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("an answer: the condition threw")
                .hasCauseInstanceOf(IOException.class);
    }

    /** Polls for a condition that throws {@code thrown} on its first check. */
    private static void untilAConditionThatThrows(Exception thrown, String awaited) {
        Poll.until(
                LONG,
                () -> {
                    throw thrown;
                },
                () -> awaited);
    }
}
