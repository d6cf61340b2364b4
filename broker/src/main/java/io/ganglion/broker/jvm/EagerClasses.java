package io.ganglion.broker.jvm;

import io.ganglion.broker.Broker;
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
 * <p>Only the classes of the broker's own modules are touched, found from one class of each ({@link #MODULES}) in the
 * jar or class folder it came from: not the command line tools or the simulator that share its class path in a build,
 * nor the test classes of a build's folders. A class that cannot be initialized is skipped (logged at debug): it
 * would fail the same way when first used.
 */
public final class EagerClasses {
    private static final Logger LOG = LoggerFactory.getLogger(EagerClasses.class);

    /** One class of each module a broker runs, and the package folder that holds the module's classes. */
    static final List<Module> MODULES = List.of(
            new Module(io.ganglion.amqp.codec.MethodCodec.class, "io/ganglion/amqp/"),
            new Module(Broker.class, "io/ganglion/broker/"),
            new Module(io.ganglion.coordination.Epoch.class, "io/ganglion/coordination/"),
            new Module(io.ganglion.metadata.MetadataCommand.class, "io/ganglion/metadata/"),
            new Module(io.ganglion.queues.QueueEffects.class, "io/ganglion/queues/"),
            new Module(io.ganglion.replication.Replica.class, "io/ganglion/replication/"),
            new Module(io.ganglion.storage.Storage.class, "io/ganglion/storage/"));

    /** A module: a class of it, and the folder its classes are under. */
    record Module(Class<?> anchor, String folder) {}

    /** JDK classes first used when a peer's connection resets or a failover sorts, where present. */
    static final List<String> JDK = List.of(
            "sun.net.ConnectionResetException",
            "java.util.DualPivotQuicksort",
            "java.util.DualPivotQuicksort$Sorter",
            "java.util.DualPivotQuicksort$PartitionOperation");

    private EagerClasses() {}

    /** Initializes the classes; returns how many were initialized. */
    public static int initialize(ClassLoader loader) {
        long began = System.nanoTime();
        int initialized = 0;
        for (String name : names()) {
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

    /** The names of the classes to initialize: the modules' and {@link #JDK}. */
    static TreeSet<String> names() {
        TreeSet<String> names = new TreeSet<>();
        for (Module module : MODULES) {
            try {
                names.addAll(classNames(root(module), module.folder()));
            } catch (IOException | URISyntaxException | RuntimeException e) {
                LOG.debug("event=eager_classes_unlisted folder={} cause={}", module.folder(), e.toString());
            }
        }
        names.addAll(JDK);
        return names;
    }

    /**
     * Where a module's package folder is: inside the jar its anchor class came from ({@code jar:file:...!/folder}), or
     * under the class folder it came from.
     */
    static URL root(Module module) throws IOException, URISyntaxException {
        URL location = module.anchor().getProtectionDomain().getCodeSource().getLocation();
        if (location.getPath().endsWith(".jar")) {
            return new java.net.URI("jar:" + location + "!/" + module.folder()).toURL();
        }
        return location.toURI().resolve(module.folder()).toURL();
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
