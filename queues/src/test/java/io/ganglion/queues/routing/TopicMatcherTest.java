package io.ganglion.queues.routing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TopicMatcherTest {

    @ParameterizedTest(name = "{0} ~ {1} = {2}")
    @CsvSource({
        "a.b.c, a.b.c, true",
        "a.b.c, a.b, false",
        "a.*.c, a.b.c, true",
        "a.*.c, a.c, false",
        "a.#, a, true",
        "a.#, a.b.c.d, true",
        "#, '', true",
        "#, x.y, true",
        "#.c, c, true",
        "#.c, a.b.c, true",
        "#.c, a.b.cd, false",
        "*, '', true",
        "*, a.b, false",
        "a.#.c, a.c, true",
        "a.#.c, a.x.y.c, true",
        "a.#.#.c, a.c, true",
        "*.#, a, true",
        "*.#, '', true",
        "*.*, a, false",
        "'', '', true",
        "'', a, false",
        "a..b, a..b, true",
        "a.*.b, a..b, true",
    })
    void shouldMatchLikeRabbitMq(String pattern, String key, boolean expected) {
        assertThat(TopicMatcher.matches(pattern, key)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} hashes")
    @CsvSource({"10", "40"})
    void shouldStayFastWithManyHashes(int hashes) {
        String pattern = "#.".repeat(hashes) + "z";
        String key = "a.".repeat(200) + "b";
        assertThat(TopicMatcher.matches(pattern, key)).isFalse();
    }
}
