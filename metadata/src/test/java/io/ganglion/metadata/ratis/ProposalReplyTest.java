package io.ganglion.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.metadata.Rejection;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ProposalReplyTest {
    @Test
    void shouldRoundTripEveryReply() throws IOException {
        for (ProposalReply reply : new ProposalReply[] {
            new ProposalReply.Accepted(),
            new ProposalReply.Rejected(new Rejection(Rejection.Kind.RESOURCE_LOCKED, "locked ünïcödé")),
            new ProposalReply.NotApplied("unknown metadata command tag 99")
        }) {
            assertThat(ProposalReply.decode(ProposalReply.encode(reply))).isEqualTo(reply);
        }
    }

    @Test
    void shouldKeepLongMessagesWithinOneReply() throws IOException {
        String message = "x".repeat(100_000);
        ProposalReply decoded = ProposalReply.decode(
                ProposalReply.encode(new ProposalReply.Rejected(new Rejection(Rejection.Kind.NOT_FOUND, message))));
        assertThat(((ProposalReply.Rejected) decoded).rejection().message())
                .startsWith("xxx")
                .hasSizeLessThan(20_000);
    }

    @Test
    void shouldRefuseBytesItDidNotWrite() {
        byte[] rejected =
                ProposalReply.encode(new ProposalReply.Rejected(new Rejection(Rejection.Kind.NOT_FOUND, "no")));
        for (int cut = 0; cut < rejected.length; cut++) {
            byte[] prefix = Arrays.copyOf(rejected, cut);
            assertThatThrownBy(() -> ProposalReply.decode(prefix)).isInstanceOf(IOException.class);
        }
        assertThatThrownBy(() -> ProposalReply.decode(new byte[] {7})).hasMessageContaining("tag 7");
        assertThatThrownBy(() -> ProposalReply.decode(new byte[] {1, 9, 0, 0})).hasMessageContaining("kind 9");
        assertThatThrownBy(() -> ProposalReply.decode(new byte[] {0, 0})).hasMessageContaining("trailing");
    }
}
