package io.ganglion.metadata;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The broker's one way to the metadata log: propose a command, read the committed image, learn of new images. A
 * single-node file log, the Apache Ratis log and the simulator's log all sit behind it.
 */
public interface MetadataLog extends AutoCloseable {
    /**
     * Proposes {@code command}. The future completes once the command is committed and applied, with the image it
     * produced and its rejection if the state machine refused it; it fails if the command could not be committed.
     */
    CompletableFuture<MetadataImage.Applied> propose(MetadataCommand command);

    /** The latest applied image. Safe from any thread. */
    MetadataImage image();

    /** Calls {@code listener} with every image applied from now on, in order, on the log's own thread. */
    void subscribe(Consumer<MetadataImage> listener);

    @Override
    void close();
}
