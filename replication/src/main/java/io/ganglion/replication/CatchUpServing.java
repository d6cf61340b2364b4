package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import io.ganglion.coordination.NodeId;
import io.ganglion.replication.PeerMessage.Fetch;
import io.ganglion.replication.PeerMessage.FetchReply;
import io.ganglion.replication.PeerMessage.Snapshot;
import io.ganglion.replication.ReplicaEffect.ReadLog;
import io.ganglion.replication.ReplicaEffect.ReadPurpose;
import java.util.List;
import java.util.TreeMap;

/**
 * This replica as the source of an install: answers a {@link Fetch} from a replica being installed with the records it
 * lacks up to the recovery point (read from the log), a {@link Snapshot} when they were discarded here, or an empty
 * reply when it holds them all. Whatever role this replica has, it serves.
 */
final class CatchUpServing {
    private record Serving(Epoch installEpoch, long from) {}

    private final LogState log;
    private final Effects out;
    private final int fetchRecords;
    /** Per replica being installed, the read in flight for it. */
    private final TreeMap<NodeId, Serving> serving = new TreeMap<>();

    CatchUpServing(LogState log, Effects out, int fetchRecords) {
        this.log = log;
        this.out = out;
        this.fetchRecords = fetchRecords;
    }

    void onFetch(NodeId from, Fetch fetch) {
        LogPosition upTo = fetch.upTo();
        if (!log.holds(upTo) || upTo.offset() < 0) {
            return;
        }
        long common = Math.min(
                EpochHistory.commonPrefix(log.history(), log.end(), fetch.history(), fetch.end()), upTo.offset() + 1);
        if (common < log.start()) {
            out.send(from, new Snapshot(fetch.installEpoch(), log.start(), log.history()));
            return;
        }
        if (common > upTo.offset()) {
            out.send(from, new FetchReply(fetch.installEpoch(), common, List.of()));
            return;
        }
        serving.put(from, new Serving(fetch.installEpoch(), common));
        out.add(new ReadLog(ReadPurpose.INSTALL, from, common, Math.min(upTo.offset(), common + fetchRecords - 1)));
    }

    /** The log read for {@code peer}'s install came back: send it the records. */
    void onRead(NodeId peer, List<Record> records) {
        Serving served = serving.remove(peer);
        if (served != null) {
            out.send(peer, new FetchReply(served.installEpoch(), served.from(), records));
        }
    }
}
