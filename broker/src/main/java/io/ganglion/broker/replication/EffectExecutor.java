package io.ganglion.broker.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.ObjectId;
import io.ganglion.replication.Replica;
import io.ganglion.replication.ReplicaEffect;
import io.ganglion.replication.ReplicaEvent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out one {@link ReplicaEffect} of a {@link ReplicaHost}'s replica: storage calls on its {@link HostLog},
 * messages through its {@link PeerOutbox}, recovery replies to its {@link RecoveryReplySink}, confirms, refusals and
 * deliverable offsets to the queue layer. An effect that answers synchronously (a flush, a log read) queues its answer
 * in the host's {@code answers}, handled after the current effect list. On the host's shard thread, once the replica
 * runs.
 */
final class EffectExecutor {
    private static final Logger LOG = LoggerFactory.getLogger(EffectExecutor.class);

    private final ObjectId object;
    private final ReplicationContext context;
    private final Replica replica;
    private final HostLog log;
    private final PeerOutbox outbox;
    private final RecoveryReplySink replies;
    private final OutstandingPublishes outstanding;
    private final ReplicaListener listener;
    private final ArrayDeque<ReplicaEvent> answers;
    private final BiConsumer<Epoch, Throwable> sealForced;

    /**
     * @param answers where answers of synchronous effects go, for the host's loop
     * @param sealForced hears a persisted seal's force ({@code null} error) or its failure, on the store's completion
     *     thread
     */
    EffectExecutor(
            ObjectId object,
            ReplicationContext context,
            Replica replica,
            HostLog log,
            PeerOutbox outbox,
            RecoveryReplySink replies,
            OutstandingPublishes outstanding,
            ReplicaListener listener,
            ArrayDeque<ReplicaEvent> answers,
            BiConsumer<Epoch, Throwable> sealForced) {
        this.object = object;
        this.context = context;
        this.replica = replica;
        this.log = log;
        this.outbox = outbox;
        this.replies = replies;
        this.outstanding = outstanding;
        this.listener = listener;
        this.answers = answers;
        this.sealForced = sealForced;
    }

    /**
     * @throws HostLog.Backlogged when the log takes an append only in part: the effect list waits (flow control)
     * @throws IOException when a storage call fails; the host then stops for good
     */
    void execute(ReplicaEffect effect) throws IOException {
        switch (effect) {
            case ReplicaEffect.Append append -> {
                long now = context.clockMs().getAsLong();
                log.append(append.records(), replica.ownedEpoch().isPresent(), now);
            }
            case ReplicaEffect.Truncate truncate -> log.truncateFrom(truncate.from());
            case ReplicaEffect.Flush flush -> answers.addLast(new ReplicaEvent.AppendDurable(log.durableOffset()));
            case ReplicaEffect.PersistSeal seal -> persistSeal(seal.epoch());
            case ReplicaEffect.Discard discard -> log.discard(discard.below());
            case ReplicaEffect.Reseed reseed -> log.reseed(reseed.start(), reseed.history());
            case ReplicaEffect.ReadLog read ->
                answers.addLast(new ReplicaEvent.LogRead(
                        read.purpose(), read.peer(), log.readForReplica(read.from(), read.to())));
            case ReplicaEffect.Send send -> outbox.send(send.to(), send.message());
            case ReplicaEffect.ReplySealed sealed -> {
                // with recovery_request_received: how long this broker took over its part of a recovery
                LOG.info(
                        "event=recovery_reply object={} sealed={} log_end={}",
                        object,
                        sealed.epoch(),
                        sealed.reply().logEnd());
                replies.sealed(sealed.controller(), object, sealed.epoch(), sealed.reply());
            }
            case ReplicaEffect.ReplyInstalled installed -> {
                LOG.info("event=recovery_reply object={} installed={}", object, installed.epoch());
                replies.installed(installed.controller(), object, installed.epoch(), context.self());
            }
            case ReplicaEffect.ReplyDropped dropped -> {
                LOG.info(
                        "event=recovery_reply object={} dropped={} epoch={}",
                        object,
                        dropped.follower(),
                        dropped.epoch());
                replies.dropped(dropped.controller(), object, dropped.epoch(), context.self(), dropped.follower());
            }
            case ReplicaEffect.Confirm confirm -> outstanding.confirmed(confirm.id(), confirm.offset());
            case ReplicaEffect.Refuse refuse -> outstanding.refused(refuse.id(), refuse.reason());
            case ReplicaEffect.Deliverable deliverable -> listener.deliverable(deliverable.epoch(), deliverable.upTo());
        }
    }

    private void persistSeal(Epoch epoch) {
        log.seal(epoch).whenComplete((result, error) -> sealForced.accept(epoch, error));
    }
}
