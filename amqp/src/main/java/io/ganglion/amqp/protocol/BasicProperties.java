package io.ganglion.amqp.protocol;

/**
 * The 14 properties of the basic class, carried in a content header.
 *
 * <p><b>Absent is {@code null}.</b> Each property is optional on the wire: its bit in the property flags says whether it
 * is there. A component is {@code null} exactly when its flag is clear, so an absent property and an empty string stay
 * different ({@code content-type ""} is a present property). We chose {@code null} over {@code Optional} fields
 * (which our style forbids) and over sentinels (which would make a present empty string or a zero priority
 * unrepresentable). Use {@link #EMPTY} and {@link #builder()} to build values.
 *
 * @param contentType MIME content type, a short string
 * @param contentEncoding MIME content encoding, a short string
 * @param headers message header field table
 * @param deliveryMode 1 non-persistent, 2 persistent; an octet
 * @param priority message priority, an octet
 * @param correlationId application correlation identifier, a short string
 * @param replyTo address to reply to, a short string
 * @param expiration message expiration (RabbitMQ: milliseconds as a decimal string), a short string
 * @param messageId application message identifier, a short string
 * @param timestamp message timestamp in seconds since the epoch, unsigned 64 bits kept in a long
 * @param type message type name, a short string
 * @param userId creating user id, a short string (RabbitMQ validates it against the connection's user)
 * @param appId creating application id, a short string
 * @param clusterId reserved, a short string
 */
public record BasicProperties(
        String contentType,
        String contentEncoding,
        FieldTable headers,
        Integer deliveryMode,
        Integer priority,
        String correlationId,
        String replyTo,
        String expiration,
        String messageId,
        Long timestamp,
        String type,
        String userId,
        String appId,
        String clusterId) {

    /** No property present. */
    public static final BasicProperties EMPTY =
            new BasicProperties(null, null, null, null, null, null, null, null, null, null, null, null, null, null);

    /** {@code delivery-mode} of a message that is not persisted. */
    public static final int NON_PERSISTENT = 1;

    /** {@code delivery-mode} of a persistent message. */
    public static final int PERSISTENT = 2;

    public BasicProperties {
        if (deliveryMode != null) {
            Check.octet(deliveryMode, "deliveryMode");
        }
        if (priority != null) {
            Check.octet(priority, "priority");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder()
                .contentType(contentType)
                .contentEncoding(contentEncoding)
                .headers(headers)
                .deliveryMode(deliveryMode)
                .priority(priority)
                .correlationId(correlationId)
                .replyTo(replyTo)
                .expiration(expiration)
                .messageId(messageId)
                .timestamp(timestamp)
                .type(type)
                .userId(userId)
                .appId(appId)
                .clusterId(clusterId);
    }

    /** Whether no property is present. */
    public boolean isEmpty() {
        return equals(EMPTY);
    }

    /** Whether {@code delivery-mode} is present and persistent. */
    public boolean isPersistent() {
        return deliveryMode != null && deliveryMode == PERSISTENT;
    }

    /** Sets properties one by one; an unset property stays absent. */
    public static final class Builder {
        private String contentType;
        private String contentEncoding;
        private FieldTable headers;
        private Integer deliveryMode;
        private Integer priority;
        private String correlationId;
        private String replyTo;
        private String expiration;
        private String messageId;
        private Long timestamp;
        private String type;
        private String userId;
        private String appId;
        private String clusterId;

        private Builder() {}

        public Builder contentType(String value) {
            contentType = value;
            return this;
        }

        public Builder contentEncoding(String value) {
            contentEncoding = value;
            return this;
        }

        public Builder headers(FieldTable value) {
            headers = value;
            return this;
        }

        public Builder deliveryMode(Integer value) {
            deliveryMode = value;
            return this;
        }

        public Builder priority(Integer value) {
            priority = value;
            return this;
        }

        public Builder correlationId(String value) {
            correlationId = value;
            return this;
        }

        public Builder replyTo(String value) {
            replyTo = value;
            return this;
        }

        public Builder expiration(String value) {
            expiration = value;
            return this;
        }

        public Builder messageId(String value) {
            messageId = value;
            return this;
        }

        public Builder timestamp(Long value) {
            timestamp = value;
            return this;
        }

        public Builder type(String value) {
            type = value;
            return this;
        }

        public Builder userId(String value) {
            userId = value;
            return this;
        }

        public Builder appId(String value) {
            appId = value;
            return this;
        }

        public Builder clusterId(String value) {
            clusterId = value;
            return this;
        }

        public BasicProperties build() {
            return new BasicProperties(
                    contentType,
                    contentEncoding,
                    headers,
                    deliveryMode,
                    priority,
                    correlationId,
                    replyTo,
                    expiration,
                    messageId,
                    timestamp,
                    type,
                    userId,
                    appId,
                    clusterId);
        }
    }
}
