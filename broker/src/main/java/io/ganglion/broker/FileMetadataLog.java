package io.ganglion.broker;

import io.ganglion.metadata.MetadataCodec;
import io.ganglion.metadata.MetadataCodecException;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metadata log of a single broker: commands appended to one file and forced before they are applied, replayed on
 * start. The control plane replaces it with the Apache Ratis log behind the same interface.
 *
 * <p>Entry layout: {@code int length, int crc32c(payload), payload} where payload is {@link MetadataCodec}'s encoding.
 * A torn last entry (the broker died while writing) is cut; since an entry is acknowledged only after the force,
 * nothing acknowledged is cut. An entry that fails its checksum with entries after it is corruption, not a torn write:
 * the log refuses to open rather than drop acknowledged metadata. When the file grows past a limit it is rewritten from the image
 * ({@link MetadataImage#asCommands}) into a new file that atomically replaces it.
 *
 * <p>Thread-safety: {@link #propose} is synchronized; metadata changes are rare next to messages.
 */
public final class FileMetadataLog implements MetadataLog {
    private static final Logger LOG = LoggerFactory.getLogger(FileMetadataLog.class);
    private static final int HEADER = 8;
    private static final int MAX_ENTRY = 16 * 1024 * 1024;
    private static final long COMPACT_BYTES = 4 * 1024 * 1024;

    private final Path file;
    private final List<Consumer<MetadataImage>> listeners = new CopyOnWriteArrayList<>();
    private FileChannel channel;
    private volatile MetadataImage image;

    private FileMetadataLog(Path file, FileChannel channel, MetadataImage image) {
        this.file = file;
        this.channel = channel;
        this.image = image;
    }

    /**
     * Opens (or creates) the log in {@code directory} and replays it.
     *
     * @throws IOException if the file cannot be read, or an entry in the middle fails its checksum or does not decode
     */
    public static FileMetadataLog open(Path directory) throws IOException {
        Files.createDirectories(directory);
        Path file = directory.resolve("metadata.log");
        FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        MetadataImage image = MetadataImage.empty();
        long position = 0;
        long size = channel.size();
        ByteBuffer header = ByteBuffer.allocate(HEADER);
        while (position + HEADER <= size) {
            header.clear();
            readFully(channel, header, position);
            int length = header.getInt(0);
            int crc = header.getInt(4);
            if (length < 0 || length > MAX_ENTRY || position + HEADER + length > size) {
                break;
            }
            ByteBuffer payload = ByteBuffer.allocate(length);
            readFully(channel, payload, position + HEADER);
            if (crc(payload.array()) != crc) {
                if (position + HEADER + length < size) {
                    throw new IOException("metadata log " + file + " is corrupt at byte " + position
                            + ": an entry fails its checksum and entries follow it; restore it from a copy");
                }
                break;
            }
            try {
                image = image.apply(MetadataCodec.decode(payload.array())).image();
            } catch (MetadataCodecException e) {
                throw new IOException("metadata log " + file + " entry at " + position + " does not decode", e);
            }
            position += HEADER + length;
        }
        if (position < size) {
            LOG.warn("event=metadata_tail_cut file={} at={} size={}", file, position, size);
            channel.truncate(position);
            channel.force(true);
        }
        channel.position(position);
        return new FileMetadataLog(file, channel, image);
    }

    @Override
    public synchronized CompletableFuture<MetadataImage.Applied> propose(MetadataCommand command) {
        try {
            MetadataImage.Applied applied = image.apply(command);
            if (applied.accepted()) {
                append(MetadataCodec.encode(command));
                image = applied.image();
                listeners.forEach(listener -> listener.accept(applied.image()));
                if (channel.size() > COMPACT_BYTES) {
                    compact();
                }
            }
            return CompletableFuture.completedFuture(applied);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(new UncheckedIOException("metadata log write failed", e));
        }
    }

    private void append(byte[] payload) throws IOException {
        ByteBuffer entry = ByteBuffer.allocate(HEADER + payload.length);
        entry.putInt(payload.length).putInt(crc(payload)).put(payload).flip();
        while (entry.hasRemaining()) {
            channel.write(entry);
        }
        channel.force(false);
    }

    private void compact() throws IOException {
        Path next = file.resolveSibling("metadata.log.compact");
        try (FileChannel out = FileChannel.open(
                next, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            for (MetadataCommand command : image.asCommands()) {
                byte[] payload = MetadataCodec.encode(command);
                ByteBuffer entry = ByteBuffer.allocate(HEADER + payload.length);
                entry.putInt(payload.length).putInt(crc(payload)).put(payload).flip();
                while (entry.hasRemaining()) {
                    out.write(entry);
                }
            }
            out.force(true);
        }
        channel.close();
        Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
        channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        channel.position(channel.size());
        LOG.info("event=metadata_compacted file={} bytes={}", file, channel.size());
    }

    @Override
    public MetadataImage image() {
        return image;
    }

    @Override
    public void subscribe(Consumer<MetadataImage> listener) {
        listeners.add(listener);
    }

    @Override
    public synchronized void close() {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.warn("event=metadata_close_failed file={}", file, e);
        }
    }

    private static int crc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, position + buffer.position());
            if (read < 0) {
                throw new IOException("unexpected end of metadata log");
            }
        }
    }
}
