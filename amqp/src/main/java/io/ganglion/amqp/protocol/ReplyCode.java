package io.ganglion.amqp.protocol;

import java.util.Optional;

/**
 * The reply codes of AMQP 0-9-1, with whether RabbitMQ treats each as a soft error (closes the channel) or a hard error
 * (closes the connection). The table follows {@code rabbit_framing_amqp_0_9_1:lookup_amqp_exception/1}.
 */
public enum ReplyCode {
    REPLY_SUCCESS(200, Scope.NONE),
    CONTENT_TOO_LARGE(311, Scope.CHANNEL),
    NO_ROUTE(312, Scope.CHANNEL),
    NO_CONSUMERS(313, Scope.CHANNEL),
    CONNECTION_FORCED(320, Scope.CONNECTION),
    INVALID_PATH(402, Scope.CONNECTION),
    ACCESS_REFUSED(403, Scope.CHANNEL),
    NOT_FOUND(404, Scope.CHANNEL),
    RESOURCE_LOCKED(405, Scope.CHANNEL),
    PRECONDITION_FAILED(406, Scope.CHANNEL),
    FRAME_ERROR(501, Scope.CONNECTION),
    SYNTAX_ERROR(502, Scope.CONNECTION),
    COMMAND_INVALID(503, Scope.CONNECTION),
    CHANNEL_ERROR(504, Scope.CONNECTION),
    UNEXPECTED_FRAME(505, Scope.CONNECTION),
    RESOURCE_ERROR(506, Scope.CONNECTION),
    NOT_ALLOWED(530, Scope.CONNECTION),
    NOT_IMPLEMENTED(540, Scope.CONNECTION),
    INTERNAL_ERROR(541, Scope.CONNECTION);

    /** What a reply code closes when it is raised as an error. */
    public enum Scope {
        /** Not an error: {@code 200 REPLY_SUCCESS}. */
        NONE,
        /** A soft error: the channel is closed with {@code channel.close}, the connection lives on. */
        CHANNEL,
        /** A hard error: the connection is closed with {@code connection.close}. */
        CONNECTION
    }

    private static final ReplyCode[] VALUES = values();

    private final int code;
    private final Scope scope;

    ReplyCode(int code, Scope scope) {
        this.code = code;
        this.scope = scope;
    }

    /** The numeric code sent in {@code connection.close}, {@code channel.close} and {@code basic.return}. */
    public int code() {
        return code;
    }

    public Scope scope() {
        return scope;
    }

    /** A hard error: raising it closes the whole connection. */
    public boolean isHardError() {
        return scope == Scope.CONNECTION;
    }

    /** A soft error: raising it closes only the channel. */
    public boolean isSoftError() {
        return scope == Scope.CHANNEL;
    }

    /**
     * The reply text RabbitMQ sends for this code and an explanation, {@code "NOT_FOUND - no queue 'q' in vhost '/'"},
     * cut to fit a short string.
     */
    public String replyText(String explanation) {
        return ShortString.truncate(name() + " - " + explanation);
    }

    /** The reply code with this number, if AMQP 0-9-1 defines one. */
    public static Optional<ReplyCode> of(int code) {
        for (ReplyCode replyCode : VALUES) {
            if (replyCode.code == code) {
                return Optional.of(replyCode);
            }
        }
        return Optional.empty();
    }
}
