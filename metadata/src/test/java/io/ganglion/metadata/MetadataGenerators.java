package io.ganglion.metadata;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.CoordinationCommand.CreateObject;
import io.ganglion.coordination.CoordinationCommand.DeleteObject;
import io.ganglion.coordination.CoordinationCommand.SetSettings;
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
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.SealReply;
import io.ganglion.coordination.Setting;
import io.ganglion.metadata.MetadataCommand.Coordination;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * Seeded generators of metadata commands and images. A failing test names its seed; rerun it with that seed alone.
 */
final class MetadataGenerators {
    private static final String[] VHOSTS = {"/", "v1", "ünï"};
    private static final String[] NAMES = {"a", "b", "orders", "x.y"};

    private MetadataGenerators() {}

    static NodeId node(SplittableRandom random) {
        return NodeId.of("n" + random.nextInt(6));
    }

    static ObjectId objectId(SplittableRandom random) {
        return ObjectId.of(VHOSTS[random.nextInt(VHOSTS.length)], NAMES[random.nextInt(NAMES.length)]);
    }

    static ObjectSpec spec(SplittableRandom random) {
        return new ObjectSpec(
                objectId(random),
                ObjectKind.values()[random.nextInt(ObjectKind.values().length)],
                random.nextInt(1, 6),
                DurabilityMode.values()[random.nextInt(DurabilityMode.values().length)],
                random.nextBoolean() ? Optional.empty() : Optional.of(NodeId.of("n" + random.nextInt(5))));
    }

    static Epoch epoch(SplittableRandom random) {
        return random.nextInt(8) == 0 ? Epoch.of(random.nextLong(0, Long.MAX_VALUE)) : Epoch.of(random.nextInt(5));
    }

    static LogPosition position(SplittableRandom random) {
        return random.nextInt(5) == 0
                ? LogPosition.EMPTY
                : new LogPosition(epoch(random), random.nextLong(-1, 1 << 20));
    }

    static NodeState nodeState(SplittableRandom random) {
        NodeState state = NodeState.live(
                node(random), new Incarnation(random.nextLong()), random.nextLong(), random.nextBoolean());
        return switch (random.nextInt(3)) {
            case 0 -> state;
            case 1 -> state.down(DownReason.LIVENESS_EXPIRY);
            default -> state.down(DownReason.EAGER_FAILOVER);
        };
    }

    /** Any history record, with values in range but not necessarily fitting any history. */
    static HistoryRecord historyRecord(SplittableRandom random) {
        return switch (random.nextInt(9)) {
            case 0 -> new HistoryRecord.Created(spec(random));
            case 1 -> {
                NodeId owner = node(random);
                List<NodeId> followers = new ArrayList<>();
                for (int i = random.nextInt(4); i > 0; i--) {
                    NodeId follower = node(random);
                    if (!follower.equals(owner) && !followers.contains(follower)) {
                        followers.add(follower);
                    }
                }
                yield new HistoryRecord.RecoveryPending(epoch(random), owner, followers);
            }
            case 2 ->
                new HistoryRecord.SealReceived(
                        epoch(random), new SealReply(node(random), position(random), random.nextLong()));
            case 3 -> new HistoryRecord.RecoveryPointChosen(epoch(random), position(random));
            case 4 -> new HistoryRecord.MemberInstalled(epoch(random), node(random));
            case 5 -> new HistoryRecord.FollowerAdded(epoch(random), node(random));
            case 6 -> new HistoryRecord.FollowerLeaving(epoch(random), node(random));
            case 7 -> new HistoryRecord.FollowerDropped(epoch(random), node(random));
            default -> new HistoryRecord.Activated(epoch(random));
        };
    }

    /** Any coordination command, with values in range but not necessarily accepted by an image. */
    static CoordinationCommand coordinationCommand(SplittableRandom random) {
        return switch (random.nextInt(5)) {
            case 0 -> new CreateObject(spec(random));
            case 1 -> new DeleteObject(objectId(random));
            case 2 -> {
                List<NodeState> changes = new ArrayList<>();
                for (int i = random.nextInt(5); i > 0; i--) {
                    changes.add(nodeState(random));
                }
                yield new CommitLiveSet(changes);
            }
            case 3 -> new AppendHistory(objectId(random), historyRecord(random));
            default -> new SetSettings(settings(random));
        };
    }

    /** Valid values for a few settings (heartbeat below expiry, backoff min below max). */
    static Map<String, String> settings(SplittableRandom random) {
        Map<String, String> values = new LinkedHashMap<>();
        List<Setting> all = RuntimeSettings.all();
        for (int i = random.nextInt(4); i > 0; i--) {
            Setting setting = all.get(random.nextInt(all.size()));
            if (setting == RuntimeSettings.HEARTBEAT_MS
                    || setting == RuntimeSettings.EXPIRY_MS
                    || setting == RuntimeSettings.BACKOFF_MIN_MS
                    || setting == RuntimeSettings.BACKOFF_MAX_MS) {
                continue;
            }
            values.put(setting.name(), Long.toString(random.nextLong(setting.min(), setting.max() + 1)));
        }
        if (random.nextBoolean()) {
            long heartbeat = random.nextLong(10, 500);
            values.put(RuntimeSettings.HEARTBEAT_MS.name(), Long.toString(heartbeat));
            values.put(RuntimeSettings.EXPIRY_MS.name(), "1_000");
        }
        return values;
    }

