package io.ganglion.coordination;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The metadata commands of the coordination core: what the controller and declarations propose to the metadata log. */
public sealed interface CoordinationCommand {

    /** Declare an object. Rejected if it exists. */
    record CreateObject(ObjectSpec spec) implements CoordinationCommand {}

    /** Remove an object and its history. */
    record DeleteObject(ObjectId id) implements CoordinationCommand {}

    /** Live set changes: each node's status, incarnation, draining flag and the time of its last heartbeat. */
    record CommitLiveSet(List<NodeState> changes) implements CoordinationCommand {
        public CommitLiveSet {
            changes = List.copyOf(changes);
        }
    }

    /** One record for an object's accepted history; rejected unless it fits (see {@link AcceptedHistory#append}). */
    record AppendHistory(ObjectId id, HistoryRecord record) implements CoordinationCommand {
        public AppendHistory {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(record, "record");
        }
    }

    /**
     * Several commands in one log entry, applied in order as if proposed one after the other: each is accepted or
     * rejected on its own (a rejected one changes nothing), and the batch is rejected only if every command in it is.
     * One entry is one round of the metadata log, where commands proposed back to back took one round each whenever
     * the log had a round in flight. The controller proposes each tick's commands this way. A batch holds at least one
     * command and no batch.
     */
    record Batch(List<CoordinationCommand> commands) implements CoordinationCommand {
        public Batch {
            commands = List.copyOf(commands);
            if (commands.isEmpty()) {
                throw new IllegalArgumentException("an empty batch");
            }
            if (commands.stream().anyMatch(command -> command instanceof Batch)) {
                throw new IllegalArgumentException("a batch inside a batch");
            }
        }
    }

    /** Change runtime settings, checked together; rejected whole if any is unknown or invalid. */
    record SetSettings(Map<String, String> values) implements CoordinationCommand {
        public SetSettings {
            values = Map.copyOf(values);
        }
    }
}
