package io.ganglion.testing;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.ToIntFunction;

/**
 * What a command-line entry point printed and returned, run in this JVM with {@code System.out} and {@code
 * System.err} captured: for the tests of {@code bin/ganglion}'s commands.
 *
 * @param status the exit status the entry point returned
 * @param out what it printed to standard output
 * @param err what it printed to standard error
 */
public record ConsoleRun(int status, String out, String err) {
    /** Runs {@code main} (an entry point that returns its exit status) on {@code args}. */
    public static ConsoleRun of(ToIntFunction<String[]> main, String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(outBytes, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(errBytes, true, StandardCharsets.UTF_8));
            int status = main.applyAsInt(args);
            return new ConsoleRun(
                    status, outBytes.toString(StandardCharsets.UTF_8), errBytes.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }
}
