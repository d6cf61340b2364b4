package io.ganglion.amqp.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class FieldTableTest {
    @Test
    void shouldFindTheFirstEntryOfAName() {
        FieldTable table = FieldTable.builder().put("x", 1).put("x", 2).build();

        assertThat(table.get("x")).contains(new FieldValue.Int32(1));
        assertThat(table.get("y")).isEmpty();
    }

    @Test
    void shouldReplaceTheFirstEntryOrAppend() {
        FieldTable table = FieldTable.builder().put("a", 1).put("b", 2).build();

        assertThat(table.with("a", FieldValue.of(9)).entries())
                .containsExactly(
                        new FieldTable.Entry("a", new FieldValue.Int32(9)),
                        new FieldTable.Entry("b", new FieldValue.Int32(2)));
        assertThat(table.with("c", FieldValue.of(true)).size()).isEqualTo(3);
        assertThat(table.size()).as("tables are immutable").isEqualTo(2);
    }

    @Test
    void shouldTypeStringArgumentsAsLongStringsLikeRabbitMq() {
        assertThat(FieldTable.builder().put("x-queue-type", "quorum").build().get("x-queue-type"))
                .contains(new FieldValue.LongStr(LongString.of("quorum")));
    }

    @Test
    void shouldRefuseValuesOutsideTheirType() {
        assertThatThrownBy(() -> new FieldValue.UInt8(256)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FieldValue.UInt16(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FieldValue.UInt32(1L << 32)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FieldValue.Decimal(256, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldReadDecimalsAsScaledValues() {
        assertThat(new FieldValue.Decimal(2, 12345).toBigDecimal()).isEqualTo(new BigDecimal("123.45"));
    }

    @Test
    void shouldCompareLongStringsByContent() {
        assertThat(LongString.of("abc")).isEqualTo(LongString.copyOf(new byte[] {'a', 'b', 'c'}));
        assertThat(LongString.of("abc")).hasSameHashCodeAs(LongString.copyOf(new byte[] {'a', 'b', 'c'}));
        assertThat(LongString.of("é").length()).isEqualTo(2);
    }

    @Test
    void shouldKeepLongStringsImmutable() {
        byte[] bytes = {1, 2};
        LongString value = LongString.copyOf(bytes);
        bytes[0] = 9;
        value.toByteArray()[1] = 9;

        assertThat(value.toByteArray()).containsExactly(1, 2);
    }

    @Test
    void shouldTellAbsentPropertiesFromEmptyOnes() {
        BasicProperties empty = BasicProperties.builder().contentType("").build();

        assertThat(BasicProperties.EMPTY.isEmpty()).isTrue();
        assertThat(empty.isEmpty()).isFalse();
        assertThat(empty.toBuilder().contentType(null).build()).isEqualTo(BasicProperties.EMPTY);
        assertThat(BasicProperties.builder().deliveryMode(2).build().isPersistent())
                .isTrue();
    }
}
