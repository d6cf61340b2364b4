package io.ganglion.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ganglion local}: a cluster of three brokers on this machine, for trying Ganglion out. Each broker is its own
 * process (so one can be killed with {@code kill -9}), with its data and its log ({@code broker.out}) under one folder.
 * Ctrl-C stops them all.
 */
@Command(
        name = "local",
        description = "Start a cluster of brokers on this machine (loopback); Ctrl-C stops it.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  bin/ganglion local          three brokers: AMQP 5672-5674, HTTP 15672-15674",
            "  bin/ganglion local --brokers 1 --dir /tmp/ganglion",
            "  GANGLION_BROKER_JAVA_OPTS=-XX:TieredStopAtLevel=1 bin/ganglion local",
            "  kill -9 PID                 a broker's PID as printed; then: ctl nodes"
        })
final class Local implements Runnable {
    @Option(names = "--dir", defaultValue = "data/local", description = "data folder (default ${DEFAULT-VALUE})")
    Path dir;

    @Option(names = "--brokers", defaultValue = "3", description = "how many brokers (default ${DEFAULT-VALUE})")
    int brokers;

    @Option(
            names = "--amqp-port",
            defaultValue = "5672",
            description = "first broker's AMQP port; the others follow (default ${DEFAULT-VALUE})")
    int amqpPort;

    @Option(names = "--http-port", defaultValue = "15672", description = "first HTTP port (default ${DEFAULT-VALUE})")
    int httpPort;

    @Option(names = "--peer-port", defaultValue = "25672", description = "first peer port (default ${DEFAULT-VALUE})")
    int peerPort;

    @Option(
            names = "--metadata-port",
            defaultValue = "25680",
            description = "first metadata port (default ${DEFAULT-VALUE})")
    int metadataPort;

    @Override
    public void run() {
        if (brokers < 1 || brokers > 7) {
            throw new Main.UsageError("--brokers must be between 1 and 7, got " + brokers);
        }
        List<BrokerChild> children = new ArrayList<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            stopAll(children);
                            stopped.countDown();
                        },
                        "ganglion-local-stop"));
        try {
            children.addAll(BrokerChild.cluster(
                    dir.toAbsolutePath(), brokers, amqpPort, httpPort, peerPort, metadataPort, jvmOptions()));
            for (BrokerChild child : children) {
                child.launch();
            }
            for (BrokerChild child : children) {
                child.awaitListening();
            }
        } catch (Exception e) {
            stopAll(children);
            throw new IllegalStateException("cluster failed to start: " + e.getMessage(), e);
        }
        System.out.println("ganglion local: " + brokers + " brokers, data and logs under " + dir.toAbsolutePath());
        for (BrokerChild child : children) {
            System.out.println("  " + child.nodeId() + "  amqp://guest:guest@127.0.0.1:" + child.amqpPort + "  http "
                    + child.httpPort + "  pid " + child.pid() + "  log " + child.dataDir.resolve("broker.out"));
        }
        System.out.println("try: bin/ganglion ctl status   (Ctrl-C stops the cluster)");
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static List<String> jvmOptions() {
        String options = System.getenv("GANGLION_BROKER_JAVA_OPTS");
        List<String> list = new ArrayList<>(List.of("-Xmx512m", "--enable-native-access=ALL-UNNAMED"));
        if (options != null && !options.isBlank()) {
            list.addAll(List.of(options.strip().split("\\s+")));
        }
        return list;
    }

    private static synchronized void stopAll(List<BrokerChild> children) {
        try {
            BrokerChild.stopTogether(children);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
