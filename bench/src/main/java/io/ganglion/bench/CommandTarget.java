package io.ganglion.bench;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.ganglion.cli.Main;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Brokers the bench did not start: one AMQP URI per node, and shell commands to kill and restart a node, in which
 * {@code {node}} is replaced by the node's name and {@code {index}} by its position (1-based). Queue owners come from
 * a Ganglion HTTP API ({@code --ganglion-http}) or from a command printing JSON in the shape of {@code rabbitmqctl
 * list_queues name leader members --formatter json}; the controller from the Ganglion API or a command printing its
 * name; the hold is set through the Ganglion API or a command with {@code {ms}}.
 */
final class CommandTarget implements FailoverTarget {
    record Commands(String kill, String restart, String owners, String controller, String hold, String health) {}

    private final Map<String, String> uris;
    private final Commands commands;
    private final GanglionApi ganglion;

    /**
     * @param uris node name -> AMQP URI, in queue placement order
     * @param ganglionHttp node name -> HTTP API base URL, or empty when the target is not Ganglion
     */
    CommandTarget(
            Map<String, String> uris,
            Commands commands,
            Map<String, String> ganglionHttp,
            String user,
            String password) {
        this.uris = new LinkedHashMap<>(uris);
        this.commands = commands;
        this.ganglion = ganglionHttp.isEmpty() ? null : new GanglionApi(ganglionHttp, user, password);
        if (ganglion == null && commands.owners() == null) {
            throw new Main.UsageError("an external target needs --ganglion-http or --owners-cmd to know queue owners");
        }
    }

    @Override
    public String description() {
        return "external brokers " + uris.values();
    }

    @Override
    public List<String> nodes() {
        return List.copyOf(uris.keySet());
    }

    @Override
    public String amqpUri(String node) {
        return uris.get(node);
    }

    private String expand(String command, String node) {
        return command.replace("{node}", node).replace("{index}", Integer.toString(nodes().indexOf(node) + 1));
    }

    @Override
    public void kill(String node) throws IOException, InterruptedException {
        FailoverTarget.shell(expand(commands.kill(), node), Map.of(), 60);
    }

    @Override
    public void restart(String node) throws IOException, InterruptedException {
        FailoverTarget.shell(expand(commands.restart(), node), Map.of(), 120);
        Waits.until(
                Duration.ofSeconds(120),
                Duration.ofMillis(250),
                "node " + node + " did not accept AMQP connections within 120 s of restarting",
                () -> accepts(node));
    }

    private boolean accepts(String node) {
        ConnectionFactory factory = new ConnectionFactory();
        try {
            factory.setUri(uris.get(node));
            factory.setConnectionTimeout(2_000);
            try (Connection ignored = factory.newConnection("bench-failover-probe")) {
                return true;
            }
        } catch (Exception e) {
            return false;
        }
    }

    @Override
    public void awaitHealthy() throws IOException, InterruptedException {
        Waits.until(
                Duration.ofSeconds(120),
                Duration.ofMillis(500),
                "the external brokers were not all healthy within 120 s",
                () -> {
                    if (!nodes().stream().allMatch(this::accepts)) {
                        return false;
                    }
                    if (ganglion != null && !ganglion.healthy(nodes())) {
                        return false;
                    }
                    if (commands.health() != null) {
                        FailoverTarget.shell(commands.health(), Map.of(), 60); // fails the check by throwing
                    }
                    return true;
                });
    }

    @Override
    public Map<String, Placement> placements(List<String> queues) throws IOException, InterruptedException {
        if (ganglion != null) {
            return ganglion.placements(queues);
        }
        return RabbitMqTarget.parsePlacements(FailoverTarget.shell(commands.owners(), Map.of(), 60), queues);
    }

    @Override
    public Optional<String> controller() throws IOException, InterruptedException {
        if (ganglion != null) {
            return ganglion.controller();
        }
        if (commands.controller() == null) {
            return Optional.empty();
        }
        String name = FailoverTarget.shell(commands.controller(), Map.of(), 60).strip();
        return name.isEmpty() ? Optional.empty() : Optional.of(name);
    }

    @Override
    public boolean hasController() {
        return ganglion != null || commands.controller() != null;
    }

    @Override
    public OptionalLong defaultHoldMs() throws IOException, InterruptedException {
        if (ganglion != null) {
            return ganglion.defaultHoldMs();
        }
        return OptionalLong.empty();
    }

    @Override
    public void setHoldMs(long ms) throws IOException, InterruptedException {
        if (ganglion != null) {
            ganglion.setHoldMs(ms);
        } else if (commands.hold() != null) {
            FailoverTarget.shell(commands.hold().replace("{ms}", Long.toString(ms)), Map.of(), 60);
        } else {
            throw new Main.UsageError(
                    "this target has no way to set the follower loss hold: give --hold-cmd or --ganglion-http,"
                            + " or run with --holds default");
        }
    }

    @Override
    public void close() {}
}
