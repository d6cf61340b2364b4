package io.ganglion.storage;

import io.ganglion.storage.AppendOutcome.Appended;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;

/**
 * The process {@link StorageCrashTest} kills. Appends to several objects from two shard threads, and now and then
 * truncates, seals or discards, writing a line to the file named by its third argument for each change once it is
 * reported durable:
 *
 * <pre>
 *   D object offset epoch     record durable
 *   t object offset           truncate after offset issued (printed before the call; may or may not survive)
 *   T object offset           truncate after offset durable
 *   S object epoch            seal durable
 *   X object startOffset      discard durable, log starts at startOffset
 *   r object                  delete issued (printed before the call; may or may not survive)
 *   R object epoch            delete durable; the object starts anew, its records from epoch on
 * </pre>
 *
 * Lines of one object come in journal order: the journal writer thread writes them as it completes futures, and
 * each line is one write, so a kill never leaves half a line.
 */
public final class CrashChild {
    static final int OBJECTS = 6;
    static final int SHARDS = 2;

    private CrashChild() {}

    static StorageConfig config() {
        return new StorageConfig(16 * 1024, 128 * 1024, 256 * 1024, 64 * 1024, 64 * 1024, true, () -> 1_000L);
    }

    /** The payload of a record: a function of object, offset and epoch, with a length that varies. */
    static ByteBuffer payload(long objectId, long offset, long epoch) {
        int repeat = (int) ((offset * 31 + epoch * 7 + objectId) % 200);
        String text = objectId + ":" + offset + ":" + epoch + ":" + "p".repeat(repeat);
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        // never outlive the test JVM that started this one
        ProcessHandle.current()
                .parent()
                .ifPresent(parent ->
                        parent.onExit().thenRun(() -> Runtime.getRuntime().halt(3)));
        Path directory = Path.of(args[0]);
        long seed = Long.parseLong(args[1]);
        Storage storage = Storage.open(directory, config());
        // a file, not a pipe: every line written before the kill survives it in the page cache, so the parent
        // learns of every change the child issued or saw durable
        PrintStream out = new PrintStream(new FileOutputStream(args[2], true), true, StandardCharsets.UTF_8);
        List<Thread> shards = new ArrayList<>();
        for (int shard = 0; shard < SHARDS; shard++) {
            List<ReplicaLog> owned = new ArrayList<>();
            for (int object = shard; object < OBJECTS; object += SHARDS) {
                owned.add(storage.replica(object));
            }
            SplittableRandom random = new SplittableRandom(seed * 31 + shard);
            Thread thread = new Thread(() -> runShard(storage, owned, random, out), "shard-" + shard);
            shards.add(thread);
            thread.start();
        }
        out.println("READY");
        for (Thread shard : shards) {
            shard.join();
        }
    }

    private static void runShard(Storage storage, List<ReplicaLog> logs, SplittableRandom random, PrintStream out) {
        Semaphore inFlight = new Semaphore(256);
        long[] epochs = new long[logs.size()];
        for (int i = 0; i < logs.size(); i++) {
            epochs[i] =
                    Math.max(logs.get(i).epochHistory().lastEpoch(), logs.get(i).sealedEpoch() + 1);
            epochs[i] = Math.max(epochs[i], 1);
        }
        while (true) {
            int index = random.nextInt(logs.size());
            ReplicaLog log = logs.get(index);
            long id = log.objectId();
            int action = random.nextInt(1000);
            if (action < 1) {
                epochs[index]++; // the new log's records are of later epochs than the old one's
                out.println("r " + id);
                try {
                    storage.deleteReplica(id); // blocks until durable
                    logs.set(index, storage.replica(id));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                out.println("R " + id + " " + epochs[index]);
            } else if (action < 4 && log.lastOffset() > log.startOffset() + 5) {
                long after = Math.max(log.startOffset() - 1, log.lastOffset() - random.nextInt(1, 30));
                epochs[index]++; // offsets after the cut get new records of a new epoch
                out.println("t " + id + " " + after);
                try {
                    log.truncateAfter(after); // blocks until durable
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                out.println("T " + id + " " + after);
            } else if (action < 6) {
                long epoch = epochs[index]++;
                log.seal(epoch).thenAccept(seal -> out.println("S " + id + " " + epoch));
            } else if (action < 8 && log.lastOffset() > 100) {
                log.discardBefore(log.lastOffset() - 100).thenAccept(start -> out.println("X " + id + " " + start));
            } else {
                inFlight.acquireUninterruptibly();
                long epoch = epochs[index];
                AppendOutcome outcome = log.append(epoch, RecordType.DATA, payload(id, log.nextOffset(), epoch));
                if (outcome instanceof Appended appended) {
                    appended.durable().whenComplete((offset, failure) -> {
                        inFlight.release();
                        if (failure == null) {
                            out.println("D " + id + " " + offset + " " + epoch);
                        }
                    });
                } else {
                    inFlight.release();
                    throw new IllegalStateException("append refused: " + outcome);
                }
            }
        }
    }
}
