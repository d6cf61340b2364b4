package io.ganglion.broker.peer;

import io.ganglion.broker.peer.PeerMessage.Append;
import io.ganglion.broker.peer.PeerMessage.Fetch;
import io.ganglion.broker.peer.PeerMessage.FetchReply;
import io.ganglion.broker.peer.PeerMessage.Forward;
import io.ganglion.broker.peer.PeerMessage.ForwardOutcome;
import io.ganglion.broker.peer.PeerMessage.Heartbeat;
import io.ganglion.broker.peer.PeerMessage.Hello;
import io.ganglion.broker.peer.PeerMessage.InstallReply;
import io.ganglion.broker.peer.PeerMessage.InstallRequest;
import io.ganglion.broker.peer.PeerMessage.Progress;
import io.ganglion.broker.peer.PeerMessage.RecoveryCommand;
import io.ganglion.broker.peer.PeerMessage.Replication;
import io.ganglion.broker.peer.PeerMessage.SealReply;
import io.ganglion.broker.peer.PeerMessage.SealRequest;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RecoveryRequest;
import io.ganglion.queues.StreamStart;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Peer messages for tests: one fixed sample of every type, and a seeded generator of random ones. The same seed gives
 * the same messages, so a failing seed reproduces.
 */
final class PeerMessages {
    /** Characters of 1, 2, 3 and 4 (a surrogate pair) UTF-8 octets. */
    private static final String[] TEXT = {"a", "Z", "0", "-", ".", "/", " ", "é", "ß", "€", "中", "\uD834\uDD1E"};

    static final NodeId N1 = NodeId.of("ganglion-1");
    static final NodeId N2 = NodeId.of("ganglion-2");
    static final ObjectId Q = ObjectId.of("/", "orders");

    private final SplittableRandom random;

