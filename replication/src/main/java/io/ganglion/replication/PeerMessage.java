package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.LogPosition;
import java.util.List;
import java.util.Objects;

/** What replicas of one object say to each other over the peer link. The broker adds the object id on the wire. */
public sealed interface PeerMessage {

    /**
     * Owner to follower: records of the owner's log, in order. When {@code truncateFrom} is not negative the follower
     * first drops its records from that offset on: they diverge from the owner's log (a follower ignores a stale one, sent
     * on a report from before an earlier truncation: it never drops records of the epoch it follows, nor the record it
     * holds at that offset when it is this message's first). {@code sentMs} is the owner's
     * clock when it sent this; the follower echoes the latest it received in its {@link Progress}, which renews the
     * owner lease. A Replicate without records and without truncation is a lease renewal: the follower answers it at
     * once. {@code discardBelow} is the owner's log start (retention): the follower discards what it holds durably
     * below it, so its log, and its rebuild if it becomes owner, do not grow with everything ever settled.
     */
    record Replicate(Epoch epoch, long truncateFrom, List<Record> records, long sentMs, long discardBelow)
            implements PeerMessage {
        public Replicate {
            Objects.requireNonNull(epoch, "epoch");
            records = List.copyOf(records);
        }
    }

    /**
     * Follower to owner: where its log ends, how far it is durable, and its epoch history, so the owner can find any
     * divergence. {@code resync} asks the owner to feed it again from its end (it saw a gap). {@code echoMs} is the
     * highest {@link Replicate#sentMs} the follower received from this owner in this epoch ({@link Long#MIN_VALUE}:
     * none); a sealed follower sends no Progress, so an echo always predates its seal.
     */
    record Progress(
            Epoch epoch,
            Incarnation incarnation,
            EpochHistory history,
            long end,
            long durable,
            boolean resync,
            long echoMs)
            implements PeerMessage {
        public Progress {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(incarnation, "incarnation");
            Objects.requireNonNull(history, "history");
        }
    }

    /** Installer to a sealed source: send me what I lack up to {@code upTo}; here is my log. */
    record Fetch(Epoch installEpoch, EpochHistory history, long end, LogPosition upTo) implements PeerMessage {
        public Fetch {
            Objects.requireNonNull(installEpoch, "installEpoch");
            Objects.requireNonNull(history, "history");
            Objects.requireNonNull(upTo, "upTo");
        }
    }

    /**
     * Source to installer: your log differs from mine from {@code truncateFrom} (computed for the log the Fetch
     * described), here are {@code records} from there. The installer skips the records it holds already and cuts only
     * at the first that differs.
     */
    record FetchReply(Epoch installEpoch, long truncateFrom, List<Record> records) implements PeerMessage {
        public FetchReply {
            Objects.requireNonNull(installEpoch, "installEpoch");
            records = List.copyOf(records);
        }
    }

    /**
     * Owner or source to a copy that needs records the sender has discarded: reseed. Start an empty log at {@code
     * start} with the sender's history; every record below {@code start} was settled. {@code epoch} is the streaming
     * epoch or the install epoch.
     */
    record Snapshot(Epoch epoch, long start, EpochHistory history) implements PeerMessage {
        public Snapshot {
            Objects.requireNonNull(epoch, "epoch");
            Objects.requireNonNull(history, "history");
        }
    }
}
