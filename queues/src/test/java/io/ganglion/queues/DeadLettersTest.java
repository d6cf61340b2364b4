package io.ganglion.queues;

import static io.ganglion.queues.DeadLetters.Reason.EXPIRED;
import static io.ganglion.queues.DeadLetters.Reason.MAXLEN;
import static io.ganglion.queues.DeadLetters.Reason.REJECTED;
import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.queues.DeadLetters.Death;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeadLettersTest {
    @Test
    void shouldDropAMessageThatExpiresBackIntoItsOwnQueue() {
        List<Death> deaths = List.of(new Death("work", "expired"));

        assertThat(DeadLetters.closesCycle(EXPIRED, deaths, "work")).isTrue();
        assertThat(DeadLetters.closesCycle(EXPIRED, deaths, "parking")).isFalse();
    }

    @Test
    void shouldLetTheRetryPatternGoRoundWhileAConsumerRejects() {
        // work rejects to retry, retry expires back to work: the rejection breaks the cycle
        List<Death> deaths = List.of(new Death("retry", "expired"), new Death("work", "rejected"));

        assertThat(DeadLetters.closesCycle(EXPIRED, deaths, "work")).isFalse();
        assertThat(DeadLetters.closesCycle(REJECTED, List.of(new Death("work", "rejected")), "work"))
                .isFalse();
    }

    @Test
    void shouldFindACycleOfSeveralQueuesWithNoRejection() {
        List<Death> deaths = List.of(new Death("b", "maxlen"), new Death("a", "expired"), new Death("z", "rejected"));

        assertThat(DeadLetters.closesCycle(MAXLEN, deaths, "a")).isTrue();
        assertThat(DeadLetters.closesCycle(MAXLEN, deaths, "z"))
                .as("rejected on the way")
                .isFalse();
    }

    @Test
    void shouldNotCountAnEntryItCannotRead() {
        List<Death> deaths = List.of(new Death("b", "expired"), new Death(null, null), new Death("a", "expired"));

        assertThat(DeadLetters.closesCycle(EXPIRED, deaths, "b")).isTrue();
        assertThat(DeadLetters.closesCycle(EXPIRED, deaths, "a")).isFalse();
    }

    @Test
    void shouldNameTheReasonsAsRabbitMqWritesThem() {
        assertThat(List.of(DeadLetters.Reason.values()).stream().map(DeadLetters.Reason::wireName))
                .containsExactly("rejected", "expired", "maxlen", "delivery_limit");
    }
}
