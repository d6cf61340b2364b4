package io.ganglion.amqp.codec;

import io.ganglion.amqp.protocol.BasicProperties;
import io.ganglion.amqp.protocol.ClassId;
import java.util.Objects;

/**
 * The payload of a content header frame.
 *
 * @param classId the class of the content method it follows; 60 (basic) for every content method of 0-9-1
 * @param weight unused, always 0 (RabbitMQ refuses any other value)
 * @param bodySize the total body size in octets, unsigned 64 bits kept as its bits in a long
 * @param properties the basic properties; {@link BasicProperties#EMPTY} for a header of another class, whose property
 *     octets are not decoded (RabbitMQ refuses such a header anyway, as an unexpected frame)
 */
public record ContentHeader(int classId, int weight, long bodySize, BasicProperties properties) {
    public ContentHeader {
        if (classId < 0 || classId > 0xFFFF || weight < 0 || weight > 0xFFFF) {
            throw new IllegalArgumentException("classId and weight are shorts, were " + classId + ", " + weight);
        }
        Objects.requireNonNull(properties, "properties");
    }

    /** A basic content header: class 60, weight 0. */
    public static ContentHeader basic(long bodySize, BasicProperties properties) {
        return new ContentHeader(ClassId.BASIC, 0, bodySize, properties);
    }
}
