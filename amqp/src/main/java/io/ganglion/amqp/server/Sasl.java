package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.FieldCodec;
import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ClassId;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.MethodId;
import io.ganglion.amqp.protocol.ReplyCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The SASL mechanisms we offer in {@code connection.start}, and how RabbitMQ reads their responses.
 *
 * <pre>
 * PLAIN     0x00 user 0x00 password          (no authorization id: RabbitMQ refuses one)
 * AMQPLAIN  the entries of a field table, WITHOUT the table's 4-octet length:
 *           shortstr "LOGIN" 'S' longstr user, shortstr "PASSWORD" 'S' longstr password
 * </pre>
 *
 * A response that does not parse is a {@code 502 SYNTAX_ERROR}, as RabbitMQ's {@code {protocol_error, ...}} from a
 * mechanism becomes; the text never echoes the response, which holds a password.
 */
final class Sasl {
    static final String PLAIN = "PLAIN";
    static final String AMQPLAIN = "AMQPLAIN";

    /** As {@code connection.start} lists them. */
    static final String MECHANISMS = PLAIN + " " + AMQPLAIN;

    record Credentials(String user, String password) {
        @Override
        public String toString() {
            return "Credentials[user=" + user + "]";
        }
    }

    private Sasl() {}

    static boolean isOffered(String mechanism) {
        return PLAIN.equals(mechanism) || AMQPLAIN.equals(mechanism);
    }

    /**
     * The user and password in {@code response}.
     *
     * @throws AmqpException {@code 502 SYNTAX_ERROR} when the response does not parse, {@code 503} for a mechanism we do
     *     not offer
     */
    static Credentials parse(String mechanism, LongString response) {
        return switch (mechanism) {
            case PLAIN -> parsePlain(response.toByteArray());
            case AMQPLAIN -> parseAmqplain(response.toByteArray());
            default -> throw unknownMechanism(mechanism);
        };
    }

    static ServerFault unknownMechanism(String mechanism) {
        return startOkFault(ReplyCode.COMMAND_INVALID, "unknown authentication mechanism '" + mechanism + "'");
    }

    private static Credentials parsePlain(byte[] response) {
        // RabbitMQ's extract_elem/1 twice: each element starts with a NUL and runs to the next NUL or the end.
        if (response.length == 0 || response[0] != 0) {
            throw plainInvalid();
        }
        int userEnd = indexOfNul(response, 1);
        if (userEnd == response.length) {
            throw plainInvalid();
        }
        int passwordEnd = indexOfNul(response, userEnd + 1);
        if (passwordEnd != response.length) {
            throw plainInvalid();
        }
        return new Credentials(utf8(response, 1, userEnd), utf8(response, userEnd + 1, passwordEnd));
    }

    private static Credentials parseAmqplain(byte[] response) {
        ByteBuf table = Unpooled.buffer(4 + response.length);
        FieldTable entries;
        try {
            table.writeInt(response.length).writeBytes(response);
            entries = FieldCodec.readTable(table);
        } catch (AmqpException e) {
            throw amqplainInvalid();
        } finally {
            table.release();
        }
        Optional<String> login = longString(entries, "LOGIN");
        Optional<String> password = longString(entries, "PASSWORD");
        if (login.isEmpty() || password.isEmpty()) {
            throw amqplainInvalid();
        }
        return new Credentials(login.get(), password.get());
    }

    private static Optional<String> longString(FieldTable table, String name) {
        return table.get(name)
                .flatMap(value -> value instanceof FieldValue.LongStr s
                        ? Optional.of(s.value().toString())
                        : Optional.empty());
    }

    private static int indexOfNul(byte[] bytes, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return bytes.length;
    }

    private static String utf8(byte[] bytes, int from, int to) {
        return new String(bytes, from, to - from, StandardCharsets.UTF_8);
    }

    private static ServerFault plainInvalid() {
        return startOkFault(ReplyCode.SYNTAX_ERROR, "PLAIN response invalid");
    }

    private static ServerFault amqplainInvalid() {
        return startOkFault(ReplyCode.SYNTAX_ERROR, "AMQPLAIN auth info is missing LOGIN or PASSWORD field");
    }

    private static ServerFault startOkFault(ReplyCode code, String explanation) {
        return new ServerFault(code, explanation, ClassId.CONNECTION, MethodId.CONNECTION_START_OK.methodId());
    }
}
