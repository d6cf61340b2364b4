package io.ganglion.amqp.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class MethodIdTest {
    @Test
    void shouldListTheSixtySixMethodsOfRabbitMqs091() {
        assertThat(MethodId.values()).hasSize(66);
        assertThat(Arrays.stream(MethodId.values()).map(id -> id.classId() + "." + id.methodId()))
                .doesNotHaveDuplicates();
    }

    @Test
    void shouldLookUpEveryMethodByItsIds() {
        for (MethodId id : MethodId.values()) {
            assertThat(MethodId.of(id.classId(), id.methodId())).contains(id);
        }
    }

    @Test
    void shouldFindNoMethodForUnknownIds() {
        assertThat(MethodId.of(60, 200)).as("basic.credit, gone in RabbitMQ 4").isEmpty();
        assertThat(MethodId.of(40, 41)).as("exchange.unbind-ok is 51").isEmpty();
        assertThat(MethodId.of(65535, 65535)).isEmpty();
        assertThat(MethodId.of(-1, 10)).isEmpty();
    }

    @Test
    void shouldNumberRabbitMqExtensionsAsRabbitMq() {
        assertThat(MethodId.of(10, 60)).contains(MethodId.CONNECTION_BLOCKED);
        assertThat(MethodId.of(10, 61)).contains(MethodId.CONNECTION_UNBLOCKED);
        assertThat(MethodId.of(10, 70)).contains(MethodId.CONNECTION_UPDATE_SECRET);
        assertThat(MethodId.of(40, 30)).contains(MethodId.EXCHANGE_BIND);
        assertThat(MethodId.of(40, 51)).contains(MethodId.EXCHANGE_UNBIND_OK);
        assertThat(MethodId.of(60, 120)).contains(MethodId.BASIC_NACK);
        assertThat(MethodId.of(85, 10)).contains(MethodId.CONFIRM_SELECT);
    }

    @Test
    void shouldNameMethodsInTheSpecsSpelling() {
        assertThat(MethodId.CONNECTION_START_OK.amqpName()).isEqualTo("connection.start-ok");
        assertThat(new BasicMethod.Publish("", "q", false, false).amqpName()).isEqualTo("basic.publish");
    }

    @Test
    void shouldFillReservedFieldsAsClientsSendThem() {
        assertThat(new BasicMethod.Publish("x", "k", false, false).ticket()).isZero();
        assertThat(new ConnectionMethod.Open("/")).isEqualTo(new ConnectionMethod.Open("/", "", false));
        assertThat(new ChannelMethod.OpenOk().channelId()).isEqualTo(LongString.EMPTY);
    }

    @Test
    void shouldRefuseFieldsOutOfTheirTypesRange() {
        assertThatThrownBy(() -> new ConnectionMethod.Tune(65536, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ConnectionMethod.Tune(0, 1L << 32, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () -> new ConnectionMethod.Start(256, 9, FieldTable.EMPTY, LongString.EMPTY, LongString.EMPTY))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BasicMethod.Publish(null, "k", false, false))
                .isInstanceOf(NullPointerException.class);
    }
}
