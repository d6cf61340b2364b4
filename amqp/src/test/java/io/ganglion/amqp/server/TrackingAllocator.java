package io.ganglion.amqp.server;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * A heap allocator that remembers every buffer it made and the largest array it ever allocated (growth included), so a
 * test can check that nothing leaked and that no length read off the wire sized an allocation.
 */
final class TrackingAllocator extends AbstractByteBufAllocator {
    private final List<ByteBuf> buffers = new ArrayList<>();
    private int largestArray;

    TrackingAllocator() {
        super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        ByteBuf buffer = new TrackedBuffer(this, initialCapacity, maxCapacity);
        buffers.add(buffer);
        return buffer;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return newHeapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    /** Buffers still referenced. */
    List<ByteBuf> unreleased() {
        return buffers.stream().filter(b -> b.refCnt() > 0).toList();
    }

    int allocated() {
        return buffers.size();
    }

    int largestArray() {
        return largestArray;
    }

    private final class TrackedBuffer extends UnpooledHeapByteBuf {
        TrackedBuffer(ByteBufAllocator allocator, int initialCapacity, int maxCapacity) {
            super(allocator, initialCapacity, maxCapacity);
        }

        @Override
        protected byte[] allocateArray(int length) {
            largestArray = Math.max(largestArray, length);
            return super.allocateArray(length);
        }
    }
}