    PeerMessages(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** One message of each type, with fixed values. */
    static List<PeerMessage> samples() {
        return List.of(
                new Hello("ganglion", N1, new Incarnation(0x0102030405060708L)),
                new Heartbeat(N1, new Incarnation(-1), true, 1_700_000_000_000L),
                new Forward(N2, 7, 42, 3, Q, new byte[] {1, 2, 3}),
                new ForwardOutcome(7, 42, Q, false, "epoch changed"),
                new Append(Q, 3, 100, List.of(new byte[] {9}, new byte[0], new byte[] {1, 2}), 99),
                new Progress(Q, 3, N2, new Incarnation(5), 101),
                new SealRequest(Q, 3),
                new SealReply(Q, 3, 2, -1, -1, N2),
                new InstallRequest(Q, 4, 3, 101, N1),
                new InstallReply(Q, 4, N2, true, ""),
                new Fetch(Q, 50, 1 << 20),
                new FetchReply(Q, 50, List.of(new byte[] {4, 5}, new byte[] {6}), List.of(2L, 3L)),
                new PeerMessage.PublishToHome(3, 9, 8, 77, new byte[] {1, 2}),
                new PeerMessage.PublishToHomeOutcome(9, 404, "queue gone"),
                new PeerMessage.Subscribe(10, 77, 11, "ctag-1", false, true, 50, StreamStart.at(4096)),
                new PeerMessage.Deliver(11, 1234, true, new byte[] {3}),
                new PeerMessage.Settle(77, List.of(1L, 2L, 5L), 2),
                new PeerMessage.CancelConsumer(77, 11),
                new PeerMessage.ConsumerCancelled(11),
                new PeerMessage.QueueCall(12, 77, 3, 0),
                new PeerMessage.QueueReply(12, 0, "", 5, 1, 1234, false, new byte[] {7, 8}),
                REPLICATE,
                new RecoveryCommand(
                        new RecoveryRequest.Install(Q, Epoch.of(4), N2, LogPosition.of(3, 101), List.of(N1, N2))),
                new PeerMessage.DropReply(Q, 4, N1, N2));
    }

    /** A Replication frame of each kind of replication message, with fixed values. */
    static final Replication REPLICATE = new Replication(
            Q,
            new io.ganglion.replication.PeerMessage.Replicate(
                    Epoch.of(3),
                    -1,
                    List.of(
                            new Record.EpochStart(Epoch.of(3), 100),
                            new Record.Message(
                                    Epoch.of(3),
                                    101,
                                    new PublishId(7, 42),
                                    ByteBuffer.wrap(new byte[] {1, 2}),
                                    1_700_000_000_001L),
                            new Record.Settle(Epoch.of(3), 102, 101),
                            new Record.Settle(Epoch.of(3), 103, new long[] {99, 100}),
                            new Record.Returned(Epoch.of(3), 104, new long[] {101})),
                    1_700_000_000_123L,
                    90));

    static List<Replication> replicationSamples() {
        EpochHistory history = EpochHistory.of(1, 0, 3, 100);
        return List.of(
                REPLICATE,
                new Replication(
                        Q,
                        new io.ganglion.replication.PeerMessage.Progress(
                                Epoch.of(3), new Incarnation(5), history, 102, 101, true, 1_700_000_000_123L)),
                new Replication(
                        Q,
                        new io.ganglion.replication.PeerMessage.Fetch(
                                Epoch.of(4), history, 102, LogPosition.of(3, 101))),
                new Replication(
                        Q,
                        new io.ganglion.replication.PeerMessage.FetchReply(
                                Epoch.of(4), 100, List.of(new Record.EpochStart(Epoch.of(3), 100)))),
                new Replication(
                        Q, new io.ganglion.replication.PeerMessage.Snapshot(Epoch.of(3), 50, EpochHistory.EMPTY)));
    }

    static List<RecoveryCommand> recoverySamples() {
        return List.of(
                new RecoveryCommand(new RecoveryRequest.Seal(Q, Epoch.of(3), N2)),
                new RecoveryCommand(new RecoveryRequest.Install(Q, Epoch.of(4), N2, LogPosition.EMPTY, List.of())),
                new RecoveryCommand(new RecoveryRequest.CatchUp(Q, Epoch.of(4), N2, N1)),
                new RecoveryCommand(new RecoveryRequest.Drop(Q, Epoch.of(4), N1, N2)));
    }

    /** The frame {@code message} encodes to, in a new heap buffer. */
    static ByteBuf frame(PeerMessage message) {
        ByteBuf out = Unpooled.buffer();
        PeerCodec.encode(message, out);
        return out;
    }

    static byte[] frameBytes(PeerMessage message) {
        ByteBuf frame = frame(message);
        try {
            return ByteBufUtil.getBytes(frame);
        } finally {
            frame.release();
        }
    }

    /** A random message of a random type. */
    PeerMessage next() {
        return next(random.nextInt(24));
    }

    /** A random message of the {@code kind}-th type, in {@link #samples()} order. */
    PeerMessage next(int kind) {
        return switch (kind) {
            case 0 -> new Hello(text(0), node(), incarnation());
            case 1 -> new Heartbeat(node(), incarnation(), random.nextBoolean(), random.nextLong());
            case 2 -> new Forward(node(), random.nextLong(), random.nextLong(), random.nextLong(), object(), bytes());
            case 3 -> new ForwardOutcome(random.nextLong(), random.nextLong(), object(), random.nextBoolean(), text(0));
            case 4 -> new Append(object(), random.nextLong(), random.nextLong(), byteList(), random.nextLong());
            case 5 -> new Progress(object(), random.nextLong(), node(), incarnation(), random.nextLong());
            case 6 -> new SealRequest(object(), random.nextLong());
            case 7 ->
                new SealReply(
                        object(), random.nextLong(), random.nextLong(), random.nextLong(), random.nextLong(), node());
            case 8 -> new InstallRequest(object(), random.nextLong(), random.nextLong(), random.nextLong(), node());
            case 9 -> new InstallReply(object(), random.nextLong(), node(), random.nextBoolean(), text(0));
            case 10 -> new Fetch(object(), random.nextLong(), random.nextInt());
            case 11 -> {
                List<byte[]> records = byteList();
                List<Long> epochs = new ArrayList<>();
                for (int i = 0; i < records.size(); i++) {
                    epochs.add(random.nextLong());
                }
                yield new FetchReply(object(), random.nextLong(), records, epochs);
            }
            case 12 ->
                new PeerMessage.PublishToHome(
                        random.nextLong(), random.nextLong(), random.nextLong(), random.nextLong(), bytes());
            case 13 -> new PeerMessage.PublishToHomeOutcome(random.nextLong(), random.nextInt(), text(0));
            case 14 ->
                new PeerMessage.Subscribe(
                        random.nextLong(),
                        random.nextLong(),
                        random.nextLong(),
                        text(0),
                        random.nextBoolean(),
                        random.nextBoolean(),
                        random.nextInt(),
                        random.nextBoolean()
                                ? new StreamStart(
                                        List.of(
                                                        StreamStart.Kind.OFFSET,
                                                        StreamStart.Kind.TIMESTAMP,
                                                        StreamStart.Kind.INTERVAL)
                                                .get(random.nextInt(3)),
                                        random.nextLong(0, Long.MAX_VALUE))
                                : new StreamStart(StreamStart.Kind.values()[random.nextInt(3)], 0));
            case 15 -> new PeerMessage.Deliver(random.nextLong(), random.nextLong(), random.nextBoolean(), bytes());
            case 16 -> {
                List<Long> offsets = new ArrayList<>();
                for (int i = random.nextInt(5); i > 0; i--) {
                    offsets.add(random.nextLong());
                }
                yield new PeerMessage.Settle(random.nextLong(), offsets, random.nextInt(3));
            }
            case 17 -> new PeerMessage.CancelConsumer(random.nextLong(), random.nextLong());
            case 18 -> new PeerMessage.ConsumerCancelled(random.nextLong());
            case 19 ->
                new PeerMessage.QueueCall(random.nextLong(), random.nextLong(), random.nextInt(), random.nextInt());
            case 20 ->
                new PeerMessage.QueueReply(
                        random.nextLong(),
                        random.nextInt(),
                        text(0),
                        random.nextLong(),
                        random.nextLong(),
                        random.nextLong(),
                        random.nextBoolean(),
                        bytes());
            case 21 -> new Replication(object(), replicationMessage());
            case 22 -> new RecoveryCommand(recoveryRequest());
            case 23 -> new PeerMessage.DropReply(object(), random.nextLong(), node(), node());
            default -> throw new IllegalArgumentException("no message kind " + kind);
        };
    }

    /** A random replication message of a random kind. */
    io.ganglion.replication.PeerMessage replicationMessage() {
        return switch (random.nextInt(5)) {
            case 0 ->
                new io.ganglion.replication.PeerMessage.Replicate(
                        epoch(), offsetOrNone(), records(), random.nextLong(), random.nextLong());
            case 1 ->
                new io.ganglion.replication.PeerMessage.Progress(
                        epoch(),
                        incarnation(),
                        history(),
                        offsetOrNone(),
                        offsetOrNone(),
                        random.nextBoolean(),
                        random.nextLong());
            case 2 -> new io.ganglion.replication.PeerMessage.Fetch(epoch(), history(), offsetOrNone(), position());
            case 3 -> new io.ganglion.replication.PeerMessage.FetchReply(epoch(), offsetOrNone(), records());
            default -> new io.ganglion.replication.PeerMessage.Snapshot(epoch(), random.nextLong(1 << 20), history());
        };
    }

    private RecoveryRequest recoveryRequest() {
        return switch (random.nextInt(4)) {
            case 0 -> new RecoveryRequest.Seal(object(), epoch(), node());
            case 2 -> new RecoveryRequest.Drop(object(), epoch(), node(), node());
            case 1 -> {
                List<NodeId> sources = new ArrayList<>();
                for (int i = random.nextInt(4); i > 0; i--) {
                    sources.add(node());
                }
                yield new RecoveryRequest.Install(object(), epoch(), node(), position(), sources);
            }
            default -> new RecoveryRequest.CatchUp(object(), epoch(), node(), node());
        };
    }

    private Epoch epoch() {
        return Epoch.of(random.nextLong(Long.MAX_VALUE));
    }

    private long offsetOrNone() {
        return random.nextInt(5) == 0 ? -1 : random.nextLong(Long.MAX_VALUE);
    }

    private LogPosition position() {
        return random.nextInt(5) == 0 ? LogPosition.EMPTY : new LogPosition(epoch(), random.nextLong(Long.MAX_VALUE));
    }

    private EpochHistory history() {
        EpochHistory history = EpochHistory.EMPTY;
        long epoch = 0;
        long offset = -1;
        for (int i = random.nextInt(5); i > 0; i--) {
            epoch += 1 + random.nextInt(3);
            offset += 1 + random.nextInt(1000);
            history = history.append(Epoch.of(epoch), offset);
        }
        return history;
    }

    private List<Record> records() {
        List<Record> records = new ArrayList<>();
        long offset = random.nextLong(1L << 40);
        Epoch epoch = epoch();
        for (int i = random.nextInt(6); i > 0; i--, offset++) {
            records.add(
                    switch (random.nextInt(5)) {
                        case 0 -> new Record.EpochStart(epoch, offset);
                        case 4 ->
                            new Record.DeadLettered(
                                    epoch,
                                    offset,
                                    random.longs(1 + random.nextInt(4)).toArray(),
                                    random.nextInt(256));
                        case 3 ->
                            new Record.Returned(
                                    epoch,
                                    offset,
                                    random.longs(1 + random.nextInt(4)).toArray());
                        case 1 ->
                            new Record.Message(
                                    epoch,
                                    offset,
                                    new PublishId(random.nextLong(), random.nextLong()),
                                    ByteBuffer.wrap(bytes()),
                                    random.nextLong());
                        default ->
                            new Record.Settle(
                                    epoch,
                                    offset,
                                    random.longs(1 + random.nextInt(4)).toArray());
                    });
        }
        return records;
    }

    int nextInt(int bound) {
        return random.nextInt(bound);
    }

    private String text(int minLength) {
        int length = minLength + random.nextInt(20);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < length; i++) {
            text.append(TEXT[random.nextInt(TEXT.length)]);
        }
        return text.toString();
    }

    private NodeId node() {
        return new NodeId("n" + text(0));
    }

    private Incarnation incarnation() {
        return new Incarnation(random.nextLong());
    }

    private ObjectId object() {
        return new ObjectId(text(0), text(0));
    }

    private byte[] bytes() {
        // mostly small, sometimes a few KiB, sometimes empty
        int length = random.nextInt(4) == 0 ? random.nextInt(8192) : random.nextInt(32);
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private List<byte[]> byteList() {
        int count = random.nextInt(6);
        List<byte[]> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            list.add(bytes());
        }
        return list;
    }
}
