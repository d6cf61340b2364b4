package io.ganglion.metadata;

import io.ganglion.metadata.MetadataCommand.Bind;
import io.ganglion.metadata.MetadataCommand.DeclareExchange;
import io.ganglion.metadata.MetadataCommand.DeclareQueue;
import io.ganglion.metadata.MetadataCommand.DeleteExchange;
import io.ganglion.metadata.MetadataCommand.DeleteQueue;
import io.ganglion.metadata.MetadataCommand.DeleteUser;
import io.ganglion.metadata.MetadataCommand.DeleteVhost;
import io.ganglion.metadata.MetadataCommand.PutUser;
import io.ganglion.metadata.MetadataCommand.PutVhost;
import io.ganglion.metadata.MetadataCommand.Unbind;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The binary form of metadata commands, for the metadata log. One tag byte per command type, then its fields; strings
 * as modified UTF-8 with a length, argument tables as tagged plain values.
 *
 * <p>Decoding never trusts a length: every count is checked against the bytes left before anything is allocated.
 */
public final class MetadataCodec {
    private static final int VERSION = 1;

    private static final byte PUT_VHOST = 1;
    private static final byte DELETE_VHOST = 2;
    private static final byte PUT_USER = 3;
    private static final byte DELETE_USER = 4;
    private static final byte DECLARE_EXCHANGE = 5;
    private static final byte DELETE_EXCHANGE = 6;
    private static final byte DECLARE_QUEUE = 7;
    private static final byte DELETE_QUEUE = 8;
    private static final byte BIND = 9;
    private static final byte UNBIND = 10;

    private MetadataCodec() {}

