package io.ganglion.storage;

import java.io.IOException;

/** Broker tests' way to stop a store like a crash after its last force: no checkpoint, the journal left for replay. */
public final class StorageCrash {
    private StorageCrash() {}

    public static void halt(Storage storage) throws IOException {
        storage.halt();
    }
}
