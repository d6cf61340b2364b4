package io.ganglion.replication;

/**
 * The tag a publish keeps across owners: the publisher (one AMQP channel publishing with confirms, broker-wide unique)
 * and its sequence number. A publish re-sent after an assignment change carries the same id, so the new owner can find
 * it in the recovered log instead of appending it twice.
 */
public record PublishId(long publisher, long sequence) implements Comparable<PublishId> {
    @Override
    public int compareTo(PublishId other) {
        int byPublisher = Long.compare(publisher, other.publisher);
        return byPublisher != 0 ? byPublisher : Long.compare(sequence, other.sequence);
    }

    @Override
    public String toString() {
        return publisher + ":" + sequence;
    }
}
