package io.ganglion.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.CoordinationImage;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.HistoryRecord;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.metadata.MetadataCommand.Coordination;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class MetadataImageCodecTest {

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 300);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripEveryImage(long seed) throws MetadataCodecException {
        MetadataImage image = MetadataGenerators.image(new SplittableRandom(seed), 60);
        byte[] bytes = MetadataImageCodec.encode(image);
        MetadataImage decoded = MetadataImageCodec.decode(bytes);

        assertThat(MetadataImageCodec.encode(decoded)).as("seed %d", seed).isEqualTo(bytes);
        assertSameImage(decoded, image, seed);
    }

    /** {@link MetadataImage#asCommands} rebuilds the whole image, coordination part included, on an empty image. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRebuildTheSameImageFromItsCommands(long seed) {
        MetadataImage image = MetadataGenerators.image(new SplittableRandom(seed), 60);
        MetadataImage rebuilt = MetadataImage.empty();
        for (MetadataCommand command : image.asCommands()) {
            MetadataImage.Applied applied = rebuilt.apply(command);
            assertThat(applied.rejection()).as("seed %d: %s", seed, command).isEmpty();
            rebuilt = applied.image();
        }
        MetadataImage sameIndex = rebuilt.withCoordination(image.appliedIndex(), rebuilt.coordination());
        assertThat(MetadataImageCodec.encode(sameIndex))
                .as("seed %d", seed)
                .isEqualTo(MetadataImageCodec.encode(image));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRefuseTruncatedAndCorruptImagesCleanly(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] valid = MetadataImageCodec.encode(MetadataGenerators.image(random, 20));
        for (int cut = 0; cut < valid.length; cut += 1 + cut / 16) {
            byte[] prefix = Arrays.copyOf(valid, cut);
            assertThatThrownBy(() -> MetadataImageCodec.decode(prefix))
                    .as("seed %d, cut %d", seed, cut)
                    .isInstanceOf(MetadataCodecException.class);
        }
        for (int i = 0; i < 20; i++) {
            byte[] corrupt = valid.clone();
            corrupt[random.nextInt(corrupt.length - 4)] ^= (byte) random.nextInt(1, 256);
            assertThatThrownBy(() -> MetadataImageCodec.decode(corrupt))
                    .as("seed %d: a flipped byte fails the checksum", seed)
                    .isInstanceOf(MetadataCodecException.class)
                    .hasMessageContaining("checksum");
            // the same corruption behind a valid checksum reaches the parser, which refuses it or reads an image
            byte[] resealed = withChecksum(corrupt);
            try {
                MetadataImageCodec.decode(resealed);
            } catch (MetadataCodecException expected) {
                // refused cleanly
            }
        }
    }

    /** The round trips above mean something only if the generated images reach every stage of a history. */
    @Test
    void generatedImagesShouldCoverEveryHistoryStage() {
        int pending = 0;
        int activatedTwice = 0;
        int withPoint = 0;
        int withSeals = 0;
        int down = 0;
        int settings = 0;
        int queues = 0;
        for (long seed : seeds().toArray()) {
            MetadataImage image = MetadataGenerators.image(new SplittableRandom(seed), 60);
            CoordinationImage coordination = image.coordination();
            for (AcceptedHistory history : coordination.objects().values()) {
                pending += history.pending().isPresent() ? 1 : 0;
                activatedTwice += history.committedEpoch().value() == 2 ? 1 : 0;
                withPoint += history.pending().flatMap(p -> p.point()).isPresent() ? 1 : 0;
                withSeals += history.pending().filter(p -> !p.seals().isEmpty()).isPresent() ? 1 : 0;
            }
            down += (int) coordination.liveSet().nodes().values().stream()
                    .filter(n -> !n.live())
                    .count();
            settings += coordination.settings().overrides().isEmpty() ? 0 : 1;
            queues += image.vhosts().values().stream()
                    .mapToInt(v -> v.queues().size())
                    .sum();
        }
        assertThat(pending).isGreaterThan(50);
        assertThat(activatedTwice).isGreaterThan(50);
        assertThat(withPoint).isGreaterThan(20);
        assertThat(withSeals).isGreaterThan(20);
        assertThat(down).isGreaterThan(50);
        assertThat(settings).isGreaterThan(50);
        assertThat(queues).isGreaterThan(100);
    }

    @Test
    void shouldRefuseAnImageWhoseHistoryDoesNotReplay() throws MetadataCodecException {
        ObjectId id = ObjectId.of("/", "q");
        MetadataImage image = MetadataImage.empty()
                .apply(new Coordination(new CoordinationCommand.CreateObject(
                        new ObjectSpec(id, ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE))))
                .image()
                .apply(new Coordination(
                        new CoordinationCommand.AppendHistory(id, new HistoryRecord.Activated(Epoch.of(1)))))
                .image();
        assertThat(image.coordination().object(id).orElseThrow().records()).hasSize(1);

        // An image whose object carries an activation without a recovery, as a buggy or hostile writer would store it.
        byte[] valid = MetadataImageCodec.encode(image);
        byte[] activation = MetadataCodec.encode(
                new Coordination(new CoordinationCommand.AppendHistory(id, new HistoryRecord.Activated(Epoch.of(1)))));
        byte[] record = Arrays.copyOfRange(activation, activation.length - 9, activation.length);
        int body = valid.length - 4;
        ByteBuffer forged = ByteBuffer.allocate(body + record.length);
        forged.put(valid, 0, body - 4).putInt(1).put(record);
        byte[] forgedImage = withChecksum(Arrays.copyOf(forged.array(), forged.capacity() + 4));
        assertThatThrownBy(() -> MetadataImageCodec.decode(forgedImage))
                .isInstanceOf(MetadataCodecException.class)
                .hasMessageContaining("does not replay");
    }

    @Test
    void shouldKeepSettingsOverridesAndAppliedIndex() throws MetadataCodecException {
        MetadataImage image = MetadataImage.empty()
                .apply(new Coordination(new CoordinationCommand.SetSettings(
                        Map.of("replication.follower_loss_hold_ms", "1234", "controller.tick_ms", "50"))))
                .image();
        MetadataImage decoded = MetadataImageCodec.decode(MetadataImageCodec.encode(image));
        assertThat(decoded.appliedIndex()).isEqualTo(1);
        assertThat(decoded.coordination().settings())
                .isEqualTo(image.coordination().settings());
        assertThat(decoded.coordination().settings().overrides())
                .containsEntry("replication.follower_loss_hold_ms", 1234L)
                .containsEntry("controller.tick_ms", 50L);
    }

    /** Compares what the bytes cannot hide: users, queues, settings, live set, histories and their projection. */
    static void assertSameImage(MetadataImage actual, MetadataImage expected, long seed) {
        assertThat(actual.appliedIndex()).as("seed %d", seed).isEqualTo(expected.appliedIndex());
        assertThat(actual.users()).as("seed %d", seed).isEqualTo(expected.users());
        assertThat(actual.vhosts().keySet())
                .as("seed %d", seed)
                .isEqualTo(expected.vhosts().keySet());
        expected.vhosts()
                .forEach((name, vhost) -> assertThat(
                                actual.vhost(name).orElseThrow().queues())
                        .as("seed %d", seed)
                        .isEqualTo(vhost.queues()));
        CoordinationImage a = actual.coordination();
        CoordinationImage e = expected.coordination();
        assertThat(a.settings()).as("seed %d", seed).isEqualTo(e.settings());
        assertThat(a.liveSet()).as("seed %d", seed).isEqualTo(e.liveSet());
        assertThat(a.projectedAssignments()).as("seed %d", seed).isEqualTo(e.projectedAssignments());
        assertThat(a.objects().keySet())
                .as("seed %d", seed)
                .isEqualTo(e.objects().keySet());
        for (AcceptedHistory history : e.objects().values()) {
            AcceptedHistory other = a.object(history.id()).orElseThrow();
            assertThat(other.records()).as("seed %d", seed).isEqualTo(history.records());
            assertThat(other.pending()).as("seed %d", seed).isEqualTo(history.pending());
            assertThat(other.installedInCommitted()).as("seed %d", seed).isEqualTo(history.installedInCommitted());
        }
    }

    private static byte[] withChecksum(byte[] image) {
        int body = image.length - 4;
        CRC32C crc = new CRC32C();
        crc.update(image, 0, body);
        byte[] sealed = image.clone();
        ByteBuffer.wrap(sealed, body, 4).putInt((int) crc.getValue());
        return sealed;
    }
}
