package io.ganglion.broker;

import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.User;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Checks a connection's user and password, and its access to a vhost, against the users of the metadata image. */
final class Authenticator {
    private static final Logger LOG = LoggerFactory.getLogger(Authenticator.class);

    private final MetadataLog metadata;

    Authenticator(MetadataLog metadata) {
        this.metadata = metadata;
    }

    /** The user, if the password is its own; {@code guest} only from a loopback address, as RabbitMQ allows it. */
    Optional<String> authenticate(String user, String password, SocketAddress remote) {
        Optional<User> known = metadata.image().user(user);
        if (known.isEmpty() || !known.get().checkPassword(password)) {
            return Optional.empty();
        }
        if (user.equals("guest") && !isLoopback(remote)) {
            LOG.warn("event=guest_refused remote={}", remote);
            return Optional.empty();
        }
        return Optional.of(user);
    }

    boolean vhostAllowed(String user, String vhost) {
        MetadataImage image = metadata.image();
        return image.user(user).isPresent() && image.vhost(vhost).isPresent();
    }

    private static boolean isLoopback(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet
                && inet.getAddress() != null
                && inet.getAddress().isLoopbackAddress();
    }
}
