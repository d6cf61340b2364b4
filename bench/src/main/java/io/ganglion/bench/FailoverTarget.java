package io.ganglion.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The brokers {@code bench failover} runs its workload against: Ganglion brokers it starts, RabbitMQ nodes it starts, or
 * brokers it did not start, driven by shell commands. The workload only needs what is here: where to connect, how to
 * kill and restart a node, who owns each queue and which node is the controller.
 */
interface FailoverTarget extends AutoCloseable {
    /** What the report calls this target, e.g. {@code ganglion (3 brokers started by the bench)}. */
    String description();

    /** Node names, in the order queues are spread over them: queue i is declared through node i. */
    List<String> nodes();

    String amqpUri(String node);

    /** SIGKILL or the like: no clean shutdown. Returns once the node is gone. */
    void kill(String node) throws IOException, InterruptedException;

    /** Starts a killed node again; returns once it accepts AMQP connections. */
    void restart(String node) throws IOException, InterruptedException;

    /** Waits until every node is up and part of the cluster (and, where there is one, a controller is known). */
    void awaitHealthy() throws IOException, InterruptedException;

    /** Where each queue lives now, for the queues the target knows; a queue not (yet) known is absent. */
    Map<String, Placement> placements(List<String> queues) throws IOException, InterruptedException;

    /** The controller, or empty when the target has none (RabbitMQ) or none is known right now. */
    Optional<String> controller() throws IOException, InterruptedException;

    /** Whether this target has a controller at all; the controller scenario is skipped when not. */
    boolean hasController();

    /** The default follower loss hold in ms, or empty when the target has no such setting. */
    OptionalLong defaultHoldMs() throws IOException, InterruptedException;

    void setHoldMs(long ms) throws IOException, InterruptedException;

    @Override
    void close();

    /** The owner (leader) of a queue and every member holding a copy, the owner included. */
    record Placement(String owner, List<String> members) {
        public Placement {
            members = List.copyOf(members);
        }

        /** What a queue lost when {@code victim} died: {@code owner}, {@code follower} or {@code none}. */
        String roleOf(String victim) {
            if (owner.equals(victim)) {
                return "owner";
            }
            return members.contains(victim) ? "follower" : "none";
        }
    }

    /** Runs {@code bash -c command} and returns its standard output; fails on a non-zero exit or after the timeout. */
    static String shell(String command, Map<String, String> environment, long timeoutSeconds)
            throws IOException, InterruptedException {
        // output to a file, not a pipe: a command that starts a daemon must not keep us reading until the daemon exits
        java.nio.file.Path output = java.nio.file.Files.createTempFile("ganglion-bench-cmd", ".out");
        try {
            ProcessBuilder builder = new ProcessBuilder("bash", "-c", command)
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("command did not finish within " + timeoutSeconds + " s: " + command);
            }
            String text = java.nio.file.Files.readString(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IOException(
                        "command failed (exit " + process.exitValue() + "): " + command + "\n" + text.strip());
            }
            return text;
        } finally {
            java.nio.file.Files.deleteIfExists(output);
        }
    }
}
