package io.ganglion.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.coordination.CoordinationCommand;
import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.metadata.MetadataCommand.Bind;
import io.ganglion.metadata.MetadataCommand.DeclareExchange;
import io.ganglion.metadata.MetadataCommand.DeclareQueue;
import io.ganglion.metadata.MetadataCommand.DeleteExchange;
import io.ganglion.metadata.MetadataCommand.DeleteQueue;
import io.ganglion.metadata.MetadataCommand.PutVhost;
import io.ganglion.metadata.MetadataCommand.Unbind;
import io.ganglion.metadata.Rejection.Kind;
import io.ganglion.queues.routing.Binding;
import io.ganglion.queues.routing.Destination;
import io.ganglion.queues.routing.Exchange;
import io.ganglion.queues.routing.ExchangeType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MetadataImageTest {
    private MetadataImage image = MetadataImage.empty();

    private MetadataImage.Applied apply(MetadataCommand command) {
        MetadataImage.Applied applied = image.apply(command);
        image = applied.image();
        return applied;
    }

    private static QueueDef queue(String name, boolean durable, String owner) {
        return new QueueDef(name, name.hashCode() & 0xffffL | 1, QueueType.CLASSIC, durable, owner, false, Map.of());
    }

    @Test
    void shouldDeclareQueueIdempotentlyAndRefuseInequivalentRedeclare() {
        apply(new PutVhost("/"));
        assertThat(apply(new DeclareQueue("/", queue("q", true, ""))).accepted())
                .isTrue();
        assertThat(apply(new DeclareQueue("/", queue("q", true, ""))).accepted())
                .isTrue();
        MetadataImage.Applied redeclare = apply(new DeclareQueue("/", queue("q", false, "")));
        assertThat(redeclare.rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Kind.PRECONDITION_FAILED));
        assertThat(image.vhost("/").orElseThrow().queue("q").orElseThrow().durable())
                .isTrue();
    }

    @Test
    void shouldLockExclusiveQueueToItsConnection() {
        apply(new PutVhost("/"));
        apply(new DeclareQueue("/", queue("x", false, "conn-1")));
        assertThat(apply(new DeclareQueue("/", queue("x", false, "conn-2"))).rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Kind.RESOURCE_LOCKED));
        assertThat(apply(new DeclareQueue("/", queue("x", false, "conn-1"))).accepted())
                .isTrue();
    }

    @Test
    void shouldRefuseReservedNamesAndMissingThings() {
        apply(new PutVhost("/"));
        assertThat(apply(new DeclareExchange(
                                "/", new Exchange("amq.mine", ExchangeType.TOPIC, true, false, false, Map.of())))
                        .rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Kind.ACCESS_REFUSED));
        assertThat(apply(new DeleteExchange("/", "amq.direct", false)).rejection())
                .hasValue(new Rejection(
                        Kind.ACCESS_REFUSED, "deletion of system exchange 'amq.direct' in vhost '/' not allowed"));
        assertThat(apply(new DeclareQueue("/", queue("amq.q", true, ""))).rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Kind.ACCESS_REFUSED));
        assertThat(apply(new DeleteExchange("/", "", false)).rejection())
                .hasValueSatisfying(
                        r -> assertThat(r.message()).isEqualTo("operation not permitted on the default exchange"));
        assertThat(apply(new Bind("/", new Binding("amq.direct", Destination.queue("missing"), "k", Map.of())))
                        .rejection())
                .hasValue(new Rejection(Kind.NOT_FOUND, "no queue 'missing' in vhost '/'"));
        assertThat(apply(new DeclareQueue("/nope", queue("q", true, ""))).rejection())
                .hasValueSatisfying(r -> assertThat(r.message()).isEqualTo("no vhost '/nope'"));
    }

    @Test
    void shouldDeleteExchangeIfUnusedOnlyWhenItIsTheSourceOfNoBinding() {
        apply(new PutVhost("/"));
        apply(new DeclareExchange("/", new Exchange("e", ExchangeType.FANOUT, true, false, false, Map.of())));
        apply(new DeclareExchange("/", new Exchange("up", ExchangeType.FANOUT, true, false, false, Map.of())));
        apply(new DeclareQueue("/", queue("q", true, "")));
        apply(new Bind("/", new Binding("e", Destination.queue("q"), "", Map.of())));
        apply(new Bind("/", new Binding("up", Destination.exchange("e"), "", Map.of())));

        // RabbitMQ 3.10.8's text, rabbit_channel's "~s in use"
        assertThat(apply(new DeleteExchange("/", "e", true)).rejection())
                .hasValue(new Rejection(Kind.PRECONDITION_FAILED, "exchange 'e' in vhost '/' in use"));
        assertThat(apply(new DeleteExchange("/", "e", false)).accepted()).isTrue();
        assertThat(image.vhost("/").orElseThrow().topology().exchange("e")).isEmpty();
        // being a binding's destination is no use
        apply(new DeclareExchange("/", new Exchange("e", ExchangeType.FANOUT, true, false, false, Map.of())));
        apply(new Bind("/", new Binding("up", Destination.exchange("e"), "", Map.of())));
        assertThat(apply(new DeleteExchange("/", "e", true)).accepted()).isTrue();
    }

    @Test
    void shouldDropAutoDeleteExchangeWithItsLastBinding() {
        apply(new PutVhost("/"));
        apply(new DeclareExchange("/", new Exchange("ad", ExchangeType.DIRECT, false, true, false, Map.of())));
        apply(new DeclareQueue("/", queue("q", true, "")));
        Binding binding = new Binding("ad", Destination.queue("q"), "k", Map.of());
        apply(new Bind("/", binding));
        assertThat(image.vhost("/").orElseThrow().topology().exchange("ad")).isPresent();
        apply(new Unbind("/", binding));
        assertThat(image.vhost("/").orElseThrow().topology().exchange("ad")).isEmpty();
    }

    private void declareExchange(String name, boolean autoDelete) {
        apply(new DeclareExchange("/", new Exchange(name, ExchangeType.FANOUT, false, autoDelete, false, Map.of())));
    }

    private boolean exchangeExists(String name) {
        return image.vhost("/").orElseThrow().topology().exchange(name).isPresent();
    }

    @Test
    void shouldDropAutoDeleteExchangesAlongExchangeToExchangeBindings() {
        apply(new PutVhost("/"));
        // a chain src -> mid -> dst, both src and mid auto-delete: deleting dst takes mid's last binding, then src's
        declareExchange("src", true);
        declareExchange("mid", true);
        declareExchange("dst", false);
        apply(new Bind("/", new Binding("src", Destination.exchange("mid"), "", Map.of())));
        apply(new Bind("/", new Binding("mid", Destination.exchange("dst"), "a", Map.of())));
        apply(new Bind("/", new Binding("mid", Destination.exchange("dst"), "b", Map.of())));
        // a repeated target: one of two bindings to dst goes, the other keeps mid
        apply(new Unbind("/", new Binding("mid", Destination.exchange("dst"), "a", Map.of())));
        assertThat(exchangeExists("mid")).isTrue();
        apply(new DeleteExchange("/", "dst", false));
        assertThat(exchangeExists("mid")).as("its last binding went with dst").isFalse();
        assertThat(exchangeExists("src")).as("its last binding went with mid").isFalse();

        // a loop of two auto-delete exchanges: unbinding one side takes both
        declareExchange("ping", true);
        declareExchange("pong", true);
        apply(new Bind("/", new Binding("ping", Destination.exchange("pong"), "", Map.of())));
        apply(new Bind("/", new Binding("pong", Destination.exchange("ping"), "", Map.of())));
        apply(new Unbind("/", new Binding("ping", Destination.exchange("pong"), "", Map.of())));
        assertThat(exchangeExists("ping")).isFalse();
        assertThat(exchangeExists("pong")).isFalse();

        // an auto-delete exchange never bound stays
        declareExchange("idle", true);
        apply(new DeleteExchange("/", "dst-gone", false));
        assertThat(exchangeExists("idle")).isTrue();
    }

    @Test
    void shouldRebuildTheSameImageFromItsCommands() {
        apply(new PutVhost("/"));
        apply(new PutVhost("other"));
        apply(new MetadataCommand.PutUser(
                User.withPassword("guest", "guest", new byte[] {1, 2, 3, 4}, List.of("administrator"))));
        apply(new DeclareExchange("/", new Exchange("e", ExchangeType.TOPIC, true, false, false, Map.of("k", 1L))));
        apply(new DeclareQueue("/", queue("q", true, "")));
        apply(new Bind("/", new Binding("e", Destination.queue("q"), "a.#", Map.of())));
        apply(new Bind("/", new Binding("amq.fanout", Destination.exchange("e"), "", Map.of())));

        MetadataImage rebuilt = MetadataImage.empty();
        for (MetadataCommand command : image.asCommands()) {
            MetadataImage.Applied applied = rebuilt.apply(command);
            assertThat(applied.rejection()).as("%s", command).isEmpty();
            rebuilt = applied.image();
        }
        assertThat(rebuilt.users()).isEqualTo(image.users());
        assertThat(rebuilt.vhost("/").orElseThrow().queues())
                .isEqualTo(image.vhost("/").orElseThrow().queues());
        assertThat(rebuilt.vhost("/").orElseThrow().topology().route("amq.fanout", "a.b", Map.of()))
                .containsExactly("q");
        assertThat(rebuilt.vhost("other")).isPresent();
    }

    @Test
    void shouldApplyCoordinationCommandsToTheCoordinationImage() {
        ObjectSpec spec = new ObjectSpec(ObjectId.of("/", "q"), ObjectKind.QUEUE, 3, DurabilityMode.MAJORITY_DURABLE);
        MetadataImage.Applied created =
                apply(new MetadataCommand.Coordination(new CoordinationCommand.CreateObject(spec)));
        assertThat(created.accepted()).isTrue();
        assertThat(image.coordination().object(spec.id())).isPresent();
        assertThat(image.appliedIndex()).isEqualTo(1);

        MetadataImage.Applied again =
                apply(new MetadataCommand.Coordination(new CoordinationCommand.CreateObject(spec)));
        assertThat(again.rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Kind.PRECONDITION_FAILED))
                .hasValueSatisfying(r -> assertThat(r.message()).contains("already exists"));
        assertThat(image.appliedIndex()).as("a rejected command still counts").isEqualTo(2);

        MetadataImage.Applied badSetting = apply(
                new MetadataCommand.Coordination(new CoordinationCommand.SetSettings(Map.of("no.such.setting", "1"))));
        assertThat(badSetting.rejection())
                .hasValueSatisfying(r -> assertThat(r.message()).contains("unknown setting 'no.such.setting'"));
        assertThat(apply(new MetadataCommand.Coordination(
                                new CoordinationCommand.SetSettings(Map.of("replication.follower_loss_hold_ms", "0"))))
                        .accepted())
                .isTrue();
        assertThat(image.coordination().settings().value(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS))
                .isZero();
    }

    /**
     * A fenced command applies only from an entry of the term it names: from another, it is an entry that changes
     * nothing but the applied index. Unfenced commands apply in any term, and without a term the command inside
     * applies (a log of one node).
     */
    @Test
    void shouldApplyAFencedCommandOnlyInItsOwnTerm() {
        MetadataImage image = MetadataImage.empty();
        MetadataCommand.Fenced fenced = new MetadataCommand.Fenced(3, new PutVhost("a"));

        MetadataImage.Applied own = image.apply(fenced, 3);
        assertThat(own.accepted()).isTrue();
        assertThat(own.image().vhost("a")).isPresent();

        MetadataImage.Applied other = image.apply(fenced, 4);
        assertThat(other.rejection())
                .hasValueSatisfying(r -> assertThat(r.kind()).isEqualTo(Kind.PRECONDITION_FAILED))
                .hasValueSatisfying(
                        r -> assertThat(r.message()).contains("term 3").contains("term 4"));
        assertThat(other.image().vhost("a")).isEmpty();
        assertThat(other.image().appliedIndex()).isEqualTo(image.appliedIndex() + 1);

        assertThat(image.apply(new PutVhost("a"), 4).accepted()).isTrue();
        assertThat(image.apply(fenced).image().vhost("a")).isPresent();
    }

    @Test
    void shouldCheckPasswords() {
        User user = User.withPassword("alice", "s3cret", new byte[] {9, 8, 7, 6}, List.of());
        assertThat(user.checkPassword("s3cret")).isTrue();
        assertThat(user.checkPassword("S3cret")).isFalse();
        assertThat(user.toString()).doesNotContain("s3cret");
    }

    @Test
    void shouldBootstrapOnlyAnEmptyImage() {
        User admin = User.withPassword("admin", "pw", new byte[] {1, 2, 3, 4}, List.of("administrator"));
        MetadataImage image = MetadataImage.empty()
                .apply(new MetadataCommand.Bootstrap(admin))
                .image();
        assertThat(image.vhosts()).containsOnlyKeys("/");
        assertThat(image.users()).containsOnlyKeys("admin");

        User other = User.withPassword("admin", "changed", new byte[] {5, 6, 7, 8}, List.of());
        MetadataImage again = image.apply(new MetadataCommand.Bootstrap(other)).image();
        assertThat(again.user("admin").orElseThrow().checkPassword("pw")).isTrue();
        assertThat(again.user("admin").orElseThrow().checkPassword("changed")).isFalse();
    }

    @Test
    void shouldKeepDrainRequestsThroughASnapshot() throws Exception {
        MetadataImage image = MetadataImage.empty()
                .apply(new MetadataCommand.SetDraining("ganglion-2", true))
                .image()
                .apply(new MetadataCommand.SetDraining("ganglion-3", true))
                .image()
                .apply(new MetadataCommand.SetDraining("ganglion-3", false))
                .image();
        assertThat(image.drainRequested()).containsExactly("ganglion-2");
        MetadataImage decoded = MetadataImageCodec.decode(MetadataImageCodec.encode(image));
        assertThat(decoded.drainRequested()).containsExactly("ganglion-2");
        assertThat(decoded.appliedIndex()).isEqualTo(image.appliedIndex());
    }

    @Test
    void shouldMakeAReplicatedQueueACoordinationObjectAndDeleteItWithTheQueue() throws Exception {
        MetadataImage image = MetadataImage.empty().apply(new PutVhost("/")).image();
        QueueDef replicated = new QueueDef(
                "orders", 7, QueueType.QUORUM, true, "", false, Map.of(), "", 3, DurabilityMode.MAJORITY_DURABLE);
        MetadataImage.Applied declared = image.apply(new DeclareQueue("/", replicated));
        assertThat(declared.accepted()).isTrue();
        var history = declared.image()
                .coordination()
                .object(ObjectId.of("/", "orders"))
                .orElseThrow();
        assertThat(history.spec().copies()).isEqualTo(3);
        assertThat(history.spec().writeRequirement()).isEqualTo(2);

        MetadataImage rebuilt = MetadataImage.empty();
        for (MetadataCommand command : declared.image().asCommands()) {
            MetadataImage.Applied applied = rebuilt.apply(command);
            assertThat(applied.rejection()).as("%s", command).isEmpty();
            rebuilt = applied.image();
        }
        assertThat(summary(rebuilt)).isEqualTo(summary(declared.image()));
        assertThat(summary(MetadataImageCodec.decode(MetadataImageCodec.encode(declared.image()))))
                .isEqualTo(summary(declared.image()));

        MetadataImage deleted =
                declared.image().apply(new DeleteQueue("/", "orders")).image();
        assertThat(deleted.coordination().objects()).isEmpty();
        assertThat(image.apply(new DeclareQueue(
                                "/", new QueueDef("plain", 8, QueueType.CLASSIC, true, "", false, Map.of())))
                        .image()
                        .coordination()
                        .objects())
                .isEmpty();
    }

    @Test
    void shouldDeleteAnUnusedQueueOnlyWhileItIsTheSameObject() {
        MetadataImage image =
                MetadataImage.empty().apply(new MetadataCommand.PutVhost("/")).image();
        MetadataImage first = image.apply(
                        new DeclareQueue("/", new QueueDef("idle", 8, QueueType.CLASSIC, true, "", false, Map.of())))
                .image();
        MetadataImage again = first.apply(new DeleteQueue("/", "idle"))
                .image()
                .apply(new DeclareQueue("/", new QueueDef("idle", 9, QueueType.CLASSIC, true, "", false, Map.of())))
                .image();

        MetadataImage.Applied stale = again.apply(new MetadataCommand.DeleteUnusedQueue("/", "idle", 8));
        MetadataImage.Applied same = first.apply(new MetadataCommand.DeleteUnusedQueue("/", "idle", 8));

        assertThat(stale.rejection()).isEmpty();
        assertThat(stale.image()
                        .vhost("/")
                        .orElseThrow()
                        .queue("idle")
                        .orElseThrow()
                        .objectId())
                .as("declared again since: kept")
                .isEqualTo(9);
        assertThat(same.image().vhost("/").orElseThrow().queue("idle")).isEmpty();
    }

    private static List<String> summary(MetadataImage image) {
        return image.coordination().objects().values().stream()
                .map(history -> history.spec() + " " + history.records())
                .toList();
    }
}
