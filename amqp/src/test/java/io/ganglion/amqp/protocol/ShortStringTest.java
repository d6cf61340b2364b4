package io.ganglion.amqp.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ShortStringTest {
    private static final String[] TEXT = {"a", "é", "€", "\uD834\uDD1E"};

    static LongStream seeds() {
        return LongStream.range(0, 200);
    }

    private static String text(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        StringBuilder text = new StringBuilder();
        int length = random.nextInt(200);
        for (int i = 0; i < length; i++) {
            text.append(TEXT[random.nextInt(TEXT.length)]);
        }
        return text.toString();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldCountUtf8OctetsAsTheJdkEncodes(long seed) {
        String text = text(seed);

        assertThat(ShortString.utf8Length(text))
                .as("seed %d", seed)
                .isEqualTo(text.getBytes(StandardCharsets.UTF_8).length);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldTruncateToAtMost255OctetsAtACodePointBoundary(long seed) {
        String text = text(seed);

        String cut = ShortString.truncate(text);

        assertThat(ShortString.utf8Length(cut)).as("seed %d", seed).isLessThanOrEqualTo(255);
        assertThat(text).as("seed %d", seed).startsWith(cut);
        assertThat(cut.isEmpty() || !Character.isHighSurrogate(cut.charAt(cut.length() - 1)))
                .as("seed %d: no half surrogate pair", seed)
                .isTrue();
        if (ShortString.utf8Length(text) <= 255) {
            assertThat(cut).as("seed %d: text that fits is kept whole", seed).isSameAs(text);
        } else {
            assertThat(ShortString.utf8Length(cut))
                    .as("seed %d: cut no shorter than needed", seed)
                    .isGreaterThan(255 - 4);
        }
    }
}
