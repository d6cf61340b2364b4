package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.zip.CRC32C;

/** Small helpers for files that must survive a crash whole or not at all. */
final class DurableFiles {
    private DurableFiles() {}

    /** Forces a directory, so entries created, renamed or deleted in it survive a crash. */
    static void forceDirectory(Path directory) throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /** Deletes a directory and the files in it, if it exists; not forced (the caller forces the parent). */
    static void deleteDirectory(Path directory) throws IOException {
        if (Files.isDirectory(directory)) {
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory)) {
                for (Path file : stream) {
                    Files.delete(file);
                }
            }
            Files.deleteIfExists(directory);
        }
    }

    /** Writes {@code content} to a temporary file, forces it, renames it over {@code target} and forces the parent. */
    static void writeAtomically(Path target, ByteBuffer content) throws IOException {
        Path temporary = target.resolveSibling(target.getFileName() + ".tmp");
        try (FileChannel channel = FileChannel.open(
                temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer bytes = content.duplicate();
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
            channel.force(true);
        }
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory(target.getParent());
    }

    /**
     * Puts the CRC32C of every byte before {@code content}'s position at that position, then writes the buffer from 0
     * to there as {@link #writeAtomically} does: a small file that ends with its own checksum.
     */
    static void writeAtomicallyWithCrc(Path target, ByteBuffer content) throws IOException {
        content.putInt(crc(content.array(), content.position()));
        writeAtomically(target, content.flip());
    }

    /** Whether {@code content}, as read from a file, ends with the CRC32C of every byte before its last four. */
    static boolean endsWithCrc(ByteBuffer content) {
        int length = content.remaining();
        return length >= 4 && content.getInt(length - 4) == crc(content.array(), length - 4);
    }

    /** The whole content of a file, or empty if it does not exist. */
    static Optional<ByteBuffer> readIfExists(Path file) throws IOException {
        try {
            return Optional.of(ByteBuffer.wrap(Files.readAllBytes(file)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** Reads exactly {@code buffer.remaining()} bytes at {@code position}, or fewer at the end of the file. */
    static int readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        int total = 0;
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, position + total);
            if (read < 0) {
                break;
            }
            total += read;
        }
        return total;
    }

    /** Writes all of {@code buffer} at {@code position}. */
    static void writeFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            at += channel.write(buffer, at);
        }
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }
}
