package io.ganglion.metadata;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.HistoryOutcome;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.LiveSet;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.coordination.Settings;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The binary form of a whole {@link MetadataImage}: a snapshot of the metadata log.
 *
 * <pre>
 *   image    := magic(4) "GMI1" version(1) appliedIndex(8)
 *               count(4) { command tag and body }         users, vhosts, exchanges, queues, bindings
 *               count(4) { name value(8) }                 settings that differ from their defaults
 *               count(4) { node state }                    the live set
 *               count(4) { spec count(4) { record } }      objects and their histories, Created left out
 *               crc32c(4)                                  of every byte before it
 * </pre>
 *
 * <p>The topology part is the image's own {@link MetadataImage#topologyCommands()}, replayed through {@link
 * MetadataImage#apply} on decoding, so a snapshot can only rebuild an image the state machine could have reached. The
 * coordination part is rebuilt directly: settings through {@link Settings#withAll}, histories through {@link
 * AcceptedHistory#append}, each record checked again, and the objects map is built once rather than copied per object.
 * Encoding is deterministic (every collection in a fixed order), so two images with equal bytes are equal, and tests
 * compare images by their bytes.
 */
public final class MetadataImageCodec {
    private static final int MAGIC = 0x474D4931; // "GMI1"
    private static final int VERSION = 1;
    private static final int HEADER = 4 + 1 + 8;
    private static final int CRC = 4;

    private MetadataImageCodec() {}

    public static byte[] encode(MetadataImage image) {
        byte[] body = MetadataCodec.encoding(4096, out -> {
            out.writeInt(MAGIC);
            out.writeByte(VERSION);
            out.writeLong(image.appliedIndex());
            List<MetadataCommand> topology = image.topologyCommands();
            out.writeInt(topology.size());
            for (MetadataCommand command : topology) {
                MetadataCodec.writeCommand(out, command);
            }
            writeCoordination(out, image.coordination());
        });
        return ByteBuffer.allocate(body.length + CRC)
                .put(body)
                .putInt(crc(body, body.length))
                .array();
    }

    /**
     * Decodes an image.
     *
     * @throws MetadataCodecException if the bytes fail their checksum, are truncated, carry an unknown magic or version,
     *     hold a value out of its range, or describe an image the state machine refuses (a command it rejects, a
     *     history record that does not fit)
     */
    public static MetadataImage decode(byte[] bytes) throws MetadataCodecException {
        if (bytes.length < HEADER + CRC) {
            throw new MetadataCodecException("metadata image of " + bytes.length + " bytes is truncated");
        }
        int length = bytes.length - CRC;
        int stored = ByteBuffer.wrap(bytes, length, CRC).getInt();
        if (stored != crc(bytes, length)) {
            throw new MetadataCodecException("metadata image fails its checksum");
        }
        return MetadataCodec.decoding(Arrays.copyOf(bytes, length), "metadata image", in -> {
            int magic = in.readInt();
            int version = in.readUnsignedByte();
            if (magic != MAGIC || version != VERSION) {
                throw new MetadataCodecException("not a metadata image of version " + VERSION + ": magic "
                        + Integer.toHexString(magic) + ", version " + version);
            }
            long appliedIndex = in.readLong();
            if (appliedIndex < 0) {
                throw new MetadataCodecException("negative applied index " + appliedIndex);
            }
            int commands = MetadataCodec.checkedCount(in, in.readInt(), 2);
            MetadataImage image = MetadataImage.empty();
            for (int i = 0; i < commands; i++) {
                MetadataCommand command = MetadataCodec.readCommand(in);
                if (command instanceof MetadataCommand.Coordination || command instanceof MetadataCommand.Fenced) {
                    throw new MetadataCodecException(
                            command.getClass().getSimpleName() + " command in the topology part of an image");
                }
                MetadataImage.Applied applied = image.apply(command);
                if (applied.rejection().isPresent()) {
                    throw new MetadataCodecException("image command " + command + " is refused: "
                            + applied.rejection().get());
                }
                image = applied.image();
            }
            return image.withCoordination(appliedIndex, readCoordination(in));
        });
    }

    private static void writeCoordination(DataOutputStream out, CoordinationImage coordination) throws IOException {
        Map<String, Long> overrides = new TreeMap<>(coordination.settings().overrides());
        out.writeInt(overrides.size());
        for (Map.Entry<String, Long> entry : overrides.entrySet()) {
            out.writeUTF(entry.getKey());
            out.writeLong(entry.getValue());
        }
        out.writeInt(coordination.liveSet().nodes().size());
        for (NodeState state : coordination.liveSet().nodes().values()) {
            MetadataCodec.writeNodeState(out, state);
        }
        out.writeInt(coordination.objects().size());
        for (AcceptedHistory history : coordination.objects().values()) {
            MetadataCodec.writeSpec(out, history.spec());
            List<HistoryRecord> records = history.records();
            // the first record is always Created, written as the spec above
            out.writeInt(records.size() - 1);
            for (HistoryRecord record : records.subList(1, records.size())) {
                MetadataCodec.writeHistoryRecord(out, record);
            }
        }
    }

    private static CoordinationImage readCoordination(DataInputStream in) throws IOException, MetadataCodecException {
        int settingCount = MetadataCodec.checkedCount(in, in.readInt(), 10);
        Map<String, String> overrides = new TreeMap<>();
        for (int i = 0; i < settingCount; i++) {
            overrides.put(in.readUTF(), Long.toString(in.readLong()));
        }
        Settings settings = Settings.defaults().withAll(overrides);

        int nodeCount = MetadataCodec.checkedCount(in, in.readInt(), 21);
        TreeMap<NodeId, NodeState> nodes = new TreeMap<>();
        for (int i = 0; i < nodeCount; i++) {
            NodeState state = MetadataCodec.readNodeState(in);
            if (nodes.put(state.node(), state) != null) {
                throw new MetadataCodecException("node " + state.node() + " appears twice in the live set");
            }
        }

        int objectCount = MetadataCodec.checkedCount(in, in.readInt(), 11);
        TreeMap<ObjectId, AcceptedHistory> objects = new TreeMap<>();
        for (int i = 0; i < objectCount; i++) {
            ObjectSpec spec = MetadataCodec.readSpec(in);
            AcceptedHistory history = AcceptedHistory.created(spec);
            int recordCount = MetadataCodec.checkedCount(in, in.readInt(), 9);
            List<HistoryRecord> records = new ArrayList<>(recordCount);
            for (int r = 0; r < recordCount; r++) {
                records.add(MetadataCodec.readHistoryRecord(in));
            }
            for (HistoryRecord record : records) {
                history = switch (history.append(record)) {
                    case HistoryOutcome.Accepted accepted -> accepted.history();
                    case HistoryOutcome.Rejected rejected ->
                        throw new MetadataCodecException(
                                "history of " + spec.id() + " does not replay: " + record + ": " + rejected.reason());
                };
            }
            if (objects.put(spec.id(), history) != null) {
                throw new MetadataCodecException("object " + spec.id() + " appears twice");
            }
        }
        return new CoordinationImage(objects, new LiveSet(nodes), settings);
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }
}
