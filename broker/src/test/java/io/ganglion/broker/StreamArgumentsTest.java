package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.ReplyCode;
import io.ganglion.amqp.server.BrokerFailure;
import io.ganglion.queues.StreamStart;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StreamArgumentsTest {
    private static StreamStart start(FieldValue value) {
        return StreamArguments.start(
                FieldTable.builder().put("x-stream-offset", value).build(), "s", "/");
    }

    @Test
    void shouldReadEveryFormOfAStreamOffset() {
        assertThat(StreamArguments.start(FieldTable.EMPTY, "s", "/")).isEqualTo(StreamStart.NEXT);
        assertThat(StreamArguments.start(null, "s", "/")).isEqualTo(StreamStart.NEXT);
        assertThat(start(FieldValue.of("first"))).isEqualTo(StreamStart.FIRST);
        assertThat(start(FieldValue.of("last"))).isEqualTo(StreamStart.LAST);
        assertThat(start(FieldValue.of("next"))).isEqualTo(StreamStart.NEXT);
        assertThat(start(new FieldValue.Int64(4096))).isEqualTo(StreamStart.at(4096));
        assertThat(start(new FieldValue.Int32(7))).isEqualTo(StreamStart.at(7));
        assertThat(start(new FieldValue.Timestamp(1_700_000_000L))).isEqualTo(StreamStart.since(1_700_000_000_000L));
        assertThat(start(FieldValue.of("90s"))).isEqualTo(StreamStart.ago(90_000));
        assertThat(start(FieldValue.of("2h"))).isEqualTo(StreamStart.ago(7_200_000));
        assertThat(start(FieldValue.of("1D"))).isEqualTo(StreamStart.ago(86_400_000));
    }

    @Test
    void shouldRefuseAnyOtherStreamOffsetWith406() {
        for (FieldValue bad : new FieldValue[] {
            FieldValue.of("middle"),
            FieldValue.of("h"),
            FieldValue.of("5x"),
            FieldValue.of("-1h"),
            new FieldValue.Int64(-5),
            new FieldValue.Float64(1.5),
            FieldValue.of(true)
        }) {
            assertThatThrownBy(() -> start(bad))
                    .as("%s", bad)
                    .isInstanceOfSatisfying(
                            BrokerFailure.class,
                            failure -> assertThat(failure.replyCode()).isEqualTo(ReplyCode.PRECONDITION_FAILED))
                    .hasMessageContaining("invalid arg 'x-stream-offset' for stream queue 's' in vhost '/'");
        }
    }

    @Test
    void shouldRefuseTheArgumentsOfAQueueThatAStreamCannotHonour() {
        for (String name : new String[] {"x-message-ttl", "x-max-length", "x-dead-letter-exchange", "x-overflow"}) {
            assertThatThrownBy(() -> StreamArguments.check(Map.of(name, "1"), "s", "/"))
                    .as(name)
                    .isInstanceOfSatisfying(
                            BrokerFailure.class,
                            failure -> assertThat(failure.replyCode()).isEqualTo(ReplyCode.PRECONDITION_FAILED))
                    .hasMessage(
                            "invalid arg '" + name + "' for queue 's' in vhost '/' of queue type rabbit_stream_queue");
        }
        StreamArguments.check(Map.of("x-max-length-bytes", 1000L, "x-max-age", "7D"), "s", "/");
    }

    @Test
    void shouldReadAgesAsRabbitMqWritesThem() {
        assertThat(StreamArguments.ageMillis("7D")).contains(7 * 86_400_000L);
        assertThat(StreamArguments.ageMillis("1Y")).contains(365 * 86_400_000L);
        assertThat(StreamArguments.ageMillis("2M")).contains(60 * 86_400_000L);
        assertThat(StreamArguments.ageMillis("30m")).contains(1_800_000L);
        assertThat(StreamArguments.ageMillis("3s")).contains(3_000L);
        assertThat(StreamArguments.ageMillis("7d")).isEmpty();
        assertThat(StreamArguments.ageMillis("7")).isEmpty();
        assertThat(StreamArguments.ageMillis("999999999999999Y"))
                .as("overflows")
                .isEmpty();
        assertThat(StreamArguments.maxAgeMillis(Map.of("x-max-age", "12h"))).contains(43_200_000L);
        assertThat(StreamArguments.maxAgeMillis(Map.of("x-max-age", 12))).isEmpty();
        assertThat(StreamArguments.maxAgeMillis(Map.of())).isEqualTo(Optional.empty());
    }

    @Test
    void shouldCheckAStreamsDeclareArguments() {
        StreamArguments.check(
                Map.of(
                        "x-max-length-bytes",
                        20_000_000_000L,
                        "x-stream-max-segment-size-bytes",
                        100_000_000,
                        "x-max-age",
                        "7D"),
                "s",
                "/");
        for (Map<String, Object> bad : java.util.List.<Map<String, Object>>of(
                Map.of("x-max-length-bytes", 0),
                Map.of("x-max-length-bytes", "lots"),
                Map.of("x-stream-max-segment-size-bytes", 3_000_000_001L),
                Map.of("x-max-age", "a week"),
                Map.of("x-max-age", 7))) {
            assertThatThrownBy(() -> StreamArguments.check(bad, "s", "/"))
                    .as("%s", bad)
                    .isInstanceOfSatisfying(
                            BrokerFailure.class,
                            failure -> assertThat(failure.replyCode()).isEqualTo(ReplyCode.PRECONDITION_FAILED))
                    .hasMessageContaining(
                            "invalid arg '" + bad.keySet().iterator().next() + "' for queue 's'");
        }
    }
}
