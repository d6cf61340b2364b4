package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.CreateObject;
import io.ganglion.coordination.HistoryRecord.MemberInstalled;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Drives {@link ControllerTick} the way the controller runtime will: applies every command it returns to the image,
 * and answers its requests as live brokers would (seal replies with a log end, install, catch-up and drop acknowledgements).
 * Time moves only when a test says so.
 */
final class TickHarness {
    CoordinationImage image = CoordinationImage.empty();
    LiveSet observed = LiveSet.empty();
    RecoveryBackoff backoff = RecoveryBackoff.none();
    long now = 1_000_000;
    final List<String> rejections = new ArrayList<>();
    final List<RecoveryRequest> sent = new ArrayList<>();
    /** Log end each node reports when sealed, per object; empty log when absent. */
    final Map<ObjectId, Map<NodeId, LogPosition>> logEnds = new HashMap<>();
    /** Brokers that receive requests but never answer (a partition the controller does not see as down). */
    final List<NodeId> silent = new ArrayList<>();

    static NodeId node(String id) {
        return NodeId.of(id);
    }

    /** The entry is one live set change: one node down by eager failover. */
    static void assertOneEagerFailover(List<CoordinationCommand> entry) {
        assertThat(entry)
                .singleElement()
                .isInstanceOfSatisfying(
                        CoordinationCommand.CommitLiveSet.class,
                        commit -> assertThat(commit.changes())
                                .singleElement()
                                .satisfies(state -> assertThat(state.reason()).contains(DownReason.EAGER_FAILOVER)));
    }

    TickHarness nodes(String... ids) {
        for (String id : ids) {
            observed = observed.heartbeat(node(id), new Incarnation(id.hashCode()), false, now);
        }
        return this;
    }

    void setting(Setting setting, long value) {
        apply(new CoordinationCommand.SetSettings(Map.of(setting.name(), Long.toString(value))));
    }

    /** Every live node heartbeats now. */
    void heartbeats() {
        for (NodeState state : observed.nodes().values()) {
            if (state.live()) {
                observed = observed.heartbeat(state.node(), state.incarnation(), state.draining(), now);
            }
        }
    }

    void kill(String id) {
        observed = observed.eagerFailover(node(id), now);
    }

    void restart(String id, long incarnation) {
        observed = observed.heartbeat(node(id), new Incarnation(incarnation), false, now);
    }

    void drain(String id) {
        NodeState state = observed.node(node(id)).orElseThrow();
        observed = observed.heartbeat(node(id), state.incarnation(), true, now);
    }

    void advance(long ms) {
        now += ms;
    }

    ObjectId create(String name, ObjectKind kind, int copies, DurabilityMode mode) {
        ObjectId id = ObjectId.of("/", name);
        apply(new CreateObject(new ObjectSpec(id, kind, copies, mode)));
        return id;
    }

    /** Creates a queue and ticks until it is activated and enrolled. */
    ObjectId activeQueue(String name, int copies, DurabilityMode mode) {
        ObjectId id = create(name, ObjectKind.QUEUE, copies, mode);
        for (int i = 0; i < 10 && !history(id).enrolled(); i++) {
            tick();
        }
        assertThat(history(id).enrolled()).as("queue %s enrolled", id).isTrue();
        return id;
    }

    AcceptedHistory history(ObjectId id) {
        return image.object(id).orElseThrow();
    }

    void apply(CoordinationCommand command) {
        CoordinationImage.Applied applied = image.apply(command);
        applied.rejection().ifPresent(rejections::add);
        image = applied.image();
    }

    /** One tick: apply its commands, answer its requests, return what it decided. */
    TickResult tick() {
        heartbeats();
        TickResult result = ControllerTick.run(image, observed, backoff, now);
        backoff = result.backoff();
        result.commands().forEach(this::apply);
        sent.addAll(result.requests());
        for (RecoveryRequest request : result.requests()) {
            if (silent.contains(request.node()) || !observed.isLive(request.node())) {
                continue;
            }
            switch (request) {
                case RecoveryRequest.Seal seal -> {
                    LogPosition end =
                            logEnds.getOrDefault(seal.object(), Map.of()).getOrDefault(seal.node(), LogPosition.EMPTY);
                    apply(new AppendHistory(
                            seal.object(),
                            new SealReceived(seal.epoch(), new SealReply(seal.node(), end, end.offset()))));
                }
                case RecoveryRequest.Install install ->
                    apply(new AppendHistory(install.object(), new MemberInstalled(install.epoch(), install.node())));
                case RecoveryRequest.CatchUp catchUp ->
                    apply(new AppendHistory(catchUp.object(), new MemberInstalled(catchUp.epoch(), catchUp.node())));
                case RecoveryRequest.Drop drop ->
                    apply(new AppendHistory(
                            drop.object(), new HistoryRecord.FollowerDropped(drop.epoch(), drop.follower())));
            }
        }
        return result;
    }

    /** Ticks {@code count} times, {@code stepMs} apart. */
    void ticks(int count, long stepMs) {
        for (int i = 0; i < count; i++) {
            tick();
            advance(stepMs);
        }
    }
}
