package io.ganglion.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** The options a bench that starts Ganglion brokers passes on to each of them: JVM options and settings. */
final class BrokerOptions {
    @Option(
            names = "--broker-jvm",
            description = "one more JVM option for each Ganglion broker, e.g. --broker-jvm=-XX:+UseZGC (repeatable)")
    List<String> jvm = new ArrayList<>();

    @Option(
            names = "--broker-set",
            description = "one more setting for each Ganglion broker, KEY=VALUE as `ganglion broker --set` takes it,"
                    + " e.g. --broker-set storage.group_commit_us=0 (repeatable)")
    Map<String, String> settings = new LinkedHashMap<>();
}
