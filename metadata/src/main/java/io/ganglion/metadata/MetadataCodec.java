package io.ganglion.metadata;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.Batch;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.CoordinationCommand.CreateObject;
import io.ganglion.coordination.CoordinationCommand.DeleteObject;
import io.ganglion.coordination.CoordinationCommand.SetSettings;
import io.ganglion.coordination.DownReason;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.HistoryRecord.Activated;
import io.ganglion.coordination.HistoryRecord.Created;
import io.ganglion.coordination.HistoryRecord.FollowerAdded;
import io.ganglion.coordination.HistoryRecord.FollowerDropped;
import io.ganglion.coordination.HistoryRecord.FollowerLeaving;
import io.ganglion.coordination.HistoryRecord.MemberInstalled;
import io.ganglion.coordination.HistoryRecord.RecoveryPending;
import io.ganglion.coordination.HistoryRecord.RecoveryPointChosen;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.coordination.SealReply;
import io.ganglion.metadata.MetadataCommand.Bind;
import io.ganglion.metadata.MetadataCommand.Bootstrap;
import io.ganglion.metadata.MetadataCommand.Coordination;
import io.ganglion.metadata.MetadataCommand.DeclareExchange;
import io.ganglion.metadata.MetadataCommand.DeclareQueue;
import io.ganglion.metadata.MetadataCommand.DeleteExchange;
import io.ganglion.metadata.MetadataCommand.DeleteQueue;
import io.ganglion.metadata.MetadataCommand.DeleteUnusedQueue;
import io.ganglion.metadata.MetadataCommand.DeleteUser;
import io.ganglion.metadata.MetadataCommand.DeleteVhost;
import io.ganglion.metadata.MetadataCommand.Fenced;
import io.ganglion.metadata.MetadataCommand.PutUser;
import io.ganglion.metadata.MetadataCommand.PutVhost;
import io.ganglion.metadata.MetadataCommand.SetDraining;
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
import java.util.Optional;
import java.util.TreeMap;