    public static byte[] encode(MetadataCommand command) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            switch (command) {
                case PutVhost c -> {
                    out.writeByte(PUT_VHOST);
                    out.writeUTF(c.name());
                }
                case DeleteVhost c -> {
                    out.writeByte(DELETE_VHOST);
                    out.writeUTF(c.name());
                }
                case PutUser c -> {
                    out.writeByte(PUT_USER);
                    out.writeUTF(c.user().name());
                    byte[] hash = c.user().passwordHash();
                    out.writeShort(hash.length);
                    out.write(hash);
                    out.writeShort(c.user().tags().size());
                    for (String tag : c.user().tags()) {
                        out.writeUTF(tag);
                    }
                }
                case DeleteUser c -> {
                    out.writeByte(DELETE_USER);
                    out.writeUTF(c.name());
                }
                case DeclareExchange c -> {
                    out.writeByte(DECLARE_EXCHANGE);
                    out.writeUTF(c.vhost());
                    Exchange e = c.exchange();
                    out.writeUTF(e.name());
                    out.writeByte(e.type().ordinal());
                    out.writeBoolean(e.durable());
                    out.writeBoolean(e.autoDelete());
                    out.writeBoolean(e.internal());
                    writeTable(out, e.arguments());
                }
                case DeleteExchange c -> {
                    out.writeByte(DELETE_EXCHANGE);
                    out.writeUTF(c.vhost());
                    out.writeUTF(c.name());
                    out.writeBoolean(c.ifUnused());
                }
                case DeclareQueue c -> {
                    out.writeByte(DECLARE_QUEUE);
                    out.writeUTF(c.vhost());
                    QueueDef q = c.queue();
                    out.writeUTF(q.name());
                    out.writeLong(q.objectId());
                    out.writeByte(q.type().ordinal());
                    out.writeBoolean(q.durable());
                    out.writeUTF(q.exclusiveOwner());
                    out.writeBoolean(q.autoDelete());
                    writeTable(out, q.arguments());
                }
                case DeleteQueue c -> {
                    out.writeByte(DELETE_QUEUE);
                    out.writeUTF(c.vhost());
                    out.writeUTF(c.name());
                }
                case Bind c -> {
                    out.writeByte(BIND);
                    out.writeUTF(c.vhost());
                    writeBinding(out, c.binding());
                }
                case Unbind c -> {
                    out.writeByte(UNBIND);
                    out.writeUTF(c.vhost());
                    writeBinding(out, c.binding());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return bytes.toByteArray();
    }

    /**
     * Decodes one command.
     *
     * @throws MetadataCodecException if the bytes are truncated, carry an unknown version or tag, or have trailing bytes
     */
    public static MetadataCommand decode(byte[] bytes) throws MetadataCodecException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new MetadataCodecException("unknown metadata command version " + version);
            }
            int tag = in.readUnsignedByte();
            MetadataCommand command = switch (tag) {
                case PUT_VHOST -> new PutVhost(in.readUTF());
                case DELETE_VHOST -> new DeleteVhost(in.readUTF());
                case PUT_USER -> {
                    String name = in.readUTF();
                    byte[] hash = new byte[checkedCount(in, in.readUnsignedShort(), 1)];
                    in.readFully(hash);
                    int tags = checkedCount(in, in.readUnsignedShort(), 2);
                    List<String> tagList = new ArrayList<>(tags);
                    for (int i = 0; i < tags; i++) {
                        tagList.add(in.readUTF());
                    }
                    yield new PutUser(new User(name, hash, tagList));
                }
                case DELETE_USER -> new DeleteUser(in.readUTF());
                case DECLARE_EXCHANGE -> {
                    String vhost = in.readUTF();
                    String name = in.readUTF();
                    ExchangeType type = enumValue(ExchangeType.values(), in.readUnsignedByte(), "exchange type");
                    yield new DeclareExchange(
                            vhost,
                            new Exchange(
                                    name, type, in.readBoolean(), in.readBoolean(), in.readBoolean(), readTable(in)));
                }
                case DELETE_EXCHANGE -> new DeleteExchange(in.readUTF(), in.readUTF(), in.readBoolean());
                case DECLARE_QUEUE -> {
                    String vhost = in.readUTF();
                    String name = in.readUTF();
                    long objectId = in.readLong();
                    QueueType type = enumValue(QueueType.values(), in.readUnsignedByte(), "queue type");
                    yield new DeclareQueue(
                            vhost,
                            new QueueDef(
                                    name,
                                    objectId,
                                    type,
                                    in.readBoolean(),
                                    in.readUTF(),
                                    in.readBoolean(),
                                    readTable(in)));
                }
                case DELETE_QUEUE -> new DeleteQueue(in.readUTF(), in.readUTF());
                case BIND -> new Bind(in.readUTF(), readBinding(in));
                case UNBIND -> new Unbind(in.readUTF(), readBinding(in));
                default -> throw new MetadataCodecException("unknown metadata command tag " + tag);
            };
            if (in.available() > 0) {
                throw new MetadataCodecException(in.available() + " trailing bytes after " + command);
            }
            return command;
        } catch (EOFException e) {
            throw new MetadataCodecException("truncated metadata command", e);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new MetadataCodecException("invalid metadata command: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new MetadataCodecException("malformed metadata command: " + e.getMessage(), e);
        }
    }

    private static void writeBinding(DataOutputStream out, Binding binding) throws IOException {
        out.writeUTF(binding.source());
        out.writeByte(binding.destination().kind().ordinal());
        out.writeUTF(binding.destination().name());
        out.writeUTF(binding.routingKey());
        writeTable(out, binding.arguments());
    }

    private static Binding readBinding(DataInputStream in) throws IOException, MetadataCodecException {
        String source = in.readUTF();
        Destination.Kind kind = enumValue(Destination.Kind.values(), in.readUnsignedByte(), "destination kind");
        return new Binding(source, new Destination(kind, in.readUTF()), in.readUTF(), readTable(in));
    }

    private static final byte V_NULL = 0;
    private static final byte V_STRING = 1;
    private static final byte V_LONG = 2;
    private static final byte V_INT = 3;
    private static final byte V_BOOL = 4;
    private static final byte V_DOUBLE = 5;
    private static final byte V_FLOAT = 6;
    private static final byte V_BYTES = 7;
    private static final byte V_LIST = 8;
    private static final byte V_MAP = 9;
    private static final byte V_DECIMAL = 10;
    private static final byte V_SHORT = 11;
    private static final byte V_BYTE = 12;

    private static void writeTable(DataOutputStream out, Map<String, Object> table) throws IOException {
        out.writeInt(table.size());
        for (Map.Entry<String, Object> entry : new java.util.TreeMap<>(table).entrySet()) {
            out.writeUTF(entry.getKey());
            writeValue(out, entry.getValue());
        }
    }

    private static void writeValue(DataOutputStream out, Object value) throws IOException {
        switch (value) {
            case null -> out.writeByte(V_NULL);
            case String s -> {
                out.writeByte(V_STRING);
                byte[] utf8 = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                out.writeInt(utf8.length);
                out.write(utf8);
            }
            case Long l -> {
                out.writeByte(V_LONG);
                out.writeLong(l);
            }
            case Integer i -> {
                out.writeByte(V_INT);
                out.writeInt(i);
            }
            case Short s -> {
                out.writeByte(V_SHORT);
                out.writeShort(s);
            }
            case Byte b -> {
                out.writeByte(V_BYTE);
                out.writeByte(b);
            }
            case Boolean b -> {
                out.writeByte(V_BOOL);
                out.writeBoolean(b);
            }
            case Double d -> {
                out.writeByte(V_DOUBLE);
                out.writeDouble(d);
            }
            case Float f -> {
                out.writeByte(V_FLOAT);
                out.writeFloat(f);
            }
            case byte[] bytes -> {
                out.writeByte(V_BYTES);
                out.writeInt(bytes.length);
                out.write(bytes);
            }
            case BigDecimal d -> {
                out.writeByte(V_DECIMAL);
                out.writeInt(d.scale());
                byte[] unscaled = d.unscaledValue().toByteArray();
                out.writeInt(unscaled.length);
                out.write(unscaled);
            }
            case List<?> list -> {
                out.writeByte(V_LIST);
                out.writeInt(list.size());
                for (Object element : list) {
                    writeValue(out, element);
                }
            }
            case Map<?, ?> map -> {
                out.writeByte(V_MAP);
                Map<String, Object> table = new LinkedHashMap<>();
                map.forEach((k, v) -> table.put(String.valueOf(k), v));
                writeTable(out, table);
            }
            default -> throw new IllegalArgumentException("cannot store argument value of " + value.getClass());
        }
    }

    private static Map<String, Object> readTable(DataInputStream in) throws IOException, MetadataCodecException {
        int size = checkedCount(in, in.readInt(), 3);
        Map<String, Object> table = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            String key = in.readUTF();
            table.put(key, readValue(in));
        }
        return java.util.Collections.unmodifiableMap(table);
    }

    private static Object readValue(DataInputStream in) throws IOException, MetadataCodecException {
        int tag = in.readUnsignedByte();
        return switch (tag) {
            case V_NULL -> null;
            case V_STRING -> {
                byte[] utf8 = new byte[checkedCount(in, in.readInt(), 1)];
                in.readFully(utf8);
                yield new String(utf8, java.nio.charset.StandardCharsets.UTF_8);
            }
            case V_LONG -> in.readLong();
            case V_INT -> in.readInt();
            case V_SHORT -> in.readShort();
            case V_BYTE -> in.readByte();
            case V_BOOL -> in.readBoolean();
            case V_DOUBLE -> in.readDouble();
            case V_FLOAT -> in.readFloat();
            case V_BYTES -> {
                byte[] bytes = new byte[checkedCount(in, in.readInt(), 1)];
                in.readFully(bytes);
                yield bytes;
            }
            case V_DECIMAL -> {
                int scale = in.readInt();
                byte[] unscaled = new byte[checkedCount(in, in.readInt(), 1)];
                in.readFully(unscaled);
                yield new BigDecimal(unscaled.length == 0 ? BigInteger.ZERO : new BigInteger(unscaled), scale);
            }
            case V_LIST -> {
                int size = checkedCount(in, in.readInt(), 1);
                List<Object> list = new ArrayList<>(size);
                for (int i = 0; i < size; i++) {
                    list.add(readValue(in));
                }
                yield java.util.Collections.unmodifiableList(list);
            }
            case V_MAP -> readTable(in);
            default -> throw new MetadataCodecException("unknown argument value tag " + tag);
        };
    }

    /** A count read from the input, checked against the bytes left (each element needs at least {@code minBytes}). */
    private static int checkedCount(DataInputStream in, int count, int minBytes)
            throws IOException, MetadataCodecException {
        if (count < 0 || (long) count * minBytes > in.available()) {
            throw new MetadataCodecException("count " + count + " exceeds the " + in.available() + " bytes left");
        }
        return count;
    }

    private static <E> E enumValue(E[] values, int ordinal, String what) throws MetadataCodecException {
        if (ordinal >= values.length) {
            throw new MetadataCodecException("unknown " + what + " " + ordinal);
        }
        return values[ordinal];
    }
}
