package io.ganglion.broker.peer;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A {@link PeerHandler} that records what it is told, for a test thread to wait on. Callbacks from any thread. */
final class RecordingPeerHandler implements PeerHandler {
    sealed interface Event {}

    record Connected(NodeId peer, Incarnation incarnation) implements Event {}

    record Message(NodeId from, PeerMessage message) implements Event {}

    record Disconnected(NodeId peer) implements Event {}

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

    @Override
    public void onConnected(NodeId peer, Incarnation incarnation) {
        events.add(new Connected(peer, incarnation));
    }

    @Override
    public void onMessage(NodeId from, PeerMessage message) {
        events.add(new Message(from, message));
    }

    @Override
    public void onDisconnected(NodeId peer) {
        events.add(new Disconnected(peer));
    }

    /** The next event, waiting up to {@link #TIMEOUT}; fails when none comes. */
    Event next() {
        try {
            Event event = events.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(event).as("an event within %s", TIMEOUT).isNotNull();
            return event;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Events up to and including the first that {@code until} accepts, waiting up to {@link #TIMEOUT} for each. */
    List<Event> awaitEvent(Predicate<Event> until) {
        List<Event> seen = new ArrayList<>();
        while (true) {
            Event event = next();
            seen.add(event);
            if (until.test(event)) {
                return seen;
            }
        }
    }

    /** The messages of the next {@code count} events, which must all be messages. */
    List<PeerMessage> messages(int count) {
        List<PeerMessage> messages = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Event event = next();
            assertThat(event).isInstanceOf(Message.class);
            messages.add(((Message) event).message());
        }
        return messages;
    }

    /** Asserts that no event comes within {@code quiet}. */
    void assertQuietFor(Duration quiet) {
        try {
            Event event = events.poll(quiet.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(event).as("no event within %s", quiet).isNull();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The events recorded so far, without waiting. */
    List<Event> drain() {
        List<Event> drained = new ArrayList<>();
        events.drainTo(drained);
        return drained;
    }
}
