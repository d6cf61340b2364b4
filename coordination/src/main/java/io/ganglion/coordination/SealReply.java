package io.ganglion.coordination;

import java.util.Objects;

/**
 * What a replica reports after it durably sealed an epoch: where its log ends and how far it is durable. The replica
 * refuses appends of the sealed epoch or earlier from then on.
 */
public record SealReply(NodeId node, LogPosition logEnd, long durableOffset) {
    public SealReply {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(logEnd, "logEnd");
    }
}
