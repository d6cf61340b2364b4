package io.ganglion.bench.jmh;

import io.ganglion.queues.ConsumerKey;
import io.ganglion.queues.QueueEffects;
import io.ganglion.queues.QueueMachine;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The queue machine's cost per message on the path every publish takes, a message enqueued, delivered to a consumer
 * with room and acknowledged, without and with the lifecycle of PerfTest's lifecycle case ({@code x-message-ttl}
 * 60000 and {@code x-max-length} 1000000): the TTL's heap and map, the length check.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class QueueMachineBenchmark {
    private static final ConsumerKey CONSUMER = new ConsumerKey(1, "c");

    @Param({"plain", "lifecycle"})
    String queue;

    private QueueMachine machine;
    private boolean lifecycle;
    private long offset;
    private long nowMs;
    private Blackhole sink;

    private final QueueEffects effects = new QueueEffects() {
        @Override
        public void deliver(ConsumerKey consumer, long delivered, boolean redelivered) {
            sink.consume(delivered);
        }

        @Override
        public void settle(long settled) {
            sink.consume(settled);
        }
    };

    @Setup(Level.Iteration)
    public void setUp(Blackhole blackhole) {
        sink = blackhole;
        lifecycle = queue.equals("lifecycle");
        machine = lifecycle ? new QueueMachine(new QueueMachine.Limits(1_000_000, -1)) : new QueueMachine();
        machine.advance(0, effects);
        machine.consume(CONSUMER, 1_000, false, false, effects);
        offset = 0;
        nowMs = 0;
    }

    @Benchmark
    public void enqueueDeliverAck() {
        long at = offset++;
        if ((at & 63) == 0) {
            machine.advance(++nowMs, effects); // the owner's gate tick and each operation move the clock on
        }
        machine.enqueue(at, nowMs, lifecycle ? nowMs + 60_000 : QueueMachine.NEVER, 0, effects);
        machine.ack(at, effects);
    }
}
