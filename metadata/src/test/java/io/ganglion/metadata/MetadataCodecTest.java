package io.ganglion.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.metadata.MetadataCommand.Bind;
import io.ganglion.metadata.MetadataCommand.DeclareExchange;
import io.ganglion.metadata.MetadataCommand.DeclareQueue;
import io.ganglion.metadata.MetadataCommand.DeleteExchange;
import io.ganglion.metadata.MetadataCommand.DeleteQueue;
import io.ganglion.metadata.MetadataCommand.DeleteUser;
import io.ganglion.metadata.MetadataCommand.DeleteVhost;
import io.ganglion.metadata.MetadataCommand.PutUser;
import io.ganglion.metadata.MetadataCommand.PutVhost;
import io.ganglion.metadata.MetadataCommand.Unbind;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import io.ganglion.queues.routing.FieldValues;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class MetadataCodecTest {

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 200);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRoundTripEveryCommand(long seed) throws MetadataCodecException {
        SplittableRandom random = new SplittableRandom(seed);
        MetadataCommand command = randomCommand(random);
        MetadataCommand decoded = MetadataCodec.decode(MetadataCodec.encode(command));
        assertThat(MetadataCodec.encode(decoded))
                .as("seed %d: %s", seed, command)
                .isEqualTo(MetadataCodec.encode(command));
        if (command instanceof DeclareQueue declare) {
            assertThat(FieldValues.equal(
                            declare.queue().arguments(),
                            ((DeclareQueue) decoded).queue().arguments()))
                    .isTrue();
        }
    }

    /** Every prefix of a valid command, and random corruption, is refused with the checked exception only. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldRefuseTruncatedAndCorruptBytesCleanly(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] valid = MetadataCodec.encode(randomCommand(random));
        for (int cut = 0; cut < valid.length; cut++) {
            byte[] prefix = Arrays.copyOf(valid, cut);
            assertThatThrownBy(() -> MetadataCodec.decode(prefix)).isInstanceOf(MetadataCodecException.class);
        }
        for (int i = 0; i < 50; i++) {
            byte[] corrupt = valid.clone();
            corrupt[random.nextInt(corrupt.length)] = (byte) random.nextInt(256);
            try {
                MetadataCodec.decode(corrupt);
            } catch (MetadataCodecException expected) {
                // refused cleanly
            }
        }
    }

    private static MetadataCommand randomCommand(SplittableRandom random) {
        String vhost = word(random);
        return switch (random.nextInt(10)) {
            case 0 -> new PutVhost(vhost);
            case 1 -> new DeleteVhost(vhost);
            case 2 ->
                new PutUser(
                        User.withPassword(word(random), word(random), new byte[] {1, 2, 3, 4}, List.of(word(random))));
            case 3 -> new DeleteUser(word(random));
            case 4 ->
                new DeclareExchange(
                        vhost,
                        new Exchange(
                                word(random),
                                ExchangeType.values()[random.nextInt(4)],
                                random.nextBoolean(),
                                random.nextBoolean(),
                                random.nextBoolean(),
                                table(random, 2)));
            case 5 -> new DeleteExchange(vhost, word(random), random.nextBoolean());
            case 6 ->
                new DeclareQueue(
                        vhost,
                        new QueueDef(
                                word(random),
                                random.nextLong(1, Long.MAX_VALUE),
                                QueueType.values()[random.nextInt(2)],
                                random.nextBoolean(),
                                random.nextBoolean() ? "" : word(random),
                                random.nextBoolean(),
                                table(random, 2)));
            case 7 -> new DeleteQueue(vhost, word(random));
            case 8 -> new Bind(vhost, binding(random));
            default -> new Unbind(vhost, binding(random));
        };
    }

    private static Binding binding(SplittableRandom random) {
        Destination destination =
                random.nextBoolean() ? Destination.queue(word(random)) : Destination.exchange(word(random));
        return new Binding(word(random), destination, word(random), table(random, 2));
    }

    private static Map<String, Object> table(SplittableRandom random, int depth) {
        Map<String, Object> table = new HashMap<>();
        int size = random.nextInt(4);
        for (int i = 0; i < size; i++) {
            table.put(word(random) + i, value(random, depth));
        }
        return table;
    }

    private static Object value(SplittableRandom random, int depth) {
        return switch (random.nextInt(depth > 0 ? 12 : 10)) {
            case 0 -> word(random);
            case 1 -> random.nextLong();
            case 2 -> random.nextInt();
            case 3 -> random.nextBoolean();
            case 4 -> random.nextDouble();
            case 5 -> (float) random.nextDouble();
            case 6 -> new byte[] {(byte) random.nextInt(), 0, 7};
            case 7 -> BigDecimal.valueOf(random.nextInt(100000), random.nextInt(5));
            case 8 -> (short) random.nextInt(1000);
            case 9 -> (byte) random.nextInt(100);
            case 10 -> {
                List<Object> list = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    list.add(value(random, depth - 1));
                }
                yield list;
            }
            default -> table(random, depth - 1);
        };
    }

    private static String word(SplittableRandom random) {
        String[] words = {"", "a", "orders", "amq.gen-x", "ünïcödé", "/", "x.y.#"};
        return words[random.nextInt(words.length)];
    }
}
