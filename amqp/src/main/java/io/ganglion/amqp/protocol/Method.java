package io.ganglion.amqp.protocol;

/**
 * An AMQP 0-9-1 method with its arguments: one record per method of {@link MethodId}, grouped by class
 * ({@code BasicMethod.Publish}, {@code QueueMethod.Declare}). A {@code switch} over a {@code Method} is checked for
 * exhaustiveness, so a state machine that forgets a method does not compile.
 *
 * <p>Field types: octet and short are {@code int}, long (unsigned 32 bits) is {@code long} in [0, 2^32 - 1],
 * longlong is {@code long} (delivery tags: unsigned, kept as their bits), short strings are {@code String} (at most
 * 255 octets of UTF-8, checked when encoded), long strings are {@link LongString}, tables are {@link FieldTable}.
 * Reserved fields ({@code ticket}, {@code out-of-band}...) are kept so that a round trip is exact; each record with
 * reserved fields has a constructor that leaves them out. No component is {@code null}.
 */
public sealed interface Method
        permits ConnectionMethod,
                ChannelMethod,
                AccessMethod,
                ExchangeMethod,
                QueueMethod,
                BasicMethod,
                ConfirmMethod,
                TxMethod {
    MethodId id();

    default int classId() {
        return id().classId();
    }

    default int methodId() {
        return id().methodId();
    }

    /** The name in the spec's spelling, {@code "basic.publish"}. */
    default String amqpName() {
        return id().amqpName();
    }

    /** Whether a content header and body frames follow this method. */
    default boolean hasContent() {
        return id().hasContent();
    }

    /**
     * Whether the peer must answer with the {@code -ok} method: {@link MethodId#synchronous()}, and for methods with a
     * {@code nowait} bit, only when it is clear.
     */
    default boolean isSynchronous() {
        return id().synchronous();
    }
}
