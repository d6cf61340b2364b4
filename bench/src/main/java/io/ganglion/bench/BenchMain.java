package io.ganglion.bench;

import io.ganglion.cli.Main;

/**
 * {@code bin/ganglion bench ...}: the CLI's command line with the {@code bench} commands added, so that usage, exit
 * statuses and the other commands are the same as {@link Main}'s.
 */
public final class BenchMain {
    private BenchMain() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit status instead of exiting: what tests call. */
    public static int run(String... args) {
        return Main.execute(Main.commandLine().addSubcommand(new Bench()), args);
    }
}
