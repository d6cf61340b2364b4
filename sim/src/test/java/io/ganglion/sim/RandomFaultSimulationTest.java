package io.ganglion.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Random faults over many seeds (500 by default), with publishers and consumers on every object. {@code -Dganglion.sim.seeds=N} runs N seeds for a soak and prints
 * seeds per second and simulated hours; {@code -Dganglion.sim.seed=S} runs only seed S; {@code
 * -Dganglion.sim.firstSeed=F} starts elsewhere.
 */
class RandomFaultSimulationTest {

    @Test
    void shouldKeepEveryInvariantUnderRandomFaults() {
        String single = System.getProperty("ganglion.sim.seed");
        long first = Long.getLong("ganglion.sim.firstSeed", 1);
        long count = Long.getLong("ganglion.sim.seeds", 500);
        if (single != null) {
            first = Long.parseLong(single);
            count = 1;
        }
        List<String> failures = new ArrayList<>();
        long virtualMs = 0;
        long events = 0;
        long activations = 0;
        long joined = 0;
        long dropped = 0;
        long confirmed = 0;
        long stalled = 0;
        long confirmedPublishes = 0;
        long delivered = 0;
        long resent = 0;
        long holds = 0;
        long reseeds = 0;
        long expired = 0;
        long ttlRuns = 0;
        long started = System.nanoTime();
        for (long seed = first; seed < first + count; seed++) {
            SimResult result = RandomFaults.run(seed);
            virtualMs += result.virtualMs();
            events += result.events();
            activations += result.stats().activations();
            joined += result.stats().followersAdded();
            dropped += result.stats().followersDropped();
            confirmed += result.stats().confirmed();
            stalled += result.stats().stalledAfterHeal();
            confirmedPublishes += result.stats().confirmedPublishes();
            delivered += result.stats().delivered();
            resent += result.stats().resent();
            holds += result.stats().deliveryHolds();
            reseeds += result.stats().reseeds();
            expired += result.stats().expired();
            if (RandomFaults.messageTtlMs(seed) != SimConfig.NO_TTL) {
                ttlRuns++;
            }
            if (single != null) {
                System.out.println("seed " + seed + " trace hash " + Long.toHexString(result.traceHash()) + ": "
                        + result.summary());
            }
            if (!result.ok()) {
                failures.add(result.reproduce());
                System.out.println("FAILED " + result.reproduce());
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf(
                "sim: %d seeds from %d in %.1f s: %.1f seeds/s, %.2f simulated hours, %d events, %d activations,"
                        + " %d followers joined an activated epoch, %d left one, %d commits advanced, %d publishes confirmed, %d deliveries, %d re-sent publishes,"
                        + " %d deliveries held by the owner lease, %d reseeds, %d messages expired in %d runs with a message TTL,"
                        + " %d objects stalled by a restarted owner, %d failed%n",
                count,
                first,
                seconds,
                count / seconds,
                virtualMs / 3_600_000.0,
                events,
                activations,
                joined,
                dropped,
                confirmed,
                confirmedPublishes,
                delivered,
                resent,
                holds,
                reseeds,
                expired,
                ttlRuns,
                stalled,
                failures.size());
        assertThat(failures).as("failing seeds").isEmpty();
        assertThat(activations).as("the runs did recover objects").isGreaterThan(count);
        assertThat(joined)
                .as("returned brokers joined activated epochs as followers")
                .isGreaterThan(count / 10);
        assertThat(dropped)
                .as("lost followers left activated epochs without a recovery")
                .isGreaterThan(count / 10);
        assertThat(confirmedPublishes).as("publishes were confirmed").isGreaterThan(100 * count);
        assertThat(resent).as("the forwarding path ran").isGreaterThan(count);
        assertThat(holds).as("owners held deliveries for the owner lease").isGreaterThan(count);
        assertThat(reseeds)
                .as("owners discarded settled records and copies reseeded")
                .isGreaterThan(count / 10);
        if (ttlRuns > 0) {
            assertThat(expired).as("queue messages expired (message TTL)").isGreaterThan(ttlRuns);
        }
        assertThat(stalled)
                .as("objects left with a restarted owner in an old epoch")
                .isZero();
    }
}
