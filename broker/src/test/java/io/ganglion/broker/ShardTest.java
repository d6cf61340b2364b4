package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ShardTest {
    /** Runs {@code body} on the shard's thread and waits for it. */
    private static void onShard(Shard shard, Runnable body) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        shard.execute(() -> {
            body.run();
            done.complete(null);
        });
        done.get(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldRunTasksInSubmissionOrderOnItsOwnThreadAndGoOnAfterAFailingTask() throws Exception {
        try (Shard shard = new Shard(3)) {
            List<Integer> ran = new ArrayList<>();
            List<String> threads = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                int n = i;
                shard.execute(() -> {
                    ran.add(n);
                    threads.add(Thread.currentThread().getName());
                    if (n == 50) {
                        throw new IllegalStateException("a task that fails");
                    }
                });
            }
            boolean[] onShard = new boolean[1];
            onShard(shard, () -> onShard[0] = shard.onShardThread());
            assertThat(ran).hasSize(100).isSorted();
            assertThat(threads).containsOnly("ganglion-shard-3");
            assertThat(onShard[0]).isTrue();
            assertThat(shard.onShardThread()).isFalse();
        }
    }

    @Test
    void shouldRunIdleHooksOnceTheTasksQueuedHaveRunAndAHookAddedByAHookAtTheNextIdlePoint() throws Exception {
        try (Shard shard = new Shard(0)) {
            List<String> events = new ArrayList<>();
            CompletableFuture<Void> last = new CompletableFuture<>();
            CountDownLatch hold = new CountDownLatch(1);
            shard.execute(() -> {
                try {
                    hold.await(); // the tasks below queue up behind this one
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                shard.whenIdle(() -> {
                    events.add("hook");
                    shard.whenIdle(() -> {
                        events.add("hook of the hook");
                        last.complete(null);
                    });
                    shard.execute(() -> events.add("task queued by the hook"));
                });
            });
            for (int i = 0; i < 3; i++) {
                int n = i;
                shard.execute(() -> events.add("task " + n));
            }
            hold.countDown();
            last.get(10, TimeUnit.SECONDS);
            assertThat(events)
                    .containsExactly(
                            "task 0", "task 1", "task 2", "hook", "task queued by the hook", "hook of the hook");
        }
    }

    @Test
    void shouldRunIdleHooksAfterAtMostTasksPerIdleTasksWhenTheQueueNeverEmpties() throws Exception {
        try (Shard shard = new Shard(0)) {
            List<Integer> hookAfter = new ArrayList<>();
            int[] tasksRun = new int[1];
            CountDownLatch hold = new CountDownLatch(1);
            shard.execute(() -> {
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                shard.whenIdle(() -> hookAfter.add(tasksRun[0]));
            });
            for (int i = 0; i < 10 * Shard.TASKS_PER_IDLE; i++) {
                shard.execute(() -> tasksRun[0]++);
            }
            hold.countDown();
            onShard(shard, () -> {});
            assertThat(hookAfter).hasSize(1);
            assertThat(hookAfter.get(0)).isLessThan(Shard.TASKS_PER_IDLE);
        }
    }

    @Test
    void shouldRunTheTasksOfOnePeriodTogetherInOneBeatUntilEachIsCancelled() throws Exception {
        try (Shard shard = new Shard(0)) {
            List<String> events = new ArrayList<>();
            CountDownLatch beats = new CountDownLatch(8);
            Shard.Ticker[] c = new Shard.Ticker[1];
            int[] cRuns = {0};
            onShard(shard, () -> {
                shard.every(10, () -> events.add("a"));
                shard.every(10, () -> {
                    events.add("b");
                    throw new IllegalStateException("a ticker that fails");
                });
                c[0] = shard.every(10, () -> {
                    events.add("c");
                    if (++cRuns[0] == 3) {
                        c[0].cancel();
                        shard.every(10, () -> events.add("d")); // runs from the next beat on
                    }
                });
                shard.every(10, beats::countDown);
                assertThatThrownBy(() -> shard.every(0, () -> {})).isInstanceOf(IllegalArgumentException.class);
            });
            assertThat(beats.await(10, TimeUnit.SECONDS)).isTrue();
            List<String> seen = new ArrayList<>();
            onShard(shard, () -> seen.addAll(events));
            String all = String.join("", seen);
            // every beat ran its tickers back to back, in the order they were registered; a failing one did not stop
            // the others, c stopped after its third beat, and d, registered in that beat, began in the next
            assertThat(all).startsWith("abcabcabcabdabdabd");
            assertThat(all.replace("abd", "")).isEqualTo("abcabcabc");
        }
    }

    @Test
    void shouldRunScheduledTasksLaterAndRefuseTasksOnceClosed() throws Exception {
        Shard shard = new Shard(0);
        CompletableFuture<Long> ran = new CompletableFuture<>();
        long start = System.nanoTime();
        shard.schedule(() -> ran.complete(System.nanoTime()), 50);
        assertThat(TimeUnit.NANOSECONDS.toMillis(ran.get(10, TimeUnit.SECONDS) - start))
                .isGreaterThanOrEqualTo(45);
        shard.close();
        assertThatThrownBy(() -> shard.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);
        assertThatThrownBy(() -> shard.schedule(() -> {}, 1)).isInstanceOf(RejectedExecutionException.class);
    }

    @Test
    void shouldLendItsThreadsAsEventLoopsSoThatTheirIoRunsOnTheShards() throws Exception {
        try (Shard.Group group = new Shard.Group(2)) {
            assertThat(group.shards()).extracting(Shard::index).containsExactly(0, 1);
            // the second shard's loop starts first: each thread is still named by its shard
            for (Shard shard : List.of(group.shards().get(1), group.shards().get(0))) {
                CompletableFuture<Boolean> named = new CompletableFuture<>();
                shard.execute(
                        () -> named.complete(Thread.currentThread().getName().equals("ganglion-shard-" + shard.index())
                                && shard.onShardThread()));
                assertThat(named.get(10, TimeUnit.SECONDS)).isTrue();
            }
            for (int i = 0; i < 4; i++) {
                EventLoop loop = group.eventLoops().next();
                CompletableFuture<String> thread = new CompletableFuture<>();
                loop.execute(() -> thread.complete(Thread.currentThread().getName()));
                assertThat(thread.get(10, TimeUnit.SECONDS)).isIn("ganglion-shard-0", "ganglion-shard-1");
            }
        }
    }
}