    /** A topology command over a few names, so that many of them are accepted. */
    static MetadataCommand topologyCommand(SplittableRandom random) {
        String vhost = VHOSTS[random.nextInt(VHOSTS.length)];
        String name = NAMES[random.nextInt(NAMES.length)];
        return switch (random.nextInt(12)) {
            case 0, 1 -> new MetadataCommand.PutVhost(vhost);
            case 2 -> new MetadataCommand.DeleteVhost(vhost);
            case 3 ->
                new MetadataCommand.PutUser(
                        User.withPassword(name, "pw" + random.nextInt(3), new byte[] {1, 2, 3, 4}, List.of("t")));
            case 4 ->
                new MetadataCommand.DeclareExchange(
                        vhost,
                        new Exchange(
                                "e-" + name,
                                ExchangeType.values()[random.nextInt(4)],
                                true,
                                random.nextInt(4) == 0,
                                false,
                                Map.of("k", (long) random.nextInt(2))));
            case 5 -> new MetadataCommand.DeleteExchange(vhost, "e-" + name, random.nextBoolean());
            case 6, 7 ->
                new MetadataCommand.DeclareQueue(
                        vhost,
                        new QueueDef(
                                "q-" + name,
                                random.nextLong(1, Long.MAX_VALUE),
                                QueueType.values()[random.nextInt(2)],
                                true,
                                "",
                                false,
                                Map.of()));
            case 8 -> new MetadataCommand.DeleteQueue(vhost, "q-" + name);
            case 9, 10 ->
                new MetadataCommand.Bind(
                        vhost,
                        new Binding(
                                random.nextBoolean() ? "amq.topic" : "e-" + name,
                                random.nextInt(4) == 0
                                        ? Destination.exchange("e-" + NAMES[random.nextInt(NAMES.length)])
                                        : Destination.queue("q-" + NAMES[random.nextInt(NAMES.length)]),
                                "k." + random.nextInt(3),
                                Map.of()));
            default ->
                new MetadataCommand.Unbind(
                        vhost,
                        new Binding(
                                "amq.topic",
                                Destination.queue("q-" + NAMES[random.nextInt(NAMES.length)]),
                                "k." + random.nextInt(3),
                                Map.of()));
        };
    }

    /**
     * The records of an object's life up to a random point: a first epoch (pending, point, installs, activation, a late
     * install), then a recovery to epoch 2 with a new owner (pending, seals, point, installs, activation). Every prefix
     * is a valid history; the same record twice is accepted and changes nothing.
     */
    static List<HistoryRecord> lifecycle(SplittableRandom random, ObjectSpec spec) {
        List<NodeId> nodes = new ArrayList<>(List.of(
                NodeId.of("n0"), NodeId.of("n1"), NodeId.of("n2"), NodeId.of("n3"), NodeId.of("n4"), NodeId.of("n5")));
        Collections.shuffle(nodes, new Random(random.nextLong()));
        int copies = Math.min(spec.copies(), 3);
        List<NodeId> first = nodes.subList(0, copies);
        List<NodeId> second = new ArrayList<>(nodes.subList(1, copies + 1));
        Epoch one = Epoch.of(1);
        Epoch two = Epoch.of(2);
        List<HistoryRecord> records = new ArrayList<>();
        records.add(new HistoryRecord.RecoveryPending(one, first.get(0), first.subList(1, copies)));
        records.add(new HistoryRecord.RecoveryPointChosen(one, LogPosition.EMPTY));
        for (NodeId member : first) {
            records.add(new HistoryRecord.MemberInstalled(one, member));
        }
        records.add(Math.min(2 + spec.writeRequirement(), records.size()), new HistoryRecord.Activated(one));
        records.add(new HistoryRecord.RecoveryPending(two, second.get(0), second.subList(1, copies)));
        long offset = random.nextLong(5, 1000);
        LogPosition highest = LogPosition.EMPTY;
        for (NodeId member : first) {
            LogPosition end = LogPosition.of(1, offset--);
            highest = end.compareTo(highest) > 0 ? end : highest;
            records.add(new HistoryRecord.SealReceived(one, new SealReply(member, end, end.offset())));
        }
        records.add(new HistoryRecord.RecoveryPointChosen(two, highest));
        for (NodeId member : second) {
            records.add(new HistoryRecord.MemberInstalled(two, member));
        }
        records.add(new HistoryRecord.Activated(two));
        return records.subList(0, random.nextInt(records.size() + 1));
    }

    /** An image reached by {@code steps} random topology and coordination commands, histories grown by lifecycles. */
    static MetadataImage image(SplittableRandom random, int steps) {
        MetadataImage image = MetadataImage.empty();
        for (int i = 0; i < steps; i++) {
            int roll = random.nextInt(10);
            if (roll < 6) {
                image = image.apply(topologyCommand(random)).image();
            } else if (roll < 8) {
                ObjectSpec spec = spec(random);
                image = image.apply(new Coordination(new CreateObject(spec))).image();
                for (HistoryRecord record : lifecycle(random, spec)) {
                    image = image.apply(new Coordination(new AppendHistory(spec.id(), record)))
                            .image();
                }
            } else {
                image = image.apply(new Coordination(coordinationCommand(random)))
                        .image();
            }
        }
        return image;
    }
}
