package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.BasicMethod;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Publisher confirms of one channel in confirm mode: the sequence numbers given to publishes (from 1), which are still
 * unconfirmed, and the {@code basic.ack} / {@code basic.nack} to send for those decided since the last {@link #drain()}.
 *
 * <p>Coalescing follows RabbitMQ's {@code rabbit_channel:coalesce_and_send/4}: of the sequence numbers decided in one
 * round, those below the cutoff (the smallest still unconfirmed, and the smallest decided the other way in the same
 * round) go as one {@code multiple=true} at the highest of them; the rest go one by one. A round that acks exactly one
 * publish sends it alone, {@code multiple=false}, as RabbitMQ's {@code send_confirms/3} does.
 *
 * <pre>
 *   assigned:  1 2 3 4 5 6        decided this round: ack 1 2 3 5, nack none; 4 and 6 unconfirmed
 *   sent:      basic.ack 3 multiple=true, basic.ack 5 multiple=false
 * </pre>
 *
 * <p>Implementation notes: owned by the channel's event loop. The unconfirmed set is a window {@code [low, next)} of
 * flags in a growable ring, so assigning and deciding are O(1) amortised however far the confirms arrive out of order.
 */
final class PublisherConfirms {
    private long next = 1;
    private long low = 1;
    private boolean[] decided = new boolean[64];
    private final List<Long> acks = new ArrayList<>();
    private final List<Long> nacks = new ArrayList<>();

    /** The sequence number of the next publish. */
    long assign() {
        if (next - low == decided.length) {
            grow();
        }
        return next++;
    }

    /** Marks {@code seq} confirmed ({@code ack}) or refused; a number outside the window is ignored. */
    void decide(long seq, boolean ack) {
        if (seq < low || seq >= next || decided[index(seq)]) {
            return;
        }
        decided[index(seq)] = true;
        while (low < next && decided[index(low)]) {
            decided[index(low)] = false;
            low++;
        }
        (ack ? acks : nacks).add(seq);
    }

    /** Whether acks or nacks wait to be sent. */
    boolean hasDecisions() {
        return !acks.isEmpty() || !nacks.isEmpty();
    }

    /** Whether every publish so far is decided. */
    boolean allDecided() {
        return low == next;
    }

    /** The methods to send for this round's decisions, acks first; the round is then empty. */
    List<BasicMethod> drain() {
        List<BasicMethod> out = new ArrayList<>(2);
        long[] acked = sorted(acks);
        long[] nacked = sorted(nacks);
        acks.clear();
        nacks.clear();
        if (acked.length == 1) {
            out.add(new BasicMethod.Ack(acked[0], false));
        } else if (acked.length > 1) {
            coalesce(acked, nacked, out, true);
        }
        if (nacked.length > 0) {
            coalesce(nacked, acked, out, false);
        }
        return out;
    }

    private void coalesce(long[] seqs, long[] others, List<BasicMethod> out, boolean ack) {
        long cutoff = allDecided() ? seqs[seqs.length - 1] + 1 : low;
        if (others.length > 0) {
            cutoff = Math.min(cutoff, others[0]);
        }
        int below = 0;
        while (below < seqs.length && seqs[below] < cutoff) {
            below++;
        }
        if (below > 0) {
            out.add(method(seqs[below - 1], true, ack));
        }
        for (int i = below; i < seqs.length; i++) {
            out.add(method(seqs[i], false, ack));
        }
    }

    private static BasicMethod method(long seq, boolean multiple, boolean ack) {
        return ack ? new BasicMethod.Ack(seq, multiple) : new BasicMethod.Nack(seq, multiple, false);
    }

    private static long[] sorted(List<Long> seqs) {
        long[] out = new long[seqs.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = seqs.get(i);
        }
        Arrays.sort(out);
        return out;
    }

    private int index(long seq) {
        return (int) (seq & (decided.length - 1));
    }

    private void grow() {
        boolean[] larger = new boolean[decided.length * 2];
        for (long seq = low; seq < next; seq++) {
            larger[(int) (seq & (larger.length - 1))] = decided[index(seq)];
        }
        decided = larger;
    }
}
