package io.ganglion.sim;

import io.ganglion.coordination.NodeId;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The links between brokers: a fixed base delay per link (1 to 10 ms) plus jitter, random drops, and cuts that come and
 * heal. Each direction of a link is first in, first out, as one TCP connection is. A cut is symmetric. A message crossing a link that is cut when it is sent or when it would arrive is lost, like
 * one in a closed TCP connection.
 */
public final class SimNetwork {
    private final Scheduler scheduler;
    private final SplittableRandom random;
    private final TreeMap<String, Long> baseDelayMs = new TreeMap<>();
    private final TreeSet<String> cuts = new TreeSet<>();
    private final TreeMap<String, Long> extraDelayMs = new TreeMap<>();
    /** from>to -> arrival time of the last message: a link is one TCP connection, first in, first out. */
    private final TreeMap<String, Long> lastArrivalMs = new TreeMap<>();

    private double dropRate;
    private long dropped;

    SimNetwork(Scheduler scheduler, SplittableRandom random, List<NodeId> nodes, double dropRate) {
        this.scheduler = scheduler;
        this.random = random;
        this.dropRate = dropRate;
        for (NodeId a : nodes) {
            for (NodeId b : nodes) {
                if (a.compareTo(b) < 0) {
                    baseDelayMs.put(key(a, b), 1 + random.nextLong(10));
                }
            }
        }
    }

    private static String key(NodeId a, NodeId b) {
        return a.compareTo(b) < 0 ? a + "|" + b : b + "|" + a;
    }

    public boolean connected(NodeId a, NodeId b) {
        return a.equals(b) || !cuts.contains(key(a, b));
    }

    /** One-way delay of the next message on the link, jitter included. */
    long delayMs(NodeId from, NodeId to) {
        if (from.equals(to)) {
            return 0;
        }
        return baseDelayMs.get(key(from, to)) + extraDelayMs.getOrDefault(key(from, to), 0L) + random.nextLong(5);
    }

    /** Adds {@code ms} to every message on the link between {@code a} and {@code b} (0 restores it). */
    void slow(NodeId a, NodeId b, long ms) {
        if (a.equals(b)) {
            return;
        }
        if (ms == 0) {
            extraDelayMs.remove(key(a, b));
        } else {
            extraDelayMs.put(key(a, b), ms);
        }
    }

    /** Sends a message; {@code deliver} runs at the receiver if the link stays up and the message is not dropped. */
    void send(NodeId from, NodeId to, String label, Runnable deliver) {
        send(from, to, label, deliver, () -> {});
    }

    /**
     * Sends a message on a connection: when it is lost, {@code lost} runs once the loss is noticed (a connection that
     * loses a message closes; it never silently skips one).
     */
    void send(NodeId from, NodeId to, String label, Runnable deliver, Runnable lost) {
        if (!connected(from, to) || (!from.equals(to) && dropRate > 0 && random.nextDouble() < dropRate)) {
            dropped++;
            scheduler.trace("drop " + label);
            scheduler.after(delayMs(from, to), "lost " + label, lost);
            return;
        }
        String direction = from + ">" + to;
        long arrival = Math.max(scheduler.now() + delayMs(from, to), lastArrivalMs.getOrDefault(direction, 0L));
        lastArrivalMs.put(direction, arrival);
        scheduler.at(arrival, label, () -> {
            if (connected(from, to)) {
                deliver.run();
            } else {
                dropped++;
                lost.run();
            }
        });
    }

    void cut(NodeId a, NodeId b) {
        if (!a.equals(b)) {
            cuts.add(key(a, b));
        }
    }

    void heal(NodeId a, NodeId b) {
        cuts.remove(key(a, b));
    }

    void healAll() {
        cuts.clear();
        extraDelayMs.clear();
    }

    void dropRate(double rate) {
        this.dropRate = rate;
    }

    public long dropped() {
        return dropped;
    }
}
