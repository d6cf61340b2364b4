package io.ganglion.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class VoterTest {
    @Test
    void shouldParseHostAndPortOrTakeTheDefaultPort() {
        assertThat(Voter.parse("n1", "10.0.0.1:7000")).isEqualTo(new Voter("n1", "10.0.0.1", 7000));
        assertThat(Voter.parse("n2", " broker-2 ")).isEqualTo(new Voter("n2", "broker-2", Voter.DEFAULT_PORT));
        assertThat(Voter.parse("n3", "[::1]:25681")).isEqualTo(new Voter("n3", "::1", 25681));
        assertThat(Voter.parse("n4", "[fe80::1]")).isEqualTo(new Voter("n4", "fe80::1", Voter.DEFAULT_PORT));
    }

    @Test
    void shouldWriteIpv6AddressesInBrackets() {
        assertThat(new Voter("n1", "::1", 25680).address()).isEqualTo("[::1]:25680");
        assertThat(new Voter("n1", "localhost", 1).address()).isEqualTo("localhost:1");
    }

    @Test
    void shouldRefuseBadVotersNamingThem() {
        assertThatThrownBy(() -> Voter.parse("n1", "host:http"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("n1");
        assertThatThrownBy(() -> Voter.parse("n1", "host:70000")).hasMessageContaining("out of range");
        assertThatThrownBy(() -> Voter.parse("n1", ":25680")).hasMessageContaining("no host");
        assertThatThrownBy(() -> new Voter("n 1", "host", 1)).hasMessageContaining("printable");
    }
}
