package io.ganglion.cli;

import io.ganglion.broker.Broker;
import io.ganglion.broker.BrokerConfig;
import io.ganglion.broker.jvm.CompilerPriority;
import io.ganglion.broker.jvm.SoftMaxHeap;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/ganglion}: {@code server} starts a broker, {@code ctl} manages a running one. Exit status 0 on success, 1
 * when a running broker refused the request, 2 for bad usage or configuration. The {@code bench} commands live in the
 * bench module, whose {@code io.ganglion.bench.BenchMain} adds them to this command line.
 */
@Command(
        name = "ganglion",
        mixinStandardHelpOptions = true,
        version = Broker.VERSION,
        description = "A replicated message broker that speaks AMQP 0-9-1.",
        subcommands = {Main.Server.class, Local.class, Ctl.class},
        footerHeading = "%nExamples:%n",
        footer = {
            "  bin/ganglion local             three brokers on this machine (data/local)",
            "  bin/ganglion server            one broker: AMQP on 5672, HTTP on 15672",
            "  bin/ganglion ctl status        the broker, the controller, the live set",
            "  bin/ganglion bench failover    kill -9 a queue owner under load",
            "  bin/ganglion COMMAND --help    a command's options and examples",
            "",
            "Environment: GANGLION_JAVA_OPTS, more options for this JVM (-Xmx2g);",
            "GANGLION_BROKER_JAVA_OPTS, for the brokers that local starts."
        })
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the CLI and returns its exit status instead of exiting: what tests call. */
    public static int run(String... args) {
        return execute(commandLine(), args);
    }

    /** This command line, with the help options on every command: the bench module adds its subcommands to it. */
    public static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new Main());
        withHelpOptions(commandLine);
        return commandLine;
    }

    /** Runs a command line built by {@link #commandLine()} and returns its exit status. */
    public static int execute(CommandLine commandLine, String... args) {
        commandLine.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("ganglion: " + e.getMessage());
            return e instanceof UsageError ? 2 : 1;
        });
        return commandLine.execute(args);
    }

    /** {@code --help} (and {@code --version}) on every command and subcommand. */
    private static void withHelpOptions(CommandLine command) {
        command.getCommandSpec().mixinStandardHelpOptions(true);
        command.getSubcommands().values().forEach(Main::withHelpOptions);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "a command is required: server, local, ctl or bench");
    }

    /** A problem with what the user asked for: exit status 2. */
    public static final class UsageError extends RuntimeException {
        public UsageError(String message) {
            super(message);
        }
    }

    @Command(
            name = "server",
            description = "Start a broker in the foreground; Ctrl-C stops it.",
            footerHeading = "%nExamples:%n",
            footer = {
                "  bin/ganglion server",
                "  bin/ganglion server --set amqp.port=5673 --set http.port=15673",
                "  bin/ganglion server --config /etc/ganglion/ganglion.conf",
                "  (settings and a cluster's config file: docs/operations.md)"
            })
    static final class Server implements Runnable {
        @Option(names = "--config", description = "a key = value file (see docs/operations.md)")
        Path config;

        @Option(
                names = {"--set", "-s"},
                description = "override a setting: --set amqp.port=5673 (repeatable)")
        Map<String, String> overrides = new LinkedHashMap<>();

        /**
         * Netty's leak detector, on by default, records the stack of one buffer in 128 when it is allocated and again
         * when it is released: on a loaded broker some 16,000 stack walks in two minutes (as JFR shows), on the
         * threads that carry every message. A broker started by this command runs without it (and without Ratis's
         * shaded copy) unless the JVM's options set the level, e.g. {@code -Dio.netty.leakDetection.level=paranoid}
         * to hunt a leak; brokers started in-process by tests keep Netty's default.
         */
        static final List<String> LEAK_DETECTION_LEVELS =
                List.of("io.netty.leakDetection.level", "org.apache.ratis.thirdparty.io.netty.leakDetection.level");

        static void leakDetectionOffUnlessSet() {
            for (String property : LEAK_DETECTION_LEVELS) {
                if (System.getProperty(property) == null) {
                    System.setProperty(property, "disabled");
                }
            }
        }

        @Override
        public void run() {
            leakDetectionOffUnlessSet();
            BrokerConfig parsed;
            try {
                parsed = BrokerConfig.load(config, overrides);
            } catch (BrokerConfig.ConfigException e) {
                throw new UsageError(e.getMessage());
            }
            // before the broker starts: its start is when the JIT compiles most
            CompilerPriority.start(parsed.compilerNice());
            SoftMaxHeap.apply(parsed.softMaxHeapPercent());
            Broker broker;
            try {
                broker = Broker.start(parsed);
            } catch (Exception e) {
                throw new IllegalStateException("broker failed to start: " + e.getMessage(), e);
            }
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                broker.close();
                                stopped.countDown();
                            },
                            "ganglion-shutdown"));
            System.out.println("ganglion " + Broker.VERSION + " node " + parsed.nodeId() + " listening on amqp://"
                    + parsed.amqpHost() + ":" + parsed.amqpPort() + " (http " + broker.httpPort() + ")");
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
