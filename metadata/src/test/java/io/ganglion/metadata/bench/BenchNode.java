package io.ganglion.metadata.bench;

import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.ratis.RatisLogConfig;
import io.ganglion.metadata.ratis.RatisMetadataLog;
import io.ganglion.metadata.ratis.Voter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One voter of {@link LeaderFailoverBench}, in its own JVM. Arguments: {@code id storageDir id=host:port...}.
 *
 * <p>Speaks lines on stdin and stdout: it prints {@code READY}, {@code LEADER true|false} on every leadership change,
 * and answers {@code propose NAME} with {@code COMMITTED NAME} or {@code FAILED NAME reason}, and {@code status} with
 * {@code STATUS appliedIndex}. It exits when stdin closes.
 */
public final class BenchNode {
    private static final Logger LOG = LoggerFactory.getLogger(BenchNode.class);

    private BenchNode() {}

    public static void main(String[] args) throws Exception {
        String id = args[0];
        Path storage = Path.of(args[1]);
        List<Voter> voters = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String[] parts = args[i].split("=", 2);
            voters.add(Voter.parse(parts[0], parts[1]));
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (RatisMetadataLog log = RatisMetadataLog.start(RatisLogConfig.of(id, voters, storage))) {
            log.onLeaderChange(leader -> out.println("LEADER " + leader));
            out.println("READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("propose ")) {
                    String name = line.substring("propose ".length());
                    log.propose(new MetadataCommand.PutVhost(name)).whenComplete((applied, failure) -> {
                        if (failure == null) {
                            LOG.info("event=bench_committed name={}", name);
                            out.println("COMMITTED " + name);
                        } else {
                            out.println("FAILED " + name + " " + failure);
                        }
                    });
                } else if (line.equals("status")) {
                    out.println("STATUS " + log.image().appliedIndex());
                }
            }
        }
    }
}
