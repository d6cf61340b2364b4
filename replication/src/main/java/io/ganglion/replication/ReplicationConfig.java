package io.ganglion.replication;

/**
 * Tuning of the data path, fixed per broker.
 *
 * @param windowRecords records streamed to one follower and not yet acknowledged, at most
 * @param windowBytes bytes streamed to one follower and not yet acknowledged, at most; a follower behind the window is
 *     fed from the log by reads instead of from the live stream
 * @param fetchRecords records per log read (feeding a follower, serving an install)
 * @param resendAfterMs a follower whose reported end stays behind what was sent this long after the last send is fed
 *     again from its end (a message lost on the link)
 * @param progressEveryMs a follower reports its progress at least this often, so an owner learns of it after a fault
 * @param learnerLag a suspended follower (it came back with a new incarnation) is counted again once its durable
 *     offset is within this many records of the owner's log end
 * @param installRetryMs an install waiting on a source this long asks the next source
 */
public record ReplicationConfig(
        int windowRecords,
        long windowBytes,
        int fetchRecords,
        long resendAfterMs,
        long progressEveryMs,
        long learnerLag,
        long installRetryMs) {

    public ReplicationConfig {
        if (windowRecords < 1 || windowBytes < 1 || fetchRecords < 1) {
            throw new IllegalArgumentException("window and fetch sizes must be positive");
        }
    }

    public static ReplicationConfig defaults() {
        return new ReplicationConfig(256, 1 << 20, 256, 200, 100, 64, 500);
    }
}
