package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.HistoryRecord.SealReceived;
import java.util.List;
import org.junit.jupiter.api.Test;

class ControllerCoreTest {
    private static final NodeId A = NodeId.of("a");
    private static final NodeId B = NodeId.of("b");
    private static final Incarnation ONE = new Incarnation(1);

    private final ControllerCore core = new ControllerCore();
    private CoordinationImage committed = CoordinationImage.empty();

    private long tickMs() {
        return committed.settings().value(RuntimeSettings.TICK_MS);
    }

    private long expiryMs() {
        return committed.settings().value(RuntimeSettings.EXPIRY_MS);
    }

    /** Commits a tick's entry as one batch and tells the core its proposal completed. */
    private void commit(ControllerCore.Tick tick) {
        if (!tick.entry().isEmpty()) {
            committed =
                    committed.apply(new CoordinationCommand.Batch(tick.entry())).image();
            core.completed(tick.entry());
        }
    }

    private void twoLiveNodes(long nowMs) {
        core.begin(committed.liveSet(), nowMs);
        core.heartbeat(A, ONE, false, nowMs);
        core.heartbeat(B, ONE, false, nowMs);
        commit(core.tick(committed, nowMs));
        assertThat(committed.liveSet().isLive(B)).isTrue();
    }

    @Test
    void shouldProposeATickCommandOnceWhileItIsInFlight() {
        core.begin(committed.liveSet(), 0);
        assertThat(core.heartbeat(A, ONE, false, 0)).as("a new node: tick now").isTrue();
        ControllerCore.Tick first = core.tick(committed, 0);
        assertThat(first.entry()).singleElement().isInstanceOf(CommitLiveSet.class);

        ControllerCore.Tick second = core.tick(committed, 1);
        assertThat(second.entry())
                .as("in flight: the tick sees it applied and proposes nothing")
                .isEmpty();

        core.completed(first.entry()); // lost: not committed
        assertThat(core.tick(committed, 2).entry())
                .as("proposed again once the first proposal completed without it")
                .singleElement()
                .isInstanceOf(CommitLiveSet.class);
    }

    @Test
    void shouldFailOverOnlyWhenNoHeartbeatCameBackSinceTheClose() {
        twoLiveNodes(0);
        core.connectionClosed(B, 10);
        core.heartbeat(B, ONE, false, 20);
        assertThat(core.failOver(B, 10, 10 + 500)).as("it came back").isFalse();
        assertThat(core.observed().isLive(B)).isTrue();

        core.connectionClosed(B, 600);
        assertThat(core.closedAt(B)).contains(600L);
        assertThat(core.failOver(B, 600, 1_100)).isTrue();
        assertThat(core.observed().isLive(B)).isFalse();
        TickHarness.assertOneEagerFailover(core.tick(committed, 1_100).entry());
    }

    @Test
    void shouldRecordClosedConnectionsWhileNotLeadingAndHandThemOverAtTheStart() {
        core.connectionClosed(B, 5);
        assertThat(core.failOver(B, 5, 500)).as("not the controller").isFalse();
        assertThat(core.begin(committed.liveSet(), 700)).containsEntry(B, 5L);
    }

    @Test
    void shouldWatchAgainAfterStandingStill() {
        twoLiveNodes(0);
        long late = tickMs() + expiryMs(); // half an expiry period past due, and more
        core.heartbeat(A, ONE, false, late);
        ControllerCore.Tick tick = core.tick(committed, late);
        assertThat(tick.stoodStillMs()).isEqualTo(late);
        assertThat(tick.expired()).as("the silence was the controller's own").isEmpty();
        assertThat(core.observed().isLive(B)).isTrue();

        long next = late + tickMs();
        assertThat(core.tick(committed, next).stoodStillMs()).isEqualTo(-1);
        for (long now = next; now <= late + expiryMs() + tickMs(); now += tickMs()) {
            core.heartbeat(A, ONE, false, now);
            commit(core.tick(committed, now));
        }
        assertThat(core.observed().isLive(B))
                .as("silent for an expiry period of the new watch")
                .isFalse();
    }

    @Test
    void shouldHoldAReplyThatMovesNothingOnUntilATickPeriodPassed() {
        twoLiveNodes(0);
        AppendHistory reply = new AppendHistory(
                ObjectId.of("/", "q"), new SealReceived(Epoch.of(1), new SealReply(A, LogPosition.EMPTY, -1)));
        // no such object: the image refuses the reply, so it is needless
        assertThat(core.reply(reply, committed, 10)).isEqualTo(ControllerCore.ReplyOutcome.NEEDLESS);

        core.end();
        assertThat(core.reply(reply, committed, 10)).isEqualTo(ControllerCore.ReplyOutcome.INACTIVE);
        assertThat(core.active()).isFalse();
    }

    @Test
    void shouldForgetWhatIsInFlightWhenTheLeadershipEnds() {
        core.begin(committed.liveSet(), 0);
        core.heartbeat(A, ONE, false, 0);
        assertThat(core.tick(committed, 0).entry()).isNotEmpty();
        assertThat(core.inFlight()).isNotEmpty();
        core.end();
        assertThat(core.inFlight()).isEmpty();
        core.begin(committed.liveSet(), 100);
        core.heartbeat(A, ONE, false, 100);
        assertThat(core.tick(committed, 100).entry())
                .as("a new leadership proposes afresh")
                .singleElement()
                .isInstanceOf(CommitLiveSet.class);
        assertThat(List.of(core.ticks())).containsExactly(2L);
    }
}
