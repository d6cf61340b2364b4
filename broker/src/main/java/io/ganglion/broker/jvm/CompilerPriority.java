package io.ganglion.broker.jvm;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs this JVM's C2 compiler threads at a higher nice value than the broker's own threads (Linux only), so that on a
 * machine whose cores the brokers need, optimizing compilation waits for them rather than they for it.
 *
 * <p>Why: a JVM compiles for minutes after it starts, its C2 thread taking 15-60% of a core while the broker's threads
 * carry traffic; on a machine shared with other brokers (the failover bench: three brokers on two cores) a broker that
 * restarts takes that from its peers' confirms, and a failure makes every survivor compile its failover paths at the
 * moment they are needed. C1 keeps the JVM's priority: it compiles quickly and cheaply, so code leaves the interpreter
 * as soon as it would anyway; only the expensive second compilation yields. On an idle core nothing changes.
 *
 * <p>The JVM starts and stops compiler threads as its compile queue grows and empties, so the threads are looked up
 * again every {@value #RESCAN_SECONDS} seconds in {@code /proc/self/task} (a thread's name there is cut to 15
 * characters: {@value #C2_THREAD_PREFIX}...). The nice value is set with {@code setpriority(2)} on the thread id, which
 * an unprivileged process may do to raise it.
 *
 * <p>The price: a process killed with SIGKILL is torn down (its memory freed, its sockets closed) by whichever of its
 * threads exits last, at that thread's priority. A C2 thread at nice 19 is scheduled last on busy cores, so it is
 * often that thread, and the killed broker's peers learn of the death up to about a second after the SIGKILL. So
 * {@code jit.compiler_nice} is 0 (off) by default; a machine where brokers restart more often than they die may still
 * want it.
 */
public final class CompilerPriority implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CompilerPriority.class);

    static final String C2_THREAD_PREFIX = "C2 CompilerThre";
    static final long RESCAN_SECONDS = 2;
    private static final int PRIO_PROCESS = 0;

    private final int nice;
    private final Path tasks;
    private final String prefix;
    private final CLibrary libc;
    private final Set<Integer> done = new HashSet<>();
    private final ScheduledExecutorService timer;

    /** The C library's {@code setpriority(2)}, through JNA. */
    interface CLibrary extends Library {
        int setpriority(int which, int who, int prio);
    }

    private CompilerPriority(int nice, Path tasks, String prefix, CLibrary libc) {
        this.nice = nice;
        this.tasks = tasks;
        this.prefix = prefix;
        this.libc = libc;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ganglion-compiler-priority");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Starts lowering the C2 threads of this process to {@code nice} (1 to 19), now and every {@value
     * #RESCAN_SECONDS} s; empty when {@code nice} is 0 or the platform has no {@code /proc/self/task} or {@code
     * setpriority}.
     */
    public static Optional<CompilerPriority> start(int nice) {
        return start(nice, Path.of("/proc/self/task"), C2_THREAD_PREFIX);
    }

    /** As {@link #start(int)}, for the threads under {@code tasks} whose name starts with {@code prefix}. */
    static Optional<CompilerPriority> start(int nice, Path tasks, String prefix) {
        if (nice == 0) {
            return Optional.empty();
        }
        if (!Files.isDirectory(tasks)) {
            LOG.info("event=compiler_priority_unavailable reason=no_proc_tasks");
            return Optional.empty();
        }
        Optional<CLibrary> libc = libc();
        if (libc.isEmpty()) {
            LOG.info("event=compiler_priority_unavailable reason=no_setpriority");
            return Optional.empty();
        }
        CompilerPriority priority = new CompilerPriority(nice, tasks, prefix, libc.get());
        priority.apply();
        priority.timer.scheduleWithFixedDelay(priority::apply, RESCAN_SECONDS, RESCAN_SECONDS, TimeUnit.SECONDS);
        return Optional.of(priority);
    }

    private static Optional<CLibrary> libc() {
        try {
            return Optional.of(Native.load("c", CLibrary.class));
        } catch (RuntimeException | LinkageError e) {
            return Optional.empty();
        }
    }

    /** Sets the nice value of every C2 thread not seen before; returns how many it set. On the timer, or at start. */
    synchronized int apply() {
        List<Integer> threads = threads(tasks, prefix);
        done.retainAll(threads); // a thread id is reused only after its thread ended
        int set = 0;
        for (int tid : threads) {
            if (!done.add(tid)) {
                continue; // set (or refused) before: not asked again
            }
            try {
                if (libc.setpriority(PRIO_PROCESS, tid, nice) == 0) {
                    set++;
                    LOG.debug("event=compiler_priority_set tid={} nice={}", tid, nice);
                } else {
                    LOG.info("event=compiler_priority_refused tid={} nice={}", tid, nice);
                }
            } catch (RuntimeException | LinkageError e) {
                LOG.info("event=compiler_priority_failed tid={} reason={}", tid, e.toString());
            }
        }
        return set;
    }

    /** The ids of the threads under {@code tasks} (a {@code /proc/<pid>/task} folder) whose name starts so. */
    static List<Integer> threads(Path tasks, String prefix) {
        List<Integer> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(tasks)) {
            for (Path task : entries.toList()) {
                String name = task.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit)
                        && threadName(task).startsWith(prefix)) {
                    found.add(Integer.parseInt(name));
                }
            }
        } catch (IOException e) {
            LOG.debug("event=compiler_priority_scan_failed reason={}", e.toString());
        }
        return found;
    }

    /** A thread's name from its {@code comm} file; empty when the thread ended while we looked. */
    private static String threadName(Path task) {
        try {
            return Files.readString(task.resolve("comm"), StandardCharsets.UTF_8);
        } catch (IOException ended) {
            return "";
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
