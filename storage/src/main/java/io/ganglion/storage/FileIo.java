package io.ganglion.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.Set;

/** Opens the channels storage writes through; tests put a faulty channel in its place to inject IO errors. */
@FunctionalInterface
interface FileIo {
    FileIo DEFAULT = FileChannel::open;

    FileChannel open(Path path, Set<? extends OpenOption> options) throws IOException;
}
