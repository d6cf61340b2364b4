package io.ganglion.bench;

import picocli.CommandLine.Command;

/** {@code ganglion bench}: benchmark programs that start real brokers and print their figures. */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = "Benchmarks on real broker processes.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  bin/ganglion bench failover --trials 3     kill -9 owners under load",
            "  bin/ganglion bench perftest                PerfTest, Ganglion and RabbitMQ",
            "  bin/ganglion bench disk --seconds 60       the disk's force latency",
            "  bin/ganglion bench backlog                 1M messages in a 256 MiB heap",
            "  bin/ganglion bench controller-failover     kill the controller, again",
            "  bench/perftest.sh 30 --rounds 3            PerfTest's three cases",
            "  bench/jmh.sh -f 1 -wi 1 -i 2               the JMH micro-benchmarks"
        },
        subcommands = {
            BacklogBench.class,
            ExpiryBench.class,
            ControllerFailoverBench.class,
            DiskBench.class,
            FailoverBench.class,
            PerfTestBench.class
        })
final class Bench {}
