package io.ganglion.broker.jvm;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.lang.management.ManagementFactory;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks this JVM's collector to keep the heap within a share of its maximum while it can: the JVM's {@code
 * SoftMaxHeapSize}, a flag that may be set while the JVM runs. ZGC then collects before the heap grows past it and
 * grows past it only when the live data needs the room; the maximum stays the hard limit.
 *
 * <p>Why: a broker killed with {@code kill -9} closes its sockets only once its kernel has torn down its memory, and
 * its peers learn of the death from nothing sooner. ZGC left alone fills the heap to its maximum before it collects
 * (a broker of {@code -Xmx512m} under the failover bench: 430-480 MB of heap resident, 650-700 MB in all); kept to 40%
 * the same broker holds about 200 MB of heap at the same load, with no more CPU, and its sockets closed after a
 * SIGKILL in about half the time (docs/operations.md, "A smaller heap"). The launchers also start the heap small
 * ({@code -Xms64m}): the JVM's default initial heap, a 64th of the machine's memory, is committed at start and never
 * given back.
 *
 * <p>A value the JVM's options set ({@code -XX:SoftMaxHeapSize=...}) is left alone.
 */
public final class SoftMaxHeap {
    private static final Logger LOG = LoggerFactory.getLogger(SoftMaxHeap.class);

    static final String FLAG = "SoftMaxHeapSize";

    private SoftMaxHeap() {}

    /**
     * Sets {@code SoftMaxHeapSize} to {@code percent} of the maximum heap, unless {@code percent} is 0 or the JVM's
     * options chose a value; returns the value set.
     */
    public static OptionalLong apply(int percent) {
        if (percent == 0) {
            return OptionalLong.empty();
        }
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            VMOption current = hotspot.getVMOption(FLAG);
            if (chosenElsewhere(current)) {
                LOG.info("event=soft_max_heap_kept bytes={} origin={}", current.getValue(), current.getOrigin());
                return OptionalLong.empty();
            }
            long maxHeap = Runtime.getRuntime().maxMemory();
            long bytes = bytes(maxHeap, percent);
            hotspot.setVMOption(FLAG, Long.toString(bytes));
            LOG.info("event=soft_max_heap bytes={} percent={} max_heap_bytes={}", bytes, percent, maxHeap);
            return OptionalLong.of(bytes);
        } catch (RuntimeException e) { // not a HotSpot JVM, or one without the flag or that refuses to set it
            LOG.info("event=soft_max_heap_unavailable cause={}", e.toString());
            return OptionalLong.empty();
        }
    }

    /**
     * Whether the flag's value was chosen by someone (the JVM's options, its environment, an earlier setting) rather than
     * by the JVM itself (its default, or its ergonomics: ZGC sets it near the maximum).
     */
    static boolean chosenElsewhere(VMOption option) {
        return option.getOrigin() != VMOption.Origin.DEFAULT && option.getOrigin() != VMOption.Origin.ERGONOMIC;
    }

    /** {@code percent} of {@code maxHeap}, rounded down to a whole MiB, at least 1 MiB. */
    static long bytes(long maxHeap, int percent) {
        if (percent < 1 || percent > 100) {
            throw new IllegalArgumentException("percent must be 1 to 100, got " + percent);
        }
        long mib = 1L << 20;
        return Math.max(mib, maxHeap * percent / 100 / mib * mib);
    }
}
