package io.ganglion.broker.jvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompilerPriorityTest {

    @Test
    void shouldFindTheThreadsWhoseNameStartsWithThePrefix(@TempDir Path tasks) throws Exception {
        task(tasks, "101", "C2 CompilerThre\n");
        task(tasks, "102", "C1 CompilerThre\n");
        task(tasks, "103", "ganglion-shard-0\n");
        task(tasks, "104", "C2 CompilerThre\n");
        Files.createDirectories(tasks.resolve("not-a-thread"));
        Files.createDirectories(tasks.resolve("105")); // ended: no comm any more

        assertThat(CompilerPriority.threads(tasks, CompilerPriority.C2_THREAD_PREFIX))
                .containsExactlyInAnyOrder(101, 104);
    }

    @Test
    void shouldRaiseTheNiceValueOfMatchingThreadsOfThisProcessOnly() throws Exception {
        Path self = Path.of("/proc/self/task");
        assumeTrue(Files.isDirectory(self), "Linux only");
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch named = new CountDownLatch(1);
        long[] tid = new long[1];
        // a thread of our own with a name no other thread has stands in for C2's (the test JVM's C2 stays as it is)
        Thread stand = new Thread(
                () -> {
                    tid[0] = currentTid();
                    named.countDown();
                    awaitQuietly(stop);
                },
                "gl-test-nice-x");
        stand.start();
        try {
            assertThat(named.await(10, TimeUnit.SECONDS)).isTrue();
            int before = niceOf(tid[0]);
            int mainBefore = niceOf(currentTid());

            try (CompilerPriority priority =
                    CompilerPriority.start(19, self, "gl-test-nice").orElseThrow()) {
                assertThat(niceOf(tid[0]))
                        .as("the matching thread, from %d", before)
                        .isEqualTo(19);
                assertThat(niceOf(currentTid())).as("this thread").isEqualTo(mainBefore);
                assertThat(priority.apply())
                        .as("a thread already set is not set again")
                        .isZero();
            }
            assertThat(CompilerPriority.start(0, self, "gl-test-nice"))
                    .as("0: the JVM's own")
                    .isEmpty();
        } finally {
            stop.countDown();
            stand.join();
        }
    }

    private static void task(Path tasks, String tid, String comm) throws Exception {
        Files.writeString(Files.createDirectories(tasks.resolve(tid)).resolve("comm"), comm);
    }

    private static long currentTid() {
        try {
            return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self"))
                    .getFileName()
                    .toString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Field 19 of {@code /proc/self/task/<tid>/stat}, counted after the name in parentheses. */
    private static int niceOf(long tid) throws Exception {
        String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Integer.parseInt(fields[16]);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
