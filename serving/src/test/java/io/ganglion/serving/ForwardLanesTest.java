package io.ganglion.serving;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.NodeId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The forwarding lanes: order across a change of owner, re-sends with the same sequence, deadlines, adoption. */
class ForwardLanesTest {
    private static final NodeId SELF = NodeId.of("b1");
    private static final NodeId B2 = NodeId.of("b2");
    private static final NodeId B3 = NodeId.of("b3");
    private static final long Q = 7;
    private static final long TIMEOUT_MS = 30_000;

    private record Sent(NodeId to, long sequence, String publish, long after) {
        Sent(NodeId to, long sequence, String publish) {
            this(to, sequence, publish, ANY);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Sent that
                    && to.equals(that.to)
                    && sequence == that.sequence
                    && publish.equals(that.publish)
                    && (after == ANY || that.after == ANY || after == that.after);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(to, sequence, publish);
        }
    }

    /** A {@link Sent} whose {@code after} the test does not check. */
    private static final long ANY = -42;

    private final List<Sent> sent = new ArrayList<>();
    private final Set<NodeId> down = new HashSet<>();
    private final Map<Long, NodeId> owners = new HashMap<>();
    private int soon;
    private long nextSequence = 1_000;

    private final ForwardLanes.Effects<String> effects = new ForwardLanes.Effects<>() {
        @Override
        public boolean send(NodeId owner, long sequence, long after, String publish) {
            if (down.contains(owner)) {
                return false;
            }
            sent.add(new Sent(owner, sequence, publish, after));
            return true;
        }

        @Override
        public void resendSoon() {
            soon++;
        }

        @Override
        public long nextSequence() {
            return nextSequence++;
        }
    };

    private final ForwardLanes<String> lanes = new ForwardLanes<>(effects, TIMEOUT_MS);

    private ForwardLanes.Round<String> round(long nowMs) {
        return lanes.resend(queue -> Optional.ofNullable(owners.get(queue)), nowMs);
    }

    @Test
    void shouldSendAtOnceToTheOwnerAndDecideOnItsAnswer() {
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        lanes.submit(Q, 2, "m2", Optional.of(B2), 0);

        assertThat(sent)
                .as("the second goes after the first, in flight")
                .containsExactly(new Sent(B2, 1, "m1", ForwardLanes.NONE), new Sent(B2, 2, "m2", 1));
        assertThat(lanes.answered(1, false)).hasValue("m1");
        assertThat(lanes.answered(1, false)).as("answered twice").isEmpty();
        assertThat(lanes.inFlight(Q)).isEqualTo(1);
        assertThat(lanes.answered(2, false)).hasValue("m2");
        assertThat(lanes.size()).isZero();
        assertThat(lanes.inFlight(Q)).isZero();
    }

    @Test
    void shouldKeepAQueuesOrderAcrossAChangeOfOwner() {
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        // the image shows b3 now, while m1 is still in flight to b2: m2 must not pass it
        lanes.submit(Q, 2, "m2", Optional.of(B3), 10);
        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"));
        assertThat(lanes.waiting(Q)).isEqualTo(1);

        owners.put(Q, B3);
        ForwardLanes.Round<String> round = round(20);

        // m1 goes back to waiting (b2 no longer owns) and is re-sent first, with its own sequence, then m2 is sent
        assertThat(round.resent()).isEqualTo(1);
        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"), new Sent(B3, 1, "m1"), new Sent(B3, 2, "m2"));
        assertThat(lanes.wasResent(1)).isTrue();
    }

    @Test
    void shouldSendARefusedPublishAgainOnlyOnceTheLaterOnesInFlightCameBack() {
        owners.put(Q, B2);
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        lanes.submit(Q, 2, "m2", Optional.of(B2), 0);
        lanes.submit(Q, 3, "m3", Optional.of(B2), 0);
        // b2 was not the owner yet for m1; m2 and m3, sent after it, come back refused too (the owner admits them only
        // after m1), but their answers are still on the way
        lanes.answered(1, true);
        round(1);
        assertThat(sent).as("m1 waits for m2 and m3").hasSize(3);
        lanes.submit(Q, 4, "m4", Optional.of(B2), 2);
        assertThat(sent).as("m4 waits behind m1").hasSize(3);

        lanes.answered(2, true);
        lanes.answered(3, true);
        round(3);
        assertThat(sent.subList(3, sent.size()))
                .containsExactly(
                        new Sent(B2, 1, "m1", ForwardLanes.NONE),
                        new Sent(B2, 2, "m2", 1),
                        new Sent(B2, 3, "m3", 2),
                        new Sent(B2, 4, "m4", 3));
    }

