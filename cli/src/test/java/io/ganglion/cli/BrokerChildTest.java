package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerChildTest {
    @TempDir
    Path dir;

    @Test
    void shouldGiveABrokerZgcTheTrapLimitsAndASmallInitialHeapUnlessItsOptionsSetThem() throws IOException {
        Path kernel = hugePageSettings("always [madvise] never", "always within_size advise [never] deny force");
        assertThat(BrokerChild.jvmCommand(List.of("-Xmx256m"), kernel))
                .containsExactly(
                        "-XX:+UseZGC",
                        "-XX:-ZProactive",
                        "-XX:PerMethodTrapLimit=0",
                        "-XX:PerBytecodeTrapLimit=0",
                        "-Xms64m",
                        "-Xmx256m");
        assertThat(BrokerChild.jvmCommand(List.of("-XX:+UseParallelGC", "-XX:PerMethodTrapLimit=100", "-Xms1g"), dir))
                .containsExactly(
                        "-XX:PerBytecodeTrapLimit=0", "-XX:+UseParallelGC", "-XX:PerMethodTrapLimit=100", "-Xms1g");
        assertThat(BrokerChild.jvmCommand(List.of("-XX:InitialHeapSize=128m"), dir))
                .doesNotContain(BrokerChild.DEFAULT_INITIAL_HEAP);
    }

    /** ZGC's proactive major collections off unless the options say; other collectors have none. */
    @Test
    void shouldTurnZgcProactiveCollectionsOffUnlessTheOptionsSay() {
        assertThat(BrokerChild.jvmCommand(List.of(), dir)).contains(BrokerChild.NO_PROACTIVE_COLLECTIONS);
        assertThat(BrokerChild.jvmCommand(List.of("-XX:+UseZGC"), dir)).contains(BrokerChild.NO_PROACTIVE_COLLECTIONS);
        assertThat(BrokerChild.jvmCommand(List.of("-XX:+ZProactive"), dir))
                .doesNotContain(BrokerChild.NO_PROACTIVE_COLLECTIONS)
                .contains("-XX:+ZProactive");
        assertThat(BrokerChild.jvmCommand(List.of("-XX:+UseG1GC"), dir))
                .noneMatch(option -> option.contains("ZProactive"));
    }

    /** Huge pages for the heap only where the kernel grants them to the collector's kind of memory. */
    @Test
    void shouldAskForHugePagesOnlyWhereTheKernelAllowsThemForTheHeap() throws IOException {
        Path debian = hugePageSettings("always [madvise] never", "always within_size advise [never] deny force");
        Path advised = hugePageSettings("always [madvise] never", "always within_size [advise] never deny force");
        Path none = hugePageSettings("always madvise [never]", "always within_size [advise] never deny force");

        // ZGC's heap is shared memory
        assertThat(BrokerChild.jvmCommand(List.of(), debian)).doesNotContain(BrokerChild.HUGE_PAGES);
        assertThat(BrokerChild.jvmCommand(List.of(), advised)).contains(BrokerChild.HUGE_PAGES);
        // G1's is anonymous memory
        assertThat(BrokerChild.jvmCommand(List.of("-XX:+UseG1GC"), debian)).contains(BrokerChild.HUGE_PAGES);
        assertThat(BrokerChild.jvmCommand(List.of("-XX:+UseG1GC"), none)).doesNotContain(BrokerChild.HUGE_PAGES);
        // the options decide when they say
        assertThat(BrokerChild.jvmCommand(List.of("-XX:-UseTransparentHugePages"), advised))
                .containsExactly(
                        "-XX:+UseZGC",
                        "-XX:-ZProactive",
                        "-XX:PerMethodTrapLimit=0",
                        "-XX:PerBytecodeTrapLimit=0",
                        "-Xms64m",
                        "-XX:-UseTransparentHugePages");
        // no such files (not Linux, or no THP in the kernel): nothing asked
        assertThat(BrokerChild.jvmCommand(List.of(), dir.resolve("absent"))).doesNotContain(BrokerChild.HUGE_PAGES);
    }

    private Path hugePageSettings(String enabled, String shmem) throws IOException {
        Path settings = java.nio.file.Files.createTempDirectory(dir, "thp");
        java.nio.file.Files.writeString(settings.resolve("enabled"), enabled + "\n");
        java.nio.file.Files.writeString(settings.resolve("shmem_enabled"), shmem + "\n");
        return settings;
    }

    /** A broker that exits at start is reported at once, with the last lines it wrote into its log. */
    @Test
    void shouldReportABrokerThatExitsAtStartWithItsLastLines() throws Exception {
        BrokerChild broker = new BrokerChild(
                dir.resolve("b"),
                List.of("-Xmx64m"),
                BrokerChild.freePort(),
                BrokerChild.freePort(),
                Map.of("no.such.setting", "1"));
        try {
            broker.launch();
            assertThatThrownBy(broker::awaitListening)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("broker exited")
                    .hasMessageContaining("no.such.setting");
        } finally {
            broker.kill();
        }
    }

    /**
     * Ports are handed out below the ephemeral range, each once, and free: nothing bound to port 0 (an outgoing
     * connection, a warm-up group) can take one before its broker binds it.
     */
    @Test
    void shouldHandOutFreePortsBelowTheEphemeralRangeEachOnce() throws Exception {
        java.util.Set<Integer> ports = new java.util.HashSet<>();
        for (int i = 0; i < 20; i++) {
            int port = BrokerChild.freePort();
            assertThat(port)
                    .isBetween(BrokerChild.FIRST_PORT, BrokerChild.LAST_PORT - 1)
                    .isLessThan(32_768);
            assertThat(ports.add(port)).as("port %d handed out twice", port).isTrue();
        }
        int taken = BrokerChild.freePort();
        try (java.net.ServerSocket socket = new java.net.ServerSocket(taken)) {
            assertThat(BrokerChild.freePort()).isNotEqualTo(taken);
        }
    }
}
