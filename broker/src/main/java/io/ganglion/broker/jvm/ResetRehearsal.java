package io.ganglion.broker.jvm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Now and then, ends two connections to this broker's own peer port, one with a reset and one with an orderly close,
 * so that the read path of a connection a peer's death ends has run before a peer dies.
 *
 * <p>Why: C2 compiles a branch whose {@code if} never ran while the method was profiled as a trap ("unreached"),
 * whatever the trap limits, and a socket read that fails with "connection reset" takes such branches in Netty's
 * {@code NioByteUnsafe.read} and the JDK's {@code IOUtil.readIntoNativeBuffer} (and an end of stream, which a killed
 * process's socket with nothing unread sends, others in the same methods): the methods every connection of the
 * broker reads through. Without a rehearsal both are thrown away on every survivor at the moment a killed broker's
 * sockets close ({@code -Xlog:deoptimization} shows it), and the survivors' reads run interpreted until compiled
 * again. A reset rehearsed while the methods are hot makes them trap once then, with no failure around, and be
 * compiled again with the branch in.
 *
 * <p>A rehearsal connects twice, sends one byte each time (so the broker's side is reading, a frame begun), and
 * {@value #READ_BEFORE_END_MS} ms later, on its timer, closes the first normally and the second with {@code
 * SO_LINGER} 0, which sends a reset; the peer link logs both at
 * debug, as it does for a peer that died. It runs
 * {@link #DELAYS_SECONDS} after start (when traffic, if any, has made the read path hot), then every {@value
 * #PERIOD_SECONDS} s: a method compiled again later, its profile reset, meets the branch again.
 */
public final class ResetRehearsal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ResetRehearsal.class);

    static final long[] DELAYS_SECONDS = {5, 15, 30, 60, 120, 240};
    static final long PERIOD_SECONDS = 600;
    static final int CONNECT_TIMEOUT_MS = 1_000;
    /** How long the byte sent is left to be read before the connections end. */
    static final long READ_BEFORE_END_MS = 20;

    private final InetSocketAddress target;
    private final ScheduledExecutorService timer;

    private ResetRehearsal(InetSocketAddress target) {
        this.target = target;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ganglion-reset-rehearsal");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Starts rehearsing against {@code target} (this broker's own peer listener). */
    public static ResetRehearsal start(InetSocketAddress target) {
        ResetRehearsal rehearsal = new ResetRehearsal(target);
        for (long delay : DELAYS_SECONDS) {
            rehearsal.timer.schedule(rehearsal::rehearseQuietly, delay, TimeUnit.SECONDS);
        }
        long last = DELAYS_SECONDS[DELAYS_SECONDS.length - 1];
        rehearsal.timer.scheduleWithFixedDelay(
                rehearsal::rehearseQuietly, last + PERIOD_SECONDS, PERIOD_SECONDS, TimeUnit.SECONDS);
        return rehearsal;
    }

    private void rehearseQuietly() {
        Socket orderly;
        Socket reset;
        try {
            orderly = open(target);
        } catch (IOException | RuntimeException e) {
            LOG.debug("event=reset_rehearsal_failed target={} cause={}", target, e.toString());
            return;
        }
        try {
            reset = open(target);
        } catch (IOException | RuntimeException e) {
            end(orderly, false);
            LOG.debug("event=reset_rehearsal_failed target={} cause={}", target, e.toString());
            return;
        }
        // the broker's side reads the byte first; the ends come on this timer later, with no thread waiting for them
        timer.schedule(
                () -> {
                    end(orderly, false);
                    end(reset, true);
                    LOG.debug("event=reset_rehearsed target={}", target);
                },
                READ_BEFORE_END_MS,
                TimeUnit.MILLISECONDS);
    }

    /** Connects to {@code target} and sends one byte: a frame begun, which the other side reads and waits on. */
    static Socket open(InetSocketAddress target) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(target, CONNECT_TIMEOUT_MS);
            socket.getOutputStream().write(0);
            socket.getOutputStream().flush();
            return socket;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Ends a connection {@link #open} made: with a reset if {@code reset}, else with an orderly close. */
    static void end(Socket socket, boolean reset) {
        try (socket) {
            if (reset) {
                socket.setSoLinger(true, 0); // close() now sends RST, not FIN
            }
        } catch (IOException e) {
            LOG.debug("event=reset_rehearsal_end_failed cause={}", e.toString());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
