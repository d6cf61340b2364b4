package io.ganglion.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;

/**
 * An idle TCP connection to a broker's AMQP port that notes when the broker's side closes it: after a {@code kill -9},
 * when the killed process's sockets are closed by its kernel, which is the earliest any survivor can learn of the
 * death through a connection. A process's sockets close only once the kernel has torn down its memory (and any
 * thread of it in {@code fsync} has returned), so a large resident heap makes every survivor learn late: the failover
 * bench reports this apart from the pause, as the part of it the cluster could not act on.
 *
 * <p>It connects and sends nothing, well within a broker's handshake timeout (10 s in Ganglion and RabbitMQ). One
 * daemon thread blocks on the read.
 */
final class ExitWatch implements AutoCloseable {
    static final long NONE = Long.MIN_VALUE;

    private final Socket socket;
    private final long origin;
    private volatile long closedNanos = NONE;

    private ExitWatch(Socket socket, long origin) {
        this.socket = socket;
        this.origin = origin;
    }

    /** Connects to the host and port of {@code amqpUri}; times are nanoseconds after {@code origin}. */
    static ExitWatch open(String amqpUri, long origin) throws IOException {
        URI uri = URI.create(amqpUri);
        int port = uri.getPort() < 0 ? 5672 : uri.getPort();
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress(uri.getHost(), port), 2000);
        ExitWatch watch = new ExitWatch(socket, origin);
        Thread reader = new Thread(watch::awaitClose, "bench-exit-watch");
        reader.setDaemon(true);
        reader.start();
        return watch;
    }

    private void awaitClose() {
        try (InputStream in = socket.getInputStream()) {
            while (in.read() >= 0) {
                // the broker speaks only after the client's protocol header, which never comes
            }
        } catch (IOException e) {
            // a reset or our own close: closed either way
        }
        closedNanos = System.nanoTime() - origin;
    }

    /** When the broker's side closed, in nanoseconds after the origin, or {@link #NONE} while it is open. */
    long closedNanos() {
        return closedNanos;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
