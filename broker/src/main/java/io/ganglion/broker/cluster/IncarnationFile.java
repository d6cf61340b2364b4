package io.ganglion.broker.cluster;

import io.ganglion.coordination.Incarnation;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A broker's incarnation: one more than at its previous start, kept in {@code data.dir/incarnation}. The file is
 * written to a temporary name, fsynced and renamed, so a crash leaves the old or the new value, never a torn one; a
 * broker that finds the file unreadable refuses to start rather than reuse an incarnation.
 */
public final class IncarnationFile {
    private IncarnationFile() {}

    /**
     * Reads the previous incarnation (0 if none), stores and returns the next one.
     *
     * @throws IOException if the file cannot be read or written, or does not hold a number
     */
    public static Incarnation next(Path dataDir) throws IOException {
        Files.createDirectories(dataDir);
        Path file = dataDir.resolve("incarnation");
        long previous = 0;
        if (Files.exists(file)) {
            String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
            try {
                previous = Long.parseLong(text);
            } catch (NumberFormatException e) {
                throw new IOException(file + " does not hold an incarnation number: '" + text + "'");
            }
        }
        long next = previous + 1;
        Path temporary = dataDir.resolve("incarnation.tmp");
        try (FileChannel channel = FileChannel.open(
                temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(ByteBuffer.wrap((next + "\n").getBytes(StandardCharsets.US_ASCII)));
            channel.force(true);
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel directory = FileChannel.open(dataDir, StandardOpenOption.READ)) {
            directory.force(true);
        }
        return new Incarnation(next);
    }
}
