package io.ganglion.coordination;

import java.util.Objects;

/** The result of appending a record to an accepted history: the new history, or why the record does not fit. */
public sealed interface HistoryOutcome {

    record Accepted(AcceptedHistory history) implements HistoryOutcome {
        public Accepted {
            Objects.requireNonNull(history, "history");
        }
    }

    record Rejected(String reason) implements HistoryOutcome {
        public Rejected {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
