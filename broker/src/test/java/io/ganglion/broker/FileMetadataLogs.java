package io.ganglion.broker;

import io.ganglion.metadata.MetadataLog;
import java.io.IOException;
import java.nio.file.Path;

/** Opens the single-broker metadata log for tests in other packages. */
public final class FileMetadataLogs {
    private FileMetadataLogs() {}

    public static MetadataLog open(Path directory) throws IOException {
        return FileMetadataLog.open(directory);
    }
}
