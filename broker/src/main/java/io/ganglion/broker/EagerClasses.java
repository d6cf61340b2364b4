package io.ganglion.broker;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads and initializes, at a broker's start, every class of the broker's own modules, and a few of the JDK's that only
 * a peer's death brings in.
 *
 * <p>Why: the optimizing compiler cannot allocate, test against or call into a class that is not initialized yet when
 * it compiles a method; it compiles a trap there instead, and the first time the trap is reached the whole method is
 * thrown away and runs in the interpreter until it is hot again and compiled anew. A broker's hottest methods dispatch
 * over message and effect types that steady traffic never uses and a failover does at once: the seal request and its
 * reply, an install, a consumer cancelled. In the failover bench every survivor threw away {@code Replica.onEvent},
 * {@code ReplicaHost.execute}, {@code PeerCodec.encode}, {@code PeerCodec.encodedLength} and {@code MethodCodec.encode}
 * within 20 ms of a kill ({@code -Xlog:deoptimization}: "uninitialized reinterpret"), and every queue of those brokers,
 * also those that lost nothing, went 30-60 ms without a confirm while the code ran interpreted and was compiled again.
 * With the classes initialized before the traffic, the compiler has nothing to trap on.
 *
 * <p>Only classes under {@link #PACKAGES} are touched: the broker's runtime, not the command line tools or the
 * simulator that share its class path in a build. A class that cannot be initialized is skipped (logged at debug):
 * it would fail the same way when first used.
 */
final class EagerClasses {
    private static final Logger LOG = LoggerFactory.getLogger(EagerClasses.class);

    /** The packages, as resource folders, whose classes a broker runs. */
    static final List<String> PACKAGES = List.of(
            "io/ganglion/amqp/",
            "io/ganglion/broker/",
            "io/ganglion/coordination/",
            "io/ganglion/metadata/",
            "io/ganglion/queues/",
            "io/ganglion/replication/",
            "io/ganglion/storage/");

    /** JDK classes first used when a peer's connection resets or a failover sorts, where present. */
    static final List<String> JDK = List.of(
            "sun.net.ConnectionResetException",
            "java.util.DualPivotQuicksort",
            "java.util.DualPivotQuicksort$Sorter",
            "java.util.DualPivotQuicksort$PartitionOperation");

    private EagerClasses() {}

    /** Initializes the classes; returns how many were initialized. */
    static int initialize(ClassLoader loader) {
        long began = System.nanoTime();
        TreeSet<String> names = new TreeSet<>();
        for (String folder : PACKAGES) {
            try {
                Enumeration<URL> roots = loader.getResources(folder);
                while (roots.hasMoreElements()) {
                    names.addAll(classNames(roots.nextElement(), folder));
                }
            } catch (IOException | URISyntaxException e) {
                LOG.debug("event=eager_classes_unlisted folder={} cause={}", folder, e.toString());
            }
        }
        names.addAll(JDK);
        int initialized = 0;
        for (String name : names) {
            try {
                Class.forName(name, true, loader);
                initialized++;
            } catch (ClassNotFoundException | LinkageError e) {
                LOG.debug("event=eager_class_skipped class={} cause={}", name, e.toString());
            }
        }
        LOG.info(
                "event=eager_classes_initialized classes={} ms={}",
                initialized,
                (System.nanoTime() - began) / 1_000_000);
        return initialized;
    }

    /** The binary names of the classes under {@code folder} in the jar or folder {@code root} points into. */
    static List<String> classNames(URL root, String folder) throws IOException, URISyntaxException {
        List<String> names = new ArrayList<>();
        if (root.getProtocol().equals("jar")) {
            String spec = root.getPath(); // file:/.../x.jar!/io/ganglion/broker/
            Path jar = Path.of(java.net.URI.create(spec.substring(0, spec.indexOf("!/"))));
            try (JarFile file = new JarFile(jar.toFile())) {
                Enumeration<JarEntry> entries = file.entries();
                while (entries.hasMoreElements()) {
                    String entry = entries.nextElement().getName();
                    if (entry.startsWith(folder)) {
                        className(entry).ifPresent(names::add);
                    }
                }
            }
        } else if (root.getProtocol().equals("file")) {
            Path dir = Path.of(root.toURI());
            Path base = dir;
            for (int i = 0; i < folder.split("/").length; i++) {
                base = base.getParent();
            }
            Path top = base;
            try (Stream<Path> files = Files.walk(dir)) {
                files.map(file -> top.relativize(file).toString().replace(java.io.File.separatorChar, '/'))
                        .forEach(entry -> className(entry).ifPresent(names::add));
            }
        }
        return names;
    }

    /** The class an entry such as {@code io/ganglion/broker/Shard$Group.class} holds; empty for anything else. */
    static java.util.Optional<String> className(String entry) {
        if (!entry.endsWith(".class") || entry.endsWith("package-info.class") || entry.endsWith("module-info.class")) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(
                entry.substring(0, entry.length() - ".class".length()).replace('/', '.'));
    }
}