/**
 * The binary form of metadata commands, for the metadata log. One tag byte per command type, then its fields; strings
 * as modified UTF-8 with a length, argument tables as tagged plain values.
 *
 * <pre>
 *   command      := version(1) tag body
 *   tag 1..10    := the vhost, user, exchange, queue and binding commands
 *   tag 11       := Coordination: ctag cbody
 *     ctag 1 CreateObject   spec = vhost name kind(1) copies(4) mode(1)
 *     ctag 2 DeleteObject   vhost name
 *     ctag 3 CommitLiveSet  count(4) { node live(1) lastHeartbeatMs(8) reason(1: 0 none, 1 + ordinal)
 *                                      incarnation(8) draining(1) }
 *     ctag 4 AppendHistory  vhost name htag hbody
 *       htag 1 Created               spec
 *       htag 2 RecoveryPending       epoch(8) owner count(4) { follower }
 *       htag 3 SealReceived          epoch(8) node endEpoch(8) endOffset(8) durableOffset(8)
 *       htag 4 RecoveryPointChosen   epoch(8) pointEpoch(8) pointOffset(8)
 *       htag 5 MemberInstalled       epoch(8) node
 *       htag 6 Activated             epoch(8)
 *       htag 7 FollowerAdded         epoch(8) node
 *       htag 8 FollowerLeaving       epoch(8) node
 *       htag 9 FollowerDropped       epoch(8) node
 *     ctag 5 SetSettings    count(4) { name value } in name order
 *     ctag 6 Batch          count(4) { ctag cbody } (no batch inside, at least one)
 *   tag 12       := SetDraining: node draining(1)
 *   tag 13       := Bootstrap: user
 *   tag 14       := Fenced: leaderTerm(8) tag body (no fenced command inside)
 * </pre>
 *
 * <p>Decoding never trusts a length: every count is checked against the bytes left before anything is allocated, and
 * nested argument values are limited in depth. Values the coordination records refuse (a negative epoch, a blank node
 * id, a live node with a down reason) are refused as bad bytes too.
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
    private static final byte COORDINATION = 11;
    private static final byte SET_DRAINING = 12;
    private static final byte BOOTSTRAP = 13;
    private static final byte FENCED = 14;
    private static final byte DELETE_UNUSED_QUEUE = 15;

    private static final byte CREATE_OBJECT = 1;
    private static final byte DELETE_OBJECT = 2;
    private static final byte COMMIT_LIVE_SET = 3;
    private static final byte APPEND_HISTORY = 4;
    private static final byte SET_SETTINGS = 5;
    private static final byte BATCH = 6;

    private static final byte H_CREATED = 1;
    private static final byte H_RECOVERY_PENDING = 2;
    private static final byte H_SEAL_RECEIVED = 3;
    private static final byte H_RECOVERY_POINT_CHOSEN = 4;
    private static final byte H_MEMBER_INSTALLED = 5;
    private static final byte H_ACTIVATED = 6;
    private static final byte H_FOLLOWER_ADDED = 7;
    private static final byte H_FOLLOWER_LEAVING = 8;
    private static final byte H_FOLLOWER_DROPPED = 9;

    /** The fewest bytes an encoded {@link NodeState} takes: an empty-length node id and the fixed fields. */
    private static final int MIN_NODE_STATE_BYTES = 2 + 1 + 8 + 1 + 8 + 1;

    /** How deep argument lists and tables may nest; deeper input is refused rather than overflowing the stack. */
    private static final int MAX_VALUE_DEPTH = 32;

    private MetadataCodec() {}

    public static byte[] encode(MetadataCommand command) {
        return encoding(64, out -> {
            out.writeByte(VERSION);
            writeCommand(out, command);
        });
    }

    /**
     * Decodes one command.
     *
     * @throws MetadataCodecException if the bytes are truncated, carry an unknown version or tag, hold a value out of its
     *     range, or have trailing bytes
     */
    public static MetadataCommand decode(byte[] bytes) throws MetadataCodecException {
        return decoding(bytes, "metadata command", in -> {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new MetadataCodecException("unknown metadata command version " + version);
            }
            return readCommand(in);
        });
    }

    /** Writes {@code command}'s tag and body, without the version. */
    static void writeCommand(DataOutputStream out, MetadataCommand command) throws IOException {
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
                writeUser(out, c.user());
            }
            case Bootstrap c -> {
                out.writeByte(BOOTSTRAP);
                writeUser(out, c.user());
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
                out.writeUTF(q.home());
                out.writeInt(q.copies());
                out.writeByte(q.durability().ordinal());
            }
            case DeleteQueue c -> {
                out.writeByte(DELETE_QUEUE);
                out.writeUTF(c.vhost());
                out.writeUTF(c.name());
            }
            case DeleteUnusedQueue c -> {
                out.writeByte(DELETE_UNUSED_QUEUE);
                out.writeUTF(c.vhost());
                out.writeUTF(c.name());
                out.writeLong(c.objectId());
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
            case Coordination c -> {
                out.writeByte(COORDINATION);
                writeCoordination(out, c.command());
            }
            case SetDraining c -> {
                out.writeByte(SET_DRAINING);
                out.writeUTF(c.node());
                out.writeBoolean(c.draining());
            }
            case Fenced c -> {
                out.writeByte(FENCED);
                out.writeLong(c.leaderTerm());
                writeCommand(out, c.command());
            }
        }
    }

    private static int checkedCopies(int copies) throws MetadataCodecException {
        if (copies < 0 || copies > 255) {
            throw new MetadataCodecException("queue copies out of range: " + copies);
        }
        return copies;
    }

    private static void writeUser(DataOutputStream out, User user) throws IOException {
        out.writeUTF(user.name());
        byte[] hash = user.passwordHash();
        out.writeShort(hash.length);
        out.write(hash);
        out.writeShort(user.tags().size());
        for (String tag : user.tags()) {
            out.writeUTF(tag);
        }
    }

    private static User readUser(DataInputStream in) throws IOException, MetadataCodecException {
        String name = in.readUTF();
        byte[] hash = new byte[checkedCount(in, in.readUnsignedShort(), 1)];
        in.readFully(hash);
        int tags = checkedCount(in, in.readUnsignedShort(), 2);
        List<String> tagList = new ArrayList<>(tags);
        for (int i = 0; i < tags; i++) {
            tagList.add(in.readUTF());
        }
        return new User(name, hash, tagList);
    }

    /** Reads a command's tag and body, as {@link #writeCommand} wrote them. */
    static MetadataCommand readCommand(DataInputStream in) throws IOException, MetadataCodecException {
        int tag = in.readUnsignedByte();
        return switch (tag) {
            case PUT_VHOST -> new PutVhost(in.readUTF());
            case DELETE_VHOST -> new DeleteVhost(in.readUTF());
            case PUT_USER -> new PutUser(readUser(in));
            case BOOTSTRAP -> new Bootstrap(readUser(in));
            case DELETE_USER -> new DeleteUser(in.readUTF());
            case DECLARE_EXCHANGE -> {
                String vhost = in.readUTF();
                String name = in.readUTF();
                ExchangeType type = enumValue(ExchangeType.values(), in.readUnsignedByte(), "exchange type");
                yield new DeclareExchange(
                        vhost,
                        new Exchange(name, type, in.readBoolean(), in.readBoolean(), in.readBoolean(), readTable(in)));
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
                                readTable(in),
                                in.readUTF(),
                                checkedCopies(in.readInt()),
                                enumValue(DurabilityMode.values(), in.readUnsignedByte(), "durability mode")));
            }
            case DELETE_QUEUE -> new DeleteQueue(in.readUTF(), in.readUTF());
            case DELETE_UNUSED_QUEUE -> new DeleteUnusedQueue(in.readUTF(), in.readUTF(), in.readLong());
            case BIND -> new Bind(in.readUTF(), readBinding(in));
            case UNBIND -> new Unbind(in.readUTF(), readBinding(in));
            case COORDINATION -> new Coordination(readCoordination(in));
            case SET_DRAINING -> new SetDraining(in.readUTF(), in.readBoolean());
            case FENCED -> {
                long term = in.readLong();
                if (term < 0) {
                    throw new MetadataCodecException("negative leader term " + term);
                }
                MetadataCommand inner = readCommand(in);
                if (inner instanceof Fenced) {
                    throw new MetadataCodecException("a fenced command inside another");
                }
                yield new Fenced(term, inner);
            }
            default -> throw new MetadataCodecException("unknown metadata command tag " + tag);
        };
    }

    private static void writeCoordination(DataOutputStream out, CoordinationCommand command) throws IOException {
        switch (command) {
            case CreateObject c -> {
                out.writeByte(CREATE_OBJECT);
                writeSpec(out, c.spec());
            }
            case DeleteObject c -> {
                out.writeByte(DELETE_OBJECT);
                writeObjectId(out, c.id());
            }
            case CommitLiveSet c -> {
                out.writeByte(COMMIT_LIVE_SET);
                out.writeInt(c.changes().size());
                for (NodeState state : c.changes()) {
                    writeNodeState(out, state);
                }
            }
            case AppendHistory c -> {
                out.writeByte(APPEND_HISTORY);
                writeObjectId(out, c.id());
                writeHistoryRecord(out, c.record());
            }
            case Batch c -> {
                out.writeByte(BATCH);
                out.writeInt(c.commands().size());
                for (CoordinationCommand each : c.commands()) {
                    writeCoordination(out, each);
                }
            }
            case SetSettings c -> {
                out.writeByte(SET_SETTINGS);
                out.writeInt(c.values().size());
                for (Map.Entry<String, String> entry : new TreeMap<>(c.values()).entrySet()) {
                    out.writeUTF(entry.getKey());
                    out.writeUTF(entry.getValue());
                }
            }
        }
    }

    private static CoordinationCommand readCoordination(DataInputStream in) throws IOException, MetadataCodecException {
        int tag = in.readUnsignedByte();
        return switch (tag) {
            case CREATE_OBJECT -> new CreateObject(readSpec(in));
            case DELETE_OBJECT -> new DeleteObject(readObjectId(in));
            case COMMIT_LIVE_SET -> {
                int count = checkedCount(in, in.readInt(), MIN_NODE_STATE_BYTES);
                List<NodeState> changes = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    changes.add(readNodeState(in));
                }
                yield new CommitLiveSet(changes);
            }
            case APPEND_HISTORY -> new AppendHistory(readObjectId(in), readHistoryRecord(in));
            case SET_SETTINGS -> {
                int count = checkedCount(in, in.readInt(), 4);
                Map<String, String> values = new TreeMap<>();
                for (int i = 0; i < count; i++) {
                    String name = in.readUTF();
                    if (values.put(name, in.readUTF()) != null) {
                        throw new MetadataCodecException("setting " + name + " appears twice");
                    }
                }
                yield new SetSettings(values);
            }
            case BATCH -> {
                int count = checkedCount(in, in.readInt(), 1);
                if (count == 0) {
                    throw new MetadataCodecException("an empty batch");
                }
                List<CoordinationCommand> commands = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    CoordinationCommand each = readCoordination(in);
                    if (each instanceof Batch) {
                        throw new MetadataCodecException("a batch inside a batch");
                    }
                    commands.add(each);
                }
                yield new Batch(commands);
            }
            default -> throw new MetadataCodecException("unknown coordination command tag " + tag);
        };
    }

    static void writeHistoryRecord(DataOutputStream out, HistoryRecord record) throws IOException {
        switch (record) {
            case Created r -> {
                out.writeByte(H_CREATED);
                writeSpec(out, r.spec());
            }
            case RecoveryPending r -> {
                out.writeByte(H_RECOVERY_PENDING);
                out.writeLong(r.proposedEpoch().value());
                writeNodeId(out, r.owner());
                out.writeInt(r.followers().size());
                for (NodeId follower : r.followers()) {
                    writeNodeId(out, follower);
                }
            }
            case SealReceived r -> {
                out.writeByte(H_SEAL_RECEIVED);
                out.writeLong(r.sealedEpoch().value());
                writeNodeId(out, r.reply().node());
                writePosition(out, r.reply().logEnd());
                out.writeLong(r.reply().durableOffset());
            }
            case RecoveryPointChosen r -> {
                out.writeByte(H_RECOVERY_POINT_CHOSEN);
                out.writeLong(r.proposedEpoch().value());
                writePosition(out, r.point());
            }
            case MemberInstalled r -> {
                out.writeByte(H_MEMBER_INSTALLED);
                out.writeLong(r.epoch().value());
                writeNodeId(out, r.node());
            }
            case Activated r -> {
                out.writeByte(H_ACTIVATED);
                out.writeLong(r.epoch().value());
            }
            case FollowerAdded r -> {
                out.writeByte(H_FOLLOWER_ADDED);
                out.writeLong(r.epoch().value());
                writeNodeId(out, r.node());
            }
            case FollowerLeaving r -> {
                out.writeByte(H_FOLLOWER_LEAVING);
                out.writeLong(r.epoch().value());
                writeNodeId(out, r.node());
            }
            case FollowerDropped r -> {
                out.writeByte(H_FOLLOWER_DROPPED);
                out.writeLong(r.epoch().value());
                writeNodeId(out, r.node());
            }
        }
    }

    static HistoryRecord readHistoryRecord(DataInputStream in) throws IOException, MetadataCodecException {
        int tag = in.readUnsignedByte();
        return switch (tag) {
            case H_CREATED -> new Created(readSpec(in));
            case H_RECOVERY_PENDING -> {
                Epoch epoch = Epoch.of(in.readLong());
                NodeId owner = readNodeId(in);
                int count = checkedCount(in, in.readInt(), 2);
                List<NodeId> followers = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    followers.add(readNodeId(in));
                }
                yield new RecoveryPending(epoch, owner, followers);
            }
            case H_SEAL_RECEIVED -> {
                Epoch epoch = Epoch.of(in.readLong());
                NodeId node = readNodeId(in);
                LogPosition end = readPosition(in);
                yield new SealReceived(epoch, new SealReply(node, end, in.readLong()));
            }
            case H_RECOVERY_POINT_CHOSEN -> new RecoveryPointChosen(Epoch.of(in.readLong()), readPosition(in));
            case H_MEMBER_INSTALLED -> new MemberInstalled(Epoch.of(in.readLong()), readNodeId(in));
            case H_ACTIVATED -> new Activated(Epoch.of(in.readLong()));
            case H_FOLLOWER_ADDED -> new FollowerAdded(Epoch.of(in.readLong()), readNodeId(in));
            case H_FOLLOWER_LEAVING -> new FollowerLeaving(Epoch.of(in.readLong()), readNodeId(in));
            case H_FOLLOWER_DROPPED -> new FollowerDropped(Epoch.of(in.readLong()), readNodeId(in));
            default -> throw new MetadataCodecException("unknown history record tag " + tag);
        };
    }

    static void writeSpec(DataOutputStream out, ObjectSpec spec) throws IOException {
        writeObjectId(out, spec.id());
        out.writeByte(spec.kind().ordinal());
        out.writeInt(spec.copies());
        out.writeByte(spec.mode().ordinal());
        out.writeBoolean(spec.preferredOwner().isPresent());
        if (spec.preferredOwner().isPresent()) {
            writeNodeId(out, spec.preferredOwner().get());
        }
    }

    static ObjectSpec readSpec(DataInputStream in) throws IOException, MetadataCodecException {
        ObjectId id = readObjectId(in);
        ObjectKind kind = enumValue(ObjectKind.values(), in.readUnsignedByte(), "object kind");
        int copies = in.readInt();
        DurabilityMode mode = enumValue(DurabilityMode.values(), in.readUnsignedByte(), "durability mode");
        Optional<NodeId> preferredOwner = in.readBoolean() ? Optional.of(readNodeId(in)) : Optional.empty();
        return new ObjectSpec(id, kind, copies, mode, preferredOwner);
    }

    static void writeNodeState(DataOutputStream out, NodeState state) throws IOException {
        writeNodeId(out, state.node());
        out.writeBoolean(state.live());
        out.writeLong(state.lastHeartbeatMs());
        out.writeByte(state.reason().map(reason -> reason.ordinal() + 1).orElse(0));
        out.writeLong(state.incarnation().value());
        out.writeBoolean(state.draining());
    }

    static NodeState readNodeState(DataInputStream in) throws IOException, MetadataCodecException {
        NodeId node = readNodeId(in);
        boolean live = in.readBoolean();
        long lastHeartbeatMs = in.readLong();
        int reason = in.readUnsignedByte();
        DownReason downReason = reason == 0 ? null : enumValue(DownReason.values(), reason - 1, "down reason");
        Incarnation incarnation = new Incarnation(in.readLong());
        return new NodeState(node, live, lastHeartbeatMs, downReason, incarnation, in.readBoolean());
    }

    private static void writeObjectId(DataOutputStream out, ObjectId id) throws IOException {
        out.writeUTF(id.vhost());
        out.writeUTF(id.name());
    }

    private static ObjectId readObjectId(DataInputStream in) throws IOException {
        return new ObjectId(in.readUTF(), in.readUTF());
    }

    private static void writeNodeId(DataOutputStream out, NodeId node) throws IOException {
        out.writeUTF(node.value());
    }

    private static NodeId readNodeId(DataInputStream in) throws IOException {
        return new NodeId(in.readUTF());
    }

    private static void writePosition(DataOutputStream out, LogPosition position) throws IOException {
        out.writeLong(position.epoch().value());
        out.writeLong(position.offset());
    }

    private static LogPosition readPosition(DataInputStream in) throws IOException {
        return new LogPosition(Epoch.of(in.readLong()), in.readLong());
    }

    /** Writes to memory. */
    interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    /** Reads from memory; may refuse what it reads. */
    interface Reader<T> {
        T read(DataInputStream in) throws IOException, MetadataCodecException;
    }

    static byte[] encoding(int sizeHint, Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(sizeHint);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return bytes.toByteArray();
    }

    /**
     * Runs {@code reader} over all of {@code bytes}; whatever goes wrong (truncation, a value a record refuses, trailing
     * bytes) becomes a {@link MetadataCodecException} naming {@code what}.
     */
    static <T> T decoding(byte[] bytes, String what, Reader<T> reader) throws MetadataCodecException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            T value = reader.read(in);
            if (in.available() > 0) {
                throw new MetadataCodecException(in.available() + " trailing bytes after " + what + " " + value);
            }
            return value;
        } catch (EOFException e) {
            throw new MetadataCodecException("truncated " + what, e);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new MetadataCodecException("invalid " + what + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new MetadataCodecException("malformed " + what + ": " + e.getMessage(), e);
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
        return readTable(in, 0);
    }

    private static Map<String, Object> readTable(DataInputStream in, int depth)
            throws IOException, MetadataCodecException {
        if (depth > MAX_VALUE_DEPTH) {
            throw new MetadataCodecException("argument values nested deeper than " + MAX_VALUE_DEPTH);
        }
        int size = checkedCount(in, in.readInt(), 3);
        Map<String, Object> table = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            String key = in.readUTF();
            table.put(key, readValue(in, depth));
        }
        return java.util.Collections.unmodifiableMap(table);
    }

    private static Object readValue(DataInputStream in, int depth) throws IOException, MetadataCodecException {
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
                if (depth >= MAX_VALUE_DEPTH) {
                    throw new MetadataCodecException("argument values nested deeper than " + MAX_VALUE_DEPTH);
                }
                for (int i = 0; i < size; i++) {
                    list.add(readValue(in, depth + 1));
                }
                yield java.util.Collections.unmodifiableList(list);
            }
            case V_MAP -> readTable(in, depth + 1);
            default -> throw new MetadataCodecException("unknown argument value tag " + tag);
        };
    }

    /** A count read from the input, checked against the bytes left (each element needs at least {@code minBytes}). */
    static int checkedCount(DataInputStream in, int count, int minBytes) throws IOException, MetadataCodecException {
        if (count < 0 || (long) count * minBytes > in.available()) {
            throw new MetadataCodecException("count " + count + " exceeds the " + in.available() + " bytes left");
        }
        return count;
    }

    static <E> E enumValue(E[] values, int ordinal, String what) throws MetadataCodecException {
        if (ordinal >= values.length) {
            throw new MetadataCodecException("unknown " + what + " " + ordinal);
        }
        return values[ordinal];
    }
}
