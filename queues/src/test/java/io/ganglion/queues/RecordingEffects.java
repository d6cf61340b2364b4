package io.ganglion.queues;

import java.util.ArrayList;
import java.util.List;

/** Records what a queue decided, in order. */
final class RecordingEffects implements QueueEffects {
    record Delivery(ConsumerKey consumer, long offset, boolean redelivered) {}

    final List<Delivery> deliveries = new ArrayList<>();
    final List<Long> settled = new ArrayList<>();

    @Override
    public void deliver(ConsumerKey consumer, long offset, boolean redelivered) {
        deliveries.add(new Delivery(consumer, offset, redelivered));
    }

    @Override
    public void settle(long offset) {
        settled.add(offset);
    }

    List<Long> offsetsTo(ConsumerKey consumer) {
        return deliveries.stream()
                .filter(d -> d.consumer().equals(consumer))
                .map(Delivery::offset)
                .toList();
    }
}
