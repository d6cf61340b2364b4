package io.ganglion.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The flags a Ganglion JVM starts with: the one policy for the JVM that {@code bin/ganglion} runs (which asks {@code
 * java -cp ganglion-cli.jar io.ganglion.cli.JvmFlags COMMAND}) and for the brokers the CLI starts itself ({@link
 * BrokerChild}). Each default is left out where the given options set it, and the given options come last, so they win.
 * Why each flag: docs/operations.md, "JVM flags".
 */
final class JvmFlags {
    /** Which JVM: the defaults differ in heap size and native access. */
    enum Jvm {
        /** {@code bin/ganglion server}, {@code local}, {@code ctl}: a small initial heap, native access for JNA. */
        COMMAND,
        /** {@code bin/ganglion bench}: the client's heap fixed and touched once at start, native access. */
        BENCH,
        /** A broker started by {@link BrokerChild}: a small initial heap; its caller passes native access. */
        BROKER_CHILD
    }

    /** Generational ZGC unless a collector is named: a collector's pause is a silence in every queue's confirms. */
    static final String COLLECTOR = "-XX:+UseZGC";

    /** With ZGC: no proactive major collections, which marked the whole heap for nothing under a steady load. */
    static final String NO_PROACTIVE_COLLECTIONS = "-XX:-ZProactive";

    /** C2 compiles both sides of every branch: no deoptimization storm on the day a peer goes away. */
    static final List<String> TRAP_LIMITS = List.of("-XX:PerMethodTrapLimit=0", "-XX:PerBytecodeTrapLimit=0");

    /** A small initial heap: the JVM's default (a 64th of the memory) is committed at start and never given back. */
    static final String INITIAL_HEAP = "-Xms64m";

    /** A bench client's heap, fixed and touched at start: no page faults in its threads while it measures. */
    static final List<String> BENCH_HEAP = List.of("-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch");

    /** The heap in transparent huge pages where the kernel grants them: a killed broker's memory is freed sooner. */
    static final String HUGE_PAGES = "-XX:+UseTransparentHugePages";

    /** JNA (a server's setpriority for its compiler threads) loads native code: allowed rather than warned about. */
    static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";

    /** Where Linux says which transparent huge pages a process may ask for. */
    static final Path TRANSPARENT_HUGE_PAGES = Path.of("/sys/kernel/mm/transparent_hugepage");

    private JvmFlags() {}

    /**
     * Prints the flags for {@code bin/ganglion COMMAND}, one a line: the defaults, then {@code GANGLION_JAVA_OPTS} split
     * at white space.
     */
    public static void main(String[] args) {
        Jvm jvm = args.length > 0 && args[0].equals("bench") ? Jvm.BENCH : Jvm.COMMAND;
        String options = System.getenv("GANGLION_JAVA_OPTS");
        List<String> given = options == null || options.isBlank()
                ? List.of()
                : List.of(options.strip().split("\\s+"));
        StringBuilder out = new StringBuilder();
        for (String flag : flags(jvm, given, TRANSPARENT_HUGE_PAGES)) {
            out.append(flag).append('\n');
        }
        System.out.print(out);
    }

    /** The flags for {@code jvm}: the defaults that {@code options} does not set, then {@code options}. */
    static List<String> flags(Jvm jvm, List<String> options) {
        return flags(jvm, options, TRANSPARENT_HUGE_PAGES);
    }

    static List<String> flags(Jvm jvm, List<String> options, Path hugePageSettings) {
        List<String> flags = new ArrayList<>();
        if (options.stream().noneMatch(JvmFlags::choosesCollector)) {
            flags.add(COLLECTOR);
        }
        boolean zgc = options.stream()
                .filter(JvmFlags::choosesCollector)
                .reduce((first, last) -> last)
                .orElse(COLLECTOR)
                .equals(COLLECTOR);
        if (zgc && options.stream().noneMatch(option -> option.contains("ZProactive"))) {
            flags.add(NO_PROACTIVE_COLLECTIONS);
        }
        for (String limit : TRAP_LIMITS) {
            String name = limit.substring(0, limit.indexOf('=') + 1);
            if (options.stream().noneMatch(option -> option.startsWith(name))) {
                flags.add(limit);
            }
        }
        if (jvm == Jvm.BENCH) {
            if (options.stream().noneMatch(option -> option.startsWith("-Xmx") || option.startsWith("-Xms"))) {
                flags.addAll(BENCH_HEAP);
            }
        } else if (options.stream().noneMatch(JvmFlags::setsInitialHeap)) {
            flags.add(INITIAL_HEAP);
        }
        if (options.stream().noneMatch(option -> option.contains("TransparentHugePages"))
                && hugePagesForHeap(hugePageSettings, zgc)) {
            flags.add(HUGE_PAGES);
        }
        if (jvm != Jvm.BROKER_CHILD
                && options.stream().noneMatch(option -> option.startsWith("--enable-native-access="))) {
            flags.add(NATIVE_ACCESS);
        }
        flags.addAll(options);
        return flags;
    }

    static boolean choosesCollector(String option) {
        return option.startsWith("-XX:+Use") && option.endsWith("GC");
    }

    static boolean setsInitialHeap(String option) {
        return option.startsWith("-Xms") || option.startsWith("-XX:InitialHeapSize=");
    }

    /**
     * Whether the kernel lets a process ask for huge pages for this collector's heap (asked for where it refuses, the JVM
     * warns at every start). ZGC's heap is shared memory ({@code shmem_enabled} at {@code advise} or more), other
     * collectors' is anonymous memory ({@code enabled} at {@code madvise} or {@code always}).
     */
    static boolean hugePagesForHeap(Path settings, boolean zgc) {
        String mode = selected(settings.resolve(zgc ? "shmem_enabled" : "enabled"));
        return zgc
                ? List.of("always", "within_size", "advise", "force").contains(mode)
                : List.of("always", "madvise").contains(mode);
    }

    /** The bracketed choice of a kernel setting file ({@code always [madvise] never}), or "" if unreadable. */
    private static String selected(Path file) {
        try {
            String text = Files.readString(file);
            int open = text.indexOf('[');
            int close = text.indexOf(']', open + 1);
            return open < 0 || close < 0 ? "" : text.substring(open + 1, close);
        } catch (IOException e) {
            return "";
        }
    }
}
