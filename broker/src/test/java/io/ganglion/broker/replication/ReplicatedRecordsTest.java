package io.ganglion.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.Epoch;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.StorageException;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ReplicatedRecordsTest {

    static LongStream seeds() {
        return LongStream.range(0, 32);
    }

    private static Record roundTrip(Record record) throws StorageException {
        return ReplicatedRecords.decode(new LogRecord(
                record.offset(),
                record.epoch().value(),
                ReplicatedRecords.type(record),
                0,
                ReplicatedRecords.payload(record)));
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void shouldRoundTripRandomRecordsThroughTheirStoragePayload(long seed) throws StorageException {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < 50; i++) {
            Epoch epoch = Epoch.of(random.nextLong(1000));
            long offset = random.nextLong(1L << 40);
            byte[] body = new byte[random.nextInt(3) == 0 ? 0 : random.nextInt(2000)];
            random.nextBytes(body);
            Record record = switch (random.nextInt(5)) {
                case 0 -> new Record.EpochStart(epoch, offset);
                case 4 ->
                    new Record.DeadLettered(
                            epoch, offset, random.longs(1 + random.nextInt(5)).toArray(), random.nextInt(256));
                case 3 ->
                    new Record.Returned(
                            epoch, offset, random.longs(1 + random.nextInt(5)).toArray());
                case 1 ->
                    new Record.Message(
                            epoch, offset, new PublishId(random.nextLong(), random.nextLong()), ByteBuffer.wrap(body));
                default ->
                    new Record.Settle(
                            epoch, offset, random.longs(1 + random.nextInt(5)).toArray());
            };

            assertThat(roundTrip(record)).as("seed %d", seed).isEqualTo(record);
        }
    }

    @Test
    void shouldLayOutAMessageAfterItsKindPublisherAndSequence() {
        ByteBuffer payload = ReplicatedRecords.payload(
                new Record.Message(Epoch.of(1), 5, new PublishId(7, 9), ByteBuffer.wrap(new byte[] {42})));

        assertThat(payload.remaining()).isEqualTo(ReplicatedRecords.MESSAGE_HEADER_LENGTH + 1);
        assertThat(payload.get(0)).isEqualTo(ReplicatedRecords.MESSAGE);
        assertThat(payload.getLong(1)).isEqualTo(7);
        assertThat(payload.getLong(9)).isEqualTo(9);
        assertThat(payload.get(17)).isEqualTo((byte) 42);
    }

    @Test
    void shouldRefuseASingleCopyQueuesPayloadInsteadOfGuessing() {
        // the single-copy queue's message record starts with kind 1
        LogRecord foreign = new LogRecord(3, 1, RecordType.DATA, 0, ByteBuffer.wrap(new byte[] {1, 0, 0}));

        assertThatThrownBy(() -> ReplicatedRecords.decode(foreign))
                .isInstanceOf(StorageException.class)
                .hasMessageContaining("not a replicated record");
    }

    @Test
    void shouldConvertEpochHistoriesBothWays() {
        EpochHistory history = EpochHistory.of(1, 0, 3, 40, 4, 41);

        assertThat(HostLog.history(HostLog.storageHistory(history))).isEqualTo(history);
    }
}
