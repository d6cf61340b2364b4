package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.amqp.codec.ContentHeader;
import io.ganglion.amqp.codec.ContentHeaderCodec;
import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.FieldTable;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MessageRecordTest {
    private static final BasicProperties PROPERTIES = BasicProperties.builder()
            .contentType("text/plain")
            .headers(FieldTable.builder().put("x-n", 7).put("x-s", "v").build())
            .deliveryMode(BasicProperties.PERSISTENT)
            .build();

    @Test
    void shouldStoreTheHeaderOctetsAsTheyAreAndHandThemBack() {
        ByteBuffer canonical = ContentHeaderCodec.encoded(ContentHeader.basic(5, PROPERTIES));
        // the same properties with a continuation bit and an empty second flag word: a re-encoding would drop it
        ByteBuffer header = ByteBuffer.allocate(canonical.remaining() + 2);
        header.put(canonical.duplicate().limit(canonical.position() + 12));
        header.putShort((short) (canonical.getShort(canonical.position() + 12) | 1))
                .putShort((short) 0);
        header.put(canonical.duplicate().position(canonical.position() + 14)).flip();

        ByteBuffer record = MessageRecord.encodeMessage(
                "amq.direct", "key", header, Unpooled.wrappedBuffer("hello".getBytes(StandardCharsets.US_ASCII)));
        MessageRecord.Message message = MessageRecord.decodeMessage(record);

        assertThat(record.get(0)).isEqualTo(MessageRecord.MESSAGE);
        assertThat(message.exchange()).isEqualTo("amq.direct");
        assertThat(message.routingKey()).isEqualTo("key");
        assertThat(message.header()).isEqualTo(header);
        assertThat(message.properties()).isEqualTo(PROPERTIES);
        assertThat(StandardCharsets.US_ASCII.decode(message.body()).toString()).isEqualTo("hello");
    }

    /** {@code body} with {@code properties} as a message record. */
    static ByteBuffer record(BasicProperties properties, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
        return MessageRecord.encodeMessage(
                "",
                "q",
                ContentHeaderCodec.encoded(ContentHeader.basic(bytes.length, properties)),
                Unpooled.wrappedBuffer(bytes));
    }

    @Test
    void shouldReadTheMessagesOwnTtlOnlyWhenItHasOne() {
        assertThat(MessageRecord.expirationMs(record(PROPERTIES, "x"))).isEqualTo(-1);
        BasicProperties expiring = BasicProperties.builder()
                .contentType("text/plain")
                .expiration("1500")
                .messageId("m")
                .build();
        assertThat(MessageRecord.expirationMs(record(expiring, "x"))).isEqualTo(1_500);
        assertThat(MessageRecord.expirationMs(
                        record(BasicProperties.builder().expiration("0").build(), "")))
                .isZero();
    }

    @Test
    void shouldReadTheBodySizeFromTheContentHeader() {
        assertThat(MessageRecord.bodySize(record(PROPERTIES, "hello"))).isEqualTo(5);
        assertThat(MessageRecord.bodySize(record(BasicProperties.EMPTY, ""))).isZero();
    }
}
