package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.cli.JvmFlags.Jvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JvmFlagsTest {
    @TempDir
    Path dir;

    @Test
    void shouldGiveAServerZgcTheTrapLimitsASmallHeapHugePagesAndNativeAccess() throws IOException {
        Path kernel = advisedHugePages();
        assertThat(JvmFlags.flags(Jvm.COMMAND, List.of(), kernel))
                .containsExactlyElementsOf(zgcWithTrapLimitsThen(
                        "-Xms64m", "-XX:+UseTransparentHugePages", "--enable-native-access=ALL-UNNAMED"));
    }

    @Test
    void shouldGiveABenchClientAFixedPreTouchedHeap() throws IOException {
        Path debian = debianHugePages();
        assertThat(JvmFlags.flags(Jvm.BENCH, List.of(), debian))
                .containsExactlyElementsOf(zgcWithTrapLimitsThen(
                        "-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch", "--enable-native-access=ALL-UNNAMED"));
        assertThat(JvmFlags.flags(Jvm.BENCH, List.of("-Xmx2g"), debian))
                .doesNotContain("-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch")
                .endsWith("-Xmx2g");
    }

    /** A broker the CLI starts gets a server's flags but native access, which its caller passes. */
    @Test
    void shouldGiveABrokerChildZgcTheTrapLimitsAndASmallInitialHeapUnlessItsOptionsSetThem() throws IOException {
        Path kernel = debianHugePages();
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-Xmx256m"), kernel))
                .containsExactlyElementsOf(zgcWithTrapLimitsThen("-Xms64m", "-Xmx256m"));
        assertThat(JvmFlags.flags(
                        Jvm.BROKER_CHILD, List.of("-XX:+UseParallelGC", "-XX:PerMethodTrapLimit=100", "-Xms1g"), dir))
                .containsExactly(
                        "-XX:PerBytecodeTrapLimit=0", "-XX:+UseParallelGC", "-XX:PerMethodTrapLimit=100", "-Xms1g");
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:InitialHeapSize=128m"), dir))
                .doesNotContain(JvmFlags.INITIAL_HEAP);
    }

    /** Every default the given options set is left out, and the given options come last. */
    @Test
    void shouldHonourTheGivenOptionsOverEachDefault() throws IOException {
        Path advised = advisedHugePages();
        List<String> given = List.of(
                "-XX:+UseG1GC",
                "-XX:PerMethodTrapLimit=100",
                "-XX:PerBytecodeTrapLimit=200",
                "-Xms256m",
                "-XX:-UseTransparentHugePages",
                "--enable-native-access=ALL-UNNAMED");
        assertThat(JvmFlags.flags(Jvm.COMMAND, given, advised)).containsExactlyElementsOf(given);
        assertThat(JvmFlags.flags(Jvm.COMMAND, List.of("-Dx=1"), advised)).endsWith("-Dx=1");
    }

    /** ZGC's proactive major collections off unless the options say; other collectors have none. */
    @Test
    void shouldTurnZgcProactiveCollectionsOffUnlessTheOptionsSay() {
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of(), dir)).contains(JvmFlags.NO_PROACTIVE_COLLECTIONS);
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:+UseZGC"), dir))
                .contains(JvmFlags.NO_PROACTIVE_COLLECTIONS);
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:+ZProactive"), dir))
                .doesNotContain(JvmFlags.NO_PROACTIVE_COLLECTIONS)
                .contains("-XX:+ZProactive");
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:+UseG1GC"), dir))
                .noneMatch(option -> option.contains("ZProactive"));
    }

    /** Huge pages for the heap only where the kernel grants them to the collector's kind of memory. */
    @Test
    void shouldAskForHugePagesOnlyWhereTheKernelAllowsThemForTheHeap() throws IOException {
        Path debian = debianHugePages();
        Path advised = advisedHugePages();
        Path none = hugePageSettings("always madvise [never]", "always within_size [advise] never deny force");

        // ZGC's heap is shared memory
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of(), debian)).doesNotContain(JvmFlags.HUGE_PAGES);
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of(), advised)).contains(JvmFlags.HUGE_PAGES);
        // G1's is anonymous memory
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:+UseG1GC"), debian))
                .contains(JvmFlags.HUGE_PAGES);
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:+UseG1GC"), none))
                .doesNotContain(JvmFlags.HUGE_PAGES);
        // the options decide when they say
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of("-XX:-UseTransparentHugePages"), advised))
                .containsExactlyElementsOf(zgcWithTrapLimitsThen("-Xms64m", "-XX:-UseTransparentHugePages"));
        // no such files (not Linux, or no THP in the kernel): nothing asked
        assertThat(JvmFlags.flags(Jvm.BROKER_CHILD, List.of(), dir.resolve("absent")))
                .doesNotContain(JvmFlags.HUGE_PAGES);
    }

    /** ZGC with proactive collections off and both trap limits at 0, the start of each default list, then {@code rest}. */
    private static List<String> zgcWithTrapLimitsThen(String... rest) {
        List<String> flags = new ArrayList<>(
                List.of("-XX:+UseZGC", "-XX:-ZProactive", "-XX:PerMethodTrapLimit=0", "-XX:PerBytecodeTrapLimit=0"));
        flags.addAll(List.of(rest));
        return flags;
    }

    /** Debian's default: huge pages on advice for anonymous memory, never for shared memory. */
    private Path debianHugePages() throws IOException {
        return hugePageSettings("always [madvise] never", "always within_size advise [never] deny force");
    }

    /** Huge pages on advice for both anonymous and shared memory. */
    private Path advisedHugePages() throws IOException {
        return hugePageSettings("always [madvise] never", "always within_size [advise] never deny force");
    }

    private Path hugePageSettings(String enabled, String shmem) throws IOException {
        Path settings = Files.createTempDirectory(dir, "thp");
        Files.writeString(settings.resolve("enabled"), enabled + "\n");
        Files.writeString(settings.resolve("shmem_enabled"), shmem + "\n");
        return settings;
    }
}
