package io.ganglion.broker.cluster;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One broker of the cluster's seed list: its node id, host, peer link port and metadata (Ratis) port. Written {@code
 * id@host:peerPort:metadataPort}; the ports may be left out ({@value #DEFAULT_PEER_PORT} and {@value
 * #DEFAULT_METADATA_PORT}).
 */
public record Seed(String id, String host, int peerPort, int metadataPort) {
    public static final int DEFAULT_PEER_PORT = 25672;
    public static final int DEFAULT_METADATA_PORT = 25680;

    /** How many of the first seeds vote in the metadata quorum: three, or five once there are five. */
    public static int voterCount(int seeds) {
        return seeds >= 5 ? 5 : Math.min(3, seeds);
    }

    public Seed {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(host, "host");
    }

    /**
     * Parses a comma-separated seed list.
     *
     * @throws IllegalArgumentException naming the entry that does not parse, or a node listed twice
     */
    public static List<Seed> parseList(String text) {
        List<Seed> seeds = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (String entry : text.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            Seed seed = parse(entry.strip());
            if (!ids.add(seed.id())) {
                throw new IllegalArgumentException("node " + seed.id() + " is listed twice");
            }
            seeds.add(seed);
        }
        return List.copyOf(seeds);
    }

    static Seed parse(String entry) {
        int at = entry.indexOf('@');
        if (at <= 0 || at == entry.length() - 1) {
            throw new IllegalArgumentException("expected id@host[:peerPort[:metadataPort]], got '" + entry + "'");
        }
        String id = entry.substring(0, at);
        if (!id.chars().allMatch(c -> c > ' ' && c < 127 && c != ',')) {
            throw new IllegalArgumentException("node id must be printable ASCII without spaces: '" + id + "'");
        }
        String[] parts = entry.substring(at + 1).split(":");
        if (parts.length > 3 || parts[0].isBlank()) {
            throw new IllegalArgumentException("expected id@host[:peerPort[:metadataPort]], got '" + entry + "'");
        }
        int peerPort = parts.length > 1 ? port(parts[1], entry) : DEFAULT_PEER_PORT;
        int metadataPort = parts.length > 2 ? port(parts[2], entry) : DEFAULT_METADATA_PORT;
        return new Seed(id, parts[0], peerPort, metadataPort);
    }

    private static int port(String text, String entry) {
        try {
            int port = Integer.parseInt(text);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException("bad port '" + text + "' in seed '" + entry + "'");
    }

    @Override
    public String toString() {
        return id + "@" + host + ":" + peerPort + ":" + metadataPort;
    }
}
