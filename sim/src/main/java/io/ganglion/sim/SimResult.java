package io.ganglion.sim;

import java.util.List;

/**
 * What one run gives: its seed, the trace hash (equal for two runs of one seed), how many events ran, how much virtual
 * time it covered, the violations the checker found, and counters.
 */
public record SimResult(
        long seed,
        long traceHash,
        long events,
        long virtualMs,
        List<String> violations,
        SimStats stats,
        String summary) {
    public SimResult {
        violations = List.copyOf(violations);
    }

    public boolean ok() {
        return violations.isEmpty();
    }

    /** The line a failing seed prints, so it can be run again on its own. */
    public String reproduce() {
        return "seed " + seed + " (rerun with -Dganglion.sim.seed=" + seed + "): " + summary + "\n  "
                + String.join("\n  ", violations);
    }
}