    @Test
    void shouldWaitWhileTheOwnerIsUnknownAndHoldLaterPublishesBehind() {
        lanes.submit(Q, 1, "m1", Optional.empty(), 0);
        lanes.submit(Q, 2, "m2", Optional.of(B2), 0);
        assertThat(sent).as("m2 may not pass m1, which waits for an owner").isEmpty();

        assertThat(round(50).resent()).isZero();
        owners.put(Q, B2);
        assertThat(round(100).resent()).as("sent for the first time").isZero();
        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"), new Sent(B2, 2, "m2"));
    }

    @Test
    void shouldSendARefusedPublishAgainToTheNextOwnerAndAskForAQuickRound() {
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        assertThat(lanes.answered(1, true)).as("a refusal decides nothing").isEmpty();
        assertThat(soon).isEqualTo(1);
        assertThat(lanes.refusals(1)).isEqualTo(1);

        owners.put(Q, B3);
        round(5);
        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"), new Sent(B3, 1, "m1"));
        assertThat(lanes.answered(1, false)).hasValue("m1");
    }

    @Test
    void shouldStopAskingForQuickRoundsAfterTheQuickRetries() {
        owners.put(Q, B2);
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        for (int i = 0; i < ForwardLanes.QUICK_RETRIES + 5; i++) {
            lanes.answered(1, true);
            round(i + 1);
        }
        assertThat(soon).isEqualTo(ForwardLanes.QUICK_RETRIES);
    }

    @Test
    void shouldResendWhatWasInFlightOnAClosedLink() {
        owners.put(Q, B2);
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        lanes.linkClosed(B2);
        assertThat(lanes.waiting(Q)).isEqualTo(1);

        down.add(B2);
        round(50);
        assertThat(lanes.waiting(Q)).as("the link is still down").isEqualTo(1);
        down.clear();
        round(100);
        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"), new Sent(B2, 1, "m1"));
    }

    @Test
    void shouldFailAPublishPastItsDeadlineAndNeverSendItAgain() {
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        lanes.linkClosed(B2);

        ForwardLanes.Round<String> round = round(TIMEOUT_MS);

        assertThat(round.timedOut()).containsExactly("m1");
        assertThat(lanes.size()).isZero();
        assertThat(lanes.waiting(Q)).isZero();
        owners.put(Q, B3);
        round(TIMEOUT_MS + 50);
        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"));
    }

    @Test
    void shouldCountTheOwnReplicasPublishesInTheLaneUntilDecidedOrAdopted() {
        assertThat(lanes.sendLocally(Q, 400, SELF)).isEqualTo(ForwardLanes.NONE);
        assertThat(lanes.sendLocally(Q, 500, SELF))
                .as("after the one in flight")
                .isEqualTo(400);
        // the image moved to b2: a forwarded publish may not pass the two at this broker's replica
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        assertThat(sent).isEmpty();
        assertThat(lanes.sendLocally(Q, 600, SELF))
                .as("one waits: no more go to the replica")
                .isEqualTo(ForwardLanes.HELD);

        lanes.decidedLocally(Q);
        // the replica stopped owning: it gives the other one back, to be sent with its own sequence
        lanes.adopt(Q, 500, "local", 10);
        owners.put(Q, B2);
        round(20);

        assertThat(sent).containsExactly(new Sent(B2, 1, "m1"), new Sent(B2, 500, "local"));
        assertThat(lanes.inFlight(Q)).isEqualTo(2);
    }

    @Test
    void shouldTakeAnAdoptedPublishAsANewOneUnderTheInjectedFault() {
        ForwardLanes<String> faulty = new ForwardLanes<>(effects, TIMEOUT_MS, Set.of(ForwardLanes.Fault.ADOPT_AS_NEW));
        assertThat(faulty.sendLocally(Q, 500, SELF)).isEqualTo(ForwardLanes.NONE);
        faulty.adopt(Q, 500, "local", 0);
        faulty.resend(queue -> Optional.of(B2), 10);

        assertThat(sent).containsExactly(new Sent(B2, 1_000, "local"));
    }

    @Test
    void shouldRefuseASequenceForwardedTwice() {
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> lanes.submit(Q, 1, "again", Optional.of(B2), 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldForgetOnlyIdleLanesOfDeletedQueues() {
        lanes.submit(Q, 1, "m1", Optional.of(B2), 0);
        lanes.submit(8, 2, "m2", Optional.of(B2), 0);
        lanes.answered(2, false);

        lanes.forgetLanesExcept(Set.of());

        assertThat(lanes.laneCount())
                .as("queue 7 still has a publish in flight")
                .isEqualTo(1);
    }
}
