package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.QueueDef;
import io.ganglion.metadata.QueueType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileMetadataLogTest {
    @TempDir
    Path dir;

    private static MetadataCommand queue(String name) {
        return new MetadataCommand.DeclareQueue(
                "/", new QueueDef(name, name.hashCode() & 0xffffL | 1, QueueType.CLASSIC, true, "", false, Map.of()));
    }

    @Test
    void shouldReplayAcceptedCommandsAfterReopen() throws IOException {
        try (FileMetadataLog log = FileMetadataLog.open(dir)) {
            log.propose(new MetadataCommand.PutVhost("/")).join();
            log.propose(queue("q1")).join();
            assertThat(log.propose(new MetadataCommand.DeleteVhost("missing"))
                            .join()
                            .accepted())
                    .isFalse();
        }
        try (FileMetadataLog log = FileMetadataLog.open(dir)) {
            assertThat(log.image().vhost("/").orElseThrow().queue("q1")).isPresent();
        }
    }

    @Test
    void shouldNotifySubscribersInOrder() throws IOException {
        try (FileMetadataLog log = FileMetadataLog.open(dir)) {
            List<Long> seen = new ArrayList<>();
            log.subscribe(image -> seen.add(image.appliedIndex()));
            log.propose(new MetadataCommand.PutVhost("/")).join();
            log.propose(new MetadataCommand.PutVhost("a")).join();
            assertThat(seen).containsExactly(1L, 2L);
        }
    }

    @Test
    void shouldCutATornLastEntryAtEveryByte() throws IOException {
        try (FileMetadataLog log = FileMetadataLog.open(dir)) {
            log.propose(new MetadataCommand.PutVhost("/")).join();
        }
        long good = Files.size(dir.resolve("metadata.log"));
        try (FileMetadataLog log = FileMetadataLog.open(dir)) {
            log.propose(queue("q1")).join();
        }
        byte[] full = Files.readAllBytes(dir.resolve("metadata.log"));
        for (int cut = (int) good; cut < full.length; cut++) {
            Path copy = Files.createDirectories(dir.resolve("cut" + cut));
            Files.write(copy.resolve("metadata.log"), java.util.Arrays.copyOf(full, cut));
            try (FileMetadataLog log = FileMetadataLog.open(copy)) {
                assertThat(log.image().vhost("/")).as("cut at %d", cut).isPresent();
                assertThat(log.image().vhost("/").orElseThrow().queues()).isEmpty();
            }
            assertThat(Files.size(copy.resolve("metadata.log"))).isEqualTo(good);
        }
    }

    @Test
    void shouldRefuseToOpenWhenAnEntryInTheMiddleIsCorrupt() throws IOException {
        try (FileMetadataLog log = FileMetadataLog.open(dir)) {
            log.propose(new MetadataCommand.PutVhost("/")).join();
            log.propose(queue("q1")).join();
        }
        try (FileChannel channel = FileChannel.open(dir.resolve("metadata.log"), StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(new byte[] {0x55}), 9);
        }
        assertThatThrownBy(() -> FileMetadataLog.open(dir))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("corrupt at byte 0");
    }
}
