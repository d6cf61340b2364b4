package io.ganglion.serving;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Epoch;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.ReplicaEvent;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PublishIntakeTest {
    private static final long NONE = ForwardLanes.NONE;
    private static final ByteBuffer BODY = ByteBuffer.allocate(4);

    private Optional<Epoch> taking = Optional.empty();
    private boolean awaiting;
    private final List<String> seen = new ArrayList<>();
    private final List<Long> wakes = new ArrayList<>();
    private boolean full;

    private final PublishIntake<String> intake = new PublishIntake<>(
            new PublishIntake.Roles() {
                @Override
                public Optional<Epoch> takingPublishes() {
                    return taking;
                }

                @Override
                public boolean awaitingEpoch() {
                    return awaiting;
                }
            },
            new PublishIntake.Effects<>() {
                @Override
                public void admit(ReplicaEvent.PublishAdmitted admitted) {
                    seen.add("admit " + admitted.id().sequence() + "@"
                            + admitted.epoch().value());
                }

                @Override
                public void confirmed(String done) {
                    seen.add("confirmed " + done);
                }

                @Override
                public void moved(String done, String why) {
                    seen.add("moved " + done);
                }

                @Override
                public void failed(String done, String why) {
                    seen.add("failed " + done);
                }

                @Override
                public void wakeIn(long delayMs) {
                    wakes.add(delayMs);
                }

                @Override
                public boolean rejects(ByteBuffer payload) {
                    return full;
                }

                @Override
                public void rejected(String done, ByteBuffer payload) {
                    seen.add("rejected " + done);
                }
            });

    private static PublishId id(long sequence) {
        return new PublishId(7, sequence);
    }

    @Test
    void shouldAdmitUnderTheEpochTakingPublishesAndConfirmEverySendOfOneId() {
        taking = Optional.of(Epoch.of(3));
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(1), NONE, BODY, "a-again", 1);
        intake.confirmed(id(1));
        assertThat(seen).containsExactly("admit 1@3", "confirmed a", "confirmed a-again");
        assertThat(intake.inFlight()).isZero();
    }

    @Test
    void shouldRejectWhileTheQueueRefusesAndLetTheSendersNextPublishFollowTheRejectedOne() {
        taking = Optional.of(Epoch.of(3));
        full = true;
        intake.publish(id(1), NONE, BODY, "a", 0);
        full = false;
        intake.publish(id(2), 1, BODY, "b", 0); // sent after 1, which was rejected: still in order
        assertThat(seen).containsExactly("rejected a", "admit 2@3");
        assertThat(intake.inFlight()).isEqualTo(1);
    }

    @Test
    void shouldSendBackWhatTheReplicaRefusesWithEveryJoinedSend() {
        taking = Optional.of(Epoch.of(3));
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(1), NONE, BODY, "b", 0);
        intake.refused(id(1), "sealed");
        assertThat(seen).containsExactly("admit 1@3", "moved a", "moved b");
    }

    @Test
    void shouldHoldWhileAwaitingTheNextEpochAndAdmitInOrderWhenTheOwnerRoleBegins() {
        awaiting = true;
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(2), NONE, BODY, "b", 5);
        assertThat(seen).isEmpty();
        assertThat(wakes).containsExactly(PublishIntake.PARK_MS);
        awaiting = false;
        taking = Optional.of(Epoch.of(4));
        intake.rolesMayHaveChanged(20);
        assertThat(seen).containsExactly("admit 1@4", "admit 2@4");
    }

    @Test
    void shouldSendHeldPublishesBackWhenTheReplicaFollowsAnotherOwner() {
        awaiting = true;
        intake.publish(id(1), NONE, BODY, "a", 0);
        awaiting = false;
        intake.rolesMayHaveChanged(10);
        assertThat(seen).containsExactly("moved a");
    }

    @Test
    void shouldSendBackOnlyThePublishesHeldForTheWholeWait() {
        awaiting = true;
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(2), NONE, BODY, "b", 200);
        intake.expire(PublishIntake.PARK_MS);
        assertThat(seen).containsExactly("moved a");
        assertThat(wakes).containsExactly(PublishIntake.PARK_MS, 200L);
        intake.expire(PublishIntake.PARK_MS + 200);
        assertThat(seen).containsExactly("moved a", "moved b");
        assertThat(intake.parked()).isZero();
    }

    @Test
    void shouldSendBackAtOnceWhenNeitherOwningNorAwaitingOrWhenFull() {
        intake.publish(id(1), NONE, BODY, "a", 0);
        awaiting = true;
        for (int i = 0; i < PublishIntake.PARK_MAX; i++) {
            intake.publish(id(10 + i), NONE, BODY, "held", 0);
        }
        intake.publish(id(2), NONE, BODY, "b", 0);
        assertThat(seen).containsExactly("moved a", "moved b");
    }

    @Test
    void shouldAnswerEveryPublishInFlightWhenDroppedAndRefuseAfterClose() {
        taking = Optional.of(Epoch.of(3));
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(1), NONE, BODY, "b", 0);
        intake.publish(id(2), NONE, BODY, "c", 0);
        intake.dropInFlight("deleted", false);
        assertThat(seen).contains("failed a", "failed b", "failed c");
        seen.clear();
        intake.close(5);
        intake.publish(id(3), NONE, BODY, "d", 6);
        assertThat(seen).containsExactly("moved d");
    }

    @Test
    void shouldAdmitAPublishOnlyAfterTheOneItsLaneSentBeforeIt() {
        taking = Optional.of(Epoch.of(3));
        intake.publish(id(2), 1, BODY, "b", 0);
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(2), 1, BODY, "b-again", 0);
        intake.publish(id(5), 4, BODY, "e", 0);
        intake.publish(id(6), 2, BODY, "f", 0);
        assertThat(seen)
                .as("b before a goes back; after a it is admitted; f may follow b even with c-e decided between")
                .containsExactly("moved b", "admit 1@3", "admit 2@3", "moved e", "admit 6@3");
    }

    @Test
    void shouldNotLetALaterPublishPassOneSentBackFromBeingHeld() {
        awaiting = true;
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.publish(id(2), 1, BODY, "b", 200);
        intake.expire(PublishIntake.PARK_MS);
        taking = Optional.of(Epoch.of(4));
        awaiting = false;
        intake.rolesMayHaveChanged(PublishIntake.PARK_MS + 10);
        assertThat(seen).as("b goes back as well: its lane sends a again first").containsExactly("moved a", "moved b");

        intake.publish(id(1), NONE, BODY, "a-again", 400);
        intake.publish(id(2), 1, BODY, "b-again", 400);
        assertThat(seen).endsWith("admit 1@4", "admit 2@4");
    }

    @Test
    void shouldAdmitHeldPublishesBeforeANewOneOnceTheEpochBegins() {
        awaiting = true;
        intake.publish(id(1), NONE, BODY, "a", 0);
        taking = Optional.of(Epoch.of(4));
        awaiting = false;
        intake.publish(id(2), 1, BODY, "b", 5);
        assertThat(seen).containsExactly("admit 1@4", "admit 2@4");
    }

    @Test
    void shouldForgetWhatWasAdmittedInAnEarlierEpoch() {
        taking = Optional.of(Epoch.of(3));
        intake.publish(id(1), NONE, BODY, "a", 0);
        intake.refused(id(1), "lost the role");
        taking = Optional.of(Epoch.of(5));
        intake.publish(id(2), 1, BODY, "b", 10);
        assertThat(seen).containsExactly("admit 1@3", "moved a", "moved b");
    }
}
