package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class JournalQueueTest {
    /** A node that carries work and is queued at most once, the way a replica's journal cursor is. */
    private static final class Work extends JournalQueue.Node {
        final AtomicBoolean queued = new AtomicBoolean();
        final AtomicLong pending = new AtomicLong();

        void offer(JournalQueue queue) {
            pending.incrementAndGet();
            if (!queued.get() && queued.compareAndSet(false, true)) {
                queue.add(this);
            }
        }
    }

    @Test
    void shouldReturnNodesInOrderAndTakeANodeAgainAsSoonAsItWasReturned() {
        JournalQueue queue = new JournalQueue();
        JournalQueue.Node a = new JournalQueue.Node();
        JournalQueue.Node b = new JournalQueue.Node();
        assertThat(queue.poll()).isNull();
        queue.add(a);
        queue.add(b);
        assertThat(queue.poll()).isSameAs(a);
        queue.add(a); // a left the queue: it may come back at once, behind b
        assertThat(queue.poll()).isSameAs(b);
        assertThat(queue.poll()).isSameAs(a);
        assertThat(queue.poll()).isNull();
        queue.add(a); // the last node taken, queued again: the stub went behind it
        assertThat(queue.poll()).isSameAs(a);
        assertThat(queue.poll()).isNull();
    }

    @Test
    void shouldLoseNoWorkWhileProducersQueueTheirNodesAgainAndTheConsumerSleeps() throws Exception {
        JournalQueue queue = new JournalQueue();
        int producers = 3;
        int nodesEach = 50;
        int offersEach = 200_000;
        List<Work> all = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            List<Work> own = new ArrayList<>();
            for (int i = 0; i < nodesEach; i++) {
                own.add(new Work());
            }
            all.addAll(own);
            threads.add(new Thread(() -> {
                for (int i = 0; i < offersEach; i++) {
                    own.get(i % own.size()).offer(queue);
                }
            }));
        }
        AtomicLong taken = new AtomicLong();
        Thread consumer = new Thread(() -> {
            try {
                long expected = (long) producers * offersEach;
                while (taken.get() < expected) {
                    Work work = (Work) queue.take(); // parks while empty: producers must wake it
                    work.queued.set(false); // before taking its work, as the journal writer does
                    taken.addAndGet(work.pending.getAndSet(0));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        consumer.start();
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
        consumer.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(consumer.isAlive())
                .as("consumer still waiting: a wake-up or a node was lost")
                .isFalse();
        assertThat(taken.get()).isEqualTo((long) producers * offersEach);
        assertThat(all).allSatisfy(work -> assertThat(work.pending.get()).isZero());
    }

    /**
     * One node handed back and forth: the producer adds it just as the consumer goes to sleep on an empty queue, the
     * moment a lost wake-up would leave the consumer asleep for good (no later add comes to rescue it). The producer
     * links its node and then reads whether the consumer sleeps; the consumer announces its sleep and then looks for
     * the link: unless both orders hold (a store, then a load of another field), each can miss the other.
     */
    @Test
    void shouldWakeTheConsumerForTheLastNodeAddedAsItGoesToSleep() throws Exception {
        JournalQueue queue = new JournalQueue();
        JournalQueue.Node node = new JournalQueue.Node();
        int rounds = 200_000;
        AtomicLong taken = new AtomicLong();
        Thread consumer = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    queue.take();
                    taken.incrementAndGet();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        consumer.setDaemon(true);
        consumer.start();
        for (int i = 0; i < rounds; i++) {
            queue.add(node);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (taken.get() <= i) {
                assertThat(System.nanoTime())
                        .as("round %d: the consumer was not woken for the node added", i)
                        .isLessThan(deadline);
                Thread.onSpinWait();
            }
        }
        consumer.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(taken.get()).isEqualTo(rounds);
    }
}
