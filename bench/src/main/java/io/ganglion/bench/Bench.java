package io.ganglion.bench;

import picocli.CommandLine.Command;

/** {@code ganglion bench}: benchmark programs that start real brokers and print their figures. */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = "Benchmarks on real broker processes.",
        subcommands = {
            BacklogBench.class,
            ControllerFailoverBench.class,
            DiskBench.class,
            FailoverBench.class,
            PerfTestBench.class
        })
final class Bench {}
