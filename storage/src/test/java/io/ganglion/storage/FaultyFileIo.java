package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.Set;

/**
 * Opens real channels that fail, hold or watch writes and forces on demand, for files whose path ends with a given
 * suffix.
 */
final class FaultyFileIo implements FileIo {
    private final String suffix;
    /** Channel calls (and opens) made on {@link #watchedThread}, which should make none. */
    final java.util.List<String> watchedCalls = new java.util.concurrent.CopyOnWriteArrayList<>();

    volatile Thread watchedThread;
    /** When set, a positional write waits until it is opened; {@link #writeHeld} counts writes that waited. */
    volatile java.util.concurrent.CountDownLatch writeGate;

    final java.util.concurrent.Semaphore writeHeld = new java.util.concurrent.Semaphore(0);
    volatile boolean failWrites;
    /** When not negative, this many more positional writes succeed, then one fails (as with failWrites). */
    final java.util.concurrent.atomic.AtomicInteger writesBeforeOneFailure =
            new java.util.concurrent.atomic.AtomicInteger(-1);

    volatile boolean failForces;
    /** Writes report success but never reach the file: as if the process died before they were made. */
    volatile boolean dropWrites;
    /** When set, a force waits until it is opened: holds a journal batch between its write and its force. */
    volatile java.util.concurrent.CountDownLatch forceGate;
    /** Released once for every force that reached a closed {@link #forceGate}. */
    final java.util.concurrent.Semaphore forceHeld = new java.util.concurrent.Semaphore(0);

    FaultyFileIo(String suffix) {
        this.suffix = suffix;
    }

    @Override
    public FileChannel open(Path path, Set<? extends OpenOption> options) throws IOException {
        if (Thread.currentThread() == watchedThread) {
            watchedCalls.add("open " + path.getFileName());
        }
        FileChannel channel = FileChannel.open(path, options);
        return path.toString().endsWith(suffix) ? new Faulty(channel) : channel;
    }

    private void watch(String call) {
        if (Thread.currentThread() == watchedThread) {
            watchedCalls.add(call);
        }
    }

    private final class Faulty extends FileChannel {
        private final FileChannel delegate;

        Faulty(FileChannel delegate) {
            this.delegate = delegate;
        }

        private void checkWrite(ByteBuffer src) throws IOException {
            if (failWrites) {
                // a partial write first, as a full disk does
                if (src.remaining() > 1) {
                    ByteBuffer half = src.duplicate();
                    half.limit(half.position() + half.remaining() / 2);
                    delegate.write(half, delegate.size());
                }
                throw new IOException("No space left on device");
            }
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            watch("read");
            return delegate.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            watch("read");
            return delegate.read(dsts, offset, length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            watch("write");
            checkWrite(src);
            return delegate.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            watch("write");
            if (failWrites) {
                throw new IOException("No space left on device");
            }
            return delegate.write(srcs, offset, length);
        }

        @Override
        public long position() throws IOException {
            return delegate.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            delegate.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            watch("size");
            return delegate.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            watch("truncate");
            delegate.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            watch("force");
            java.util.concurrent.CountDownLatch gate = forceGate;
            if (gate != null) {
                if (gate.getCount() > 0) {
                    forceHeld.release();
                }
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted at the force gate", e);
                }
            }
            if (failForces) {
                throw new IOException("Input/output error");
            }
            delegate.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            watch("transferTo");
            return delegate.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            watch("transferFrom");
            return delegate.transferFrom(src, position, count);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            watch("read");
            return delegate.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            watch("write");
            java.util.concurrent.CountDownLatch gate = writeGate;
            if (gate != null) {
                writeHeld.release();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted at the write gate", e);
                }
            }
            if (dropWrites) {
                int length = src.remaining();
                src.position(src.limit());
                return length;
            }
            if (failWrites || (writesBeforeOneFailure.get() >= 0 && writesBeforeOneFailure.getAndDecrement() == 0)) {
                if (src.remaining() > 1) {
                    ByteBuffer half = src.duplicate();
                    half.limit(half.position() + half.remaining() / 2);
                    delegate.write(half, position);
                }
                throw new IOException("No space left on device");
            }
            return delegate.write(src, position);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            watch("map");
            return delegate.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return delegate.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return delegate.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            delegate.close();
        }
    }
}
