package io.ganglion.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DownReason;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.coordination.SealReply;
import io.ganglion.metadata.MetadataCommand.Bind;
import io.ganglion.metadata.MetadataCommand.Coordination;
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
import io.ganglion.queues.routing.FieldValues;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class MetadataCodecTest {

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 400);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripEveryCommand(long seed) throws MetadataCodecException {
        SplittableRandom random = new SplittableRandom(seed);
        MetadataCommand command = randomCommand(random);
        MetadataCommand decoded = MetadataCodec.decode(MetadataCodec.encode(command));
        assertThat(MetadataCodec.encode(decoded))
                .as("seed %d: %s", seed, command)
                .isEqualTo(MetadataCodec.encode(command));
        if (command instanceof DeclareQueue declare) {
            assertThat(FieldValues.equal(
                            declare.queue().arguments(),
                            ((DeclareQueue) decoded).queue().arguments()))
                    .isTrue();
        }
    }

    /** Every prefix of a valid command, and random corruption, is refused with the checked exception only. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRefuseTruncatedAndCorruptBytesCleanly(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] valid = MetadataCodec.encode(randomCommand(random));
        for (int cut = 0; cut < valid.length; cut++) {
            byte[] prefix = Arrays.copyOf(valid, cut);
            assertThatThrownBy(() -> MetadataCodec.decode(prefix)).isInstanceOf(MetadataCodecException.class);
        }
        for (int i = 0; i < 50; i++) {
            byte[] corrupt = valid.clone();
            corrupt[random.nextInt(corrupt.length)] = (byte) random.nextInt(256);
            try {
                MetadataCodec.decode(corrupt);
            } catch (MetadataCodecException expected) {
                // refused cleanly
            }
        }
    }

    /** Coordination commands are values all the way down: the decoded command equals the original. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripCoordinationCommandsToEqualCommands(long seed) throws MetadataCodecException {
        SplittableRandom random = new SplittableRandom(seed);
        Coordination command = new Coordination(MetadataGenerators.coordinationCommand(random));
        assertRoundTripsEqual(command, "seed " + seed);
    }

    /** One of each coordination command and history record, with the edge values of each field. */
    @Test
    void shouldRoundTripEveryCoordinationCommandAndHistoryRecordType() throws MetadataCodecException {
        ObjectId id = ObjectId.of("/", "q");
        NodeId n1 = NodeId.of("n1");
        NodeId n2 = NodeId.of("n2");
        List<CoordinationCommand> commands = List.of(
                new CoordinationCommand.CreateObject(
                        new ObjectSpec(id, ObjectKind.STREAM, Integer.MAX_VALUE, DurabilityMode.ALL_DURABLE)),
                new CoordinationCommand.DeleteObject(ObjectId.of("", "")),
                new CoordinationCommand.CommitLiveSet(List.of(
                        NodeState.live(n1, new Incarnation(Long.MIN_VALUE), Long.MAX_VALUE, true),
                        NodeState.live(n2, new Incarnation(-1), 0, false).down(DownReason.EAGER_FAILOVER),
                        NodeState.live(NodeId.of("n3"), new Incarnation(7), -5, false)
                                .down(DownReason.LIVENESS_EXPIRY))),
                new CoordinationCommand.CommitLiveSet(List.of()),
                new CoordinationCommand.SetSettings(Map.of(
                        "replication.follower_loss_hold_ms", "0", "liveness.expiry_ms", "1_000", "unknown", "x")),
                new CoordinationCommand.AppendHistory(
                        id,
                        new HistoryRecord.Created(
                                new ObjectSpec(id, ObjectKind.QUEUE, 1, DurabilityMode.OWNER_DURABLE))),
                new CoordinationCommand.AppendHistory(
                        id, new HistoryRecord.RecoveryPending(Epoch.of(Long.MAX_VALUE), n1, List.of(n2))),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.RecoveryPending(Epoch.NONE, n1, List.of())),
                new CoordinationCommand.AppendHistory(
                        id,
                        new HistoryRecord.SealReceived(
                                Epoch.of(3), new SealReply(n2, LogPosition.of(3, Long.MAX_VALUE), Long.MIN_VALUE))),
                new CoordinationCommand.AppendHistory(
                        id, new HistoryRecord.RecoveryPointChosen(Epoch.of(4), LogPosition.EMPTY)),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.MemberInstalled(Epoch.of(4), n2)),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.Activated(Epoch.of(4))),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.FollowerAdded(Epoch.of(4), n1)),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.FollowerLeaving(Epoch.of(4), n1)),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.FollowerDropped(Epoch.of(4), n1)));
        for (CoordinationCommand command : commands) {
            Coordination wrapped = new Coordination(command);
            assertRoundTripsEqual(wrapped, command.toString());
        }
    }

    /** A controller's tick in one entry: the commands come back in order; a nested or empty batch is bad bytes. */
    @Test
    void shouldRoundTripABatchAndRefuseANestedOrEmptyOne() throws MetadataCodecException {
        ObjectId id = ObjectId.of("/", "q");
        NodeId n1 = NodeId.of("n1");
        Coordination batch = new Coordination(new CoordinationCommand.Batch(List.of(
                new CoordinationCommand.CommitLiveSet(
                        List.of(NodeState.live(n1, new Incarnation(3), 9, false).down(DownReason.EAGER_FAILOVER))),
                new CoordinationCommand.AppendHistory(
                        id, new HistoryRecord.RecoveryPending(Epoch.of(2), NodeId.of("n2"), List.of())),
                new CoordinationCommand.AppendHistory(id, new HistoryRecord.Activated(Epoch.of(2))))));
        byte[] bytes = MetadataCodec.encode(batch);
        assertThat(MetadataCodec.decode(bytes)).isEqualTo(batch);

        // version, tag 11, ctag 6, count(4), then the first command's ctag: make it a batch (ctag 6) too
        byte[] nested = bytes.clone();
        nested[7] = 6;
        assertThatThrownBy(() -> MetadataCodec.decode(nested)).isInstanceOf(MetadataCodecException.class);
        byte[] empty = java.util.Arrays.copyOf(bytes, 7);
        empty[3] = 0;
        empty[4] = 0;
        empty[5] = 0;
        empty[6] = 0;
        assertThatThrownBy(() -> MetadataCodec.decode(empty))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("empty batch");
        assertThatThrownBy(() -> new CoordinationCommand.Batch(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    /** A controller's entry with the term it leads in: equal after a round trip; nested or negative is bad bytes. */
    @Test
    void shouldRoundTripAFencedCommandAndRefuseANestedOrNegativeOne() throws MetadataCodecException {
        MetadataCommand.Fenced fenced = new MetadataCommand.Fenced(
                Long.MAX_VALUE,
                new Coordination(new CoordinationCommand.CommitLiveSet(
                        List.of(NodeState.live(NodeId.of("n1"), new Incarnation(2), 5, false)))));
        byte[] bytes = MetadataCodec.encode(fenced);
        assertThat(MetadataCodec.decode(bytes)).isEqualTo(fenced);
        assertRoundTripsEqual(new MetadataCommand.Fenced(0, new PutVhost("/")), "fenced at term 0");

        // version, tag 14, term(8), then the command's tag: make it a fenced one (tag 14) too
        byte[] nested = java.util.Arrays.copyOf(bytes, bytes.length + 9);
        System.arraycopy(bytes, 1, nested, 10, bytes.length - 1);
        assertThat(nested[10]).isEqualTo((byte) 14);
        assertThatThrownBy(() -> MetadataCodec.decode(nested))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("fenced command inside another");
        byte[] negative = bytes.clone();
        negative[2] = (byte) 0x80;
        assertThatThrownBy(() -> MetadataCodec.decode(negative))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("negative leader term");
        assertThatThrownBy(() -> new MetadataCommand.Fenced(1, fenced)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MetadataCommand.Fenced(-1, new PutVhost("/")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Bytes that frame correctly but hold a value the coordination records refuse are bad bytes too. */
    @Test
    void shouldRefuseOutOfRangeCoordinationValues() {
        byte[] activated = MetadataCodec.encode(new Coordination(new CoordinationCommand.AppendHistory(
                ObjectId.of("v", "q"), new HistoryRecord.Activated(Epoch.of(1)))));
        byte[] negativeEpoch = activated.clone();
        negativeEpoch[negativeEpoch.length - 8] = (byte) 0x80;
        assertThatThrownBy(() -> MetadataCodec.decode(negativeEpoch))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("epoch must not be negative");

        byte[] live = MetadataCodec.encode(new Coordination(new CoordinationCommand.CommitLiveSet(
                List.of(NodeState.live(NodeId.of("n"), new Incarnation(1), 2, false)))));
        byte[] liveWithReason = live.clone();
        liveWithReason[live.length - 10] = 1; // the down reason byte, before incarnation (8) and draining (1)
        assertThatThrownBy(() -> MetadataCodec.decode(liveWithReason))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("down reason");

        byte[] hugeCount = live.clone();
        hugeCount[3] = 0x7f; // CommitLiveSet count, after version, tag and coordination tag
        assertThatThrownBy(() -> MetadataCodec.decode(hugeCount))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("exceeds");

        byte[] unknownTag = live.clone();
        unknownTag[2] = 99;
        assertThatThrownBy(() -> MetadataCodec.decode(unknownTag))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("unknown coordination command tag 99");
    }

    /** Deeply nested argument values are refused, not a stack overflow. */
    @Test
    void shouldRefuseArgumentsNestedTooDeep() {
        Object value = 1L;
        for (int i = 0; i < 40; i++) {
            value = List.of(value);
        }
        byte[] deep = MetadataCodec.encode(new DeclareExchange(
                "/", new Exchange("e", ExchangeType.DIRECT, true, false, false, Map.of("deep", value))));
        assertThatThrownBy(() -> MetadataCodec.decode(deep))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("nested deeper");
    }

    private static MetadataCommand randomCommand(SplittableRandom random) {
        String vhost = word(random);
        return switch (random.nextInt(16)) {
            case 0 -> new PutVhost(vhost);
            case 1 -> new DeleteVhost(vhost);
            case 2 ->
                new PutUser(
                        User.withPassword(word(random), word(random), new byte[] {1, 2, 3, 4}, List.of(word(random))));
            case 3 -> new DeleteUser(word(random));
            case 4 ->
                new DeclareExchange(
                        vhost,
                        new Exchange(
                                word(random),
                                ExchangeType.values()[random.nextInt(4)],
                                random.nextBoolean(),
                                random.nextBoolean(),
                                random.nextBoolean(),
                                table(random, 2)));
            case 5 -> new DeleteExchange(vhost, word(random), random.nextBoolean());
            case 6 ->
                new DeclareQueue(
                        vhost,
                        new QueueDef(
                                word(random),
                                random.nextLong(1, Long.MAX_VALUE),
                                QueueType.values()[random.nextInt(2)],
                                random.nextBoolean(),
                                random.nextBoolean() ? "" : word(random),
                                random.nextBoolean(),
                                table(random, 2),
                                random.nextBoolean() ? "" : word(random),
                                random.nextInt(6),
                                io.ganglion.coordination.DurabilityMode.values()[random.nextInt(3)]));
            case 7 -> new DeleteQueue(vhost, word(random));
            case 8 -> new Bind(vhost, binding(random));
            case 9 -> new Unbind(vhost, binding(random));
            case 10 -> new MetadataCommand.SetDraining(word(random), random.nextBoolean());
            case 11 ->
                new MetadataCommand.Bootstrap(
                        User.withPassword(word(random), word(random), new byte[] {5, 6, 7, 8}, List.of(word(random))));
            case 12 -> new MetadataCommand.DeleteUnusedQueue(vhost, word(random), random.nextLong());
            case 13 -> new MetadataCommand.Fenced(random.nextLong(0, Long.MAX_VALUE), randomUnfenced(random));
            default -> new Coordination(MetadataGenerators.coordinationCommand(random));
        };
    }

    private static MetadataCommand randomUnfenced(SplittableRandom random) {
        MetadataCommand command = randomCommand(random);
        return command instanceof MetadataCommand.Fenced fenced ? fenced.command() : command;
    }

    private static Binding binding(SplittableRandom random) {
        Destination destination =
                random.nextBoolean() ? Destination.queue(word(random)) : Destination.exchange(word(random));
        return new Binding(word(random), destination, word(random), table(random, 2));
    }

    private static Map<String, Object> table(SplittableRandom random, int depth) {
        Map<String, Object> table = new HashMap<>();
        int size = random.nextInt(4);
        for (int i = 0; i < size; i++) {
            table.put(word(random) + i, value(random, depth));
        }
        return table;
    }

    private static Object value(SplittableRandom random, int depth) {
        return switch (random.nextInt(depth > 0 ? 12 : 10)) {
            case 0 -> word(random);
            case 1 -> random.nextLong();
            case 2 -> random.nextInt();
            case 3 -> random.nextBoolean();
            case 4 -> random.nextDouble();
            case 5 -> (float) random.nextDouble();
            case 6 -> new byte[] {(byte) random.nextInt(), 0, 7};
            case 7 -> BigDecimal.valueOf(random.nextInt(100000), random.nextInt(5));
            case 8 -> (short) random.nextInt(1000);
            case 9 -> (byte) random.nextInt(100);
            case 10 -> {
                List<Object> list = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    list.add(value(random, depth - 1));
                }
                yield list;
            }
            default -> table(random, depth - 1);
        };
    }

    private static String word(SplittableRandom random) {
        String[] words = {"", "a", "orders", "amq.gen-x", "ünïcödé", "/", "x.y.#"};
        return words[random.nextInt(words.length)];
    }

    /** {@code command} encoded then decoded is equal to it. */
    private static void assertRoundTripsEqual(MetadataCommand command, String description)
            throws MetadataCodecException {
        assertThat(MetadataCodec.decode(MetadataCodec.encode(command)))
                .as(description)
                .isEqualTo(command);
    }
}
