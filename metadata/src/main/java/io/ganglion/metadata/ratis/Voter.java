package io.ganglion.metadata.ratis;

import java.util.Objects;

/**
 * One broker of the metadata voter set: its node id and the address of its Ratis server ({@code host:port}, port
 * {@value #DEFAULT_PORT} unless given).
 */
public record Voter(String id, String host, int port) {
    /** The port of a broker's Ratis server unless configured otherwise. */
    public static final int DEFAULT_PORT = 25680;

    public Voter {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(host, "host");
        if (id.isBlank() || !id.chars().allMatch(c -> c > ' ' && c < 127)) {
            throw new IllegalArgumentException("voter id must be printable ASCII without spaces: '" + id + "'");
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException("voter " + id + " has no host");
        }
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("voter " + id + ": port " + port + " is out of range");
        }
    }

    /**
     * Parses {@code host:port} or {@code host} (port {@value #DEFAULT_PORT}); an IPv6 literal goes in brackets.
     *
     * @throws IllegalArgumentException naming the voter when the address does not parse
     */
    public static Voter parse(String id, String address) {
        String host = address.strip();
        int port = DEFAULT_PORT;
        int colon = host.lastIndexOf(':');
        if (colon >= 0 && host.indexOf(']', colon) < 0) {
            try {
                port = Integer.parseInt(host.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("voter " + id + ": bad port in '" + address + "'", e);
            }
            host = host.substring(0, colon);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Voter(id, host, port);
    }

    /** {@code host:port}, with an IPv6 literal in brackets. */
    public String address() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
