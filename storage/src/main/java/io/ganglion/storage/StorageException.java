package io.ganglion.storage;

import java.io.IOException;

/** A storage fault: the journal failed, a file is malformed, the store is closed. */
public class StorageException extends IOException {
    private static final long serialVersionUID = 1L;

    public StorageException(String message) {
        super(message);
    }

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
