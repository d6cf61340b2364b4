package io.ganglion.broker.jvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class SoftMaxHeapTest {

    private static final long MIB = 1L << 20;

    @Test
    void shouldTakeTheShareOfTheMaximumHeapInWholeMebibytes() {
        assertThat(SoftMaxHeap.bytes(512 * MIB, 40)).isEqualTo(204 * MIB);
        assertThat(SoftMaxHeap.bytes(6L << 30, 40)).isEqualTo(2457 * MIB);
        assertThat(SoftMaxHeap.bytes(512 * MIB, 100)).isEqualTo(512 * MIB);
        assertThat(SoftMaxHeap.bytes(2 * MIB, 1)).as("never under 1 MiB").isEqualTo(MIB);
        assertThatThrownBy(() -> SoftMaxHeap.bytes(512 * MIB, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SoftMaxHeap.bytes(512 * MIB, 101)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldLeaveAValueTheJvmOptionsChose() {
        assertThat(SoftMaxHeap.chosenElsewhere(option(VMOption.Origin.DEFAULT))).isFalse();
        assertThat(SoftMaxHeap.chosenElsewhere(option(VMOption.Origin.ERGONOMIC)))
                .isFalse();
        assertThat(SoftMaxHeap.chosenElsewhere(option(VMOption.Origin.VM_CREATION)))
                .isTrue();
        assertThat(SoftMaxHeap.chosenElsewhere(option(VMOption.Origin.ENVIRON_VAR)))
                .isTrue();
        assertThat(SoftMaxHeap.chosenElsewhere(option(VMOption.Origin.MANAGEMENT)))
                .isTrue();
    }

    @Test
    void shouldDoNothingAtZero() {
        assertThat(SoftMaxHeap.apply(0)).isEmpty();
    }

    @Test
    void shouldSetTheFlagOfThisJvmOnceAndOnlyIfNobodyChoseIt() {
        HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        VMOption before = hotspot.getVMOption(SoftMaxHeap.FLAG);
        assumeTrue(!SoftMaxHeap.chosenElsewhere(before), "the test JVM's options set the flag");
        try {
            long expected = SoftMaxHeap.bytes(Runtime.getRuntime().maxMemory(), 40);

            assertThat(SoftMaxHeap.apply(40)).hasValue(expected);
            VMOption after = hotspot.getVMOption(SoftMaxHeap.FLAG);
            assertThat(Long.parseLong(after.getValue())).isEqualTo(expected);
            assertThat(after.getOrigin()).isEqualTo(VMOption.Origin.MANAGEMENT);

            assertThat(SoftMaxHeap.apply(60)).as("set already: left alone").isEmpty();
            assertThat(Long.parseLong(hotspot.getVMOption(SoftMaxHeap.FLAG).getValue()))
                    .isEqualTo(expected);
        } finally {
            hotspot.setVMOption(SoftMaxHeap.FLAG, before.getValue()); // the test JVM's collector as it was
        }
    }

    private static VMOption option(VMOption.Origin origin) {
        return new VMOption(SoftMaxHeap.FLAG, "1000", true, origin);
    }
}
