package io.ganglion.broker.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EagerClassesTest {

    @Test
    void shouldNameTheClassesOfAFolderOnTheClassPathAndSkipPackageInfo(@TempDir Path dir) throws Exception {
        Path folder = Files.createDirectories(dir.resolve("io/ganglion/broker/peer"));
        Files.write(folder.resolve("PeerCodec.class"), new byte[0]);
        Files.write(folder.resolve("PeerCodec$Frame.class"), new byte[0]);
        Files.write(folder.resolve("package-info.class"), new byte[0]);
        Files.writeString(folder.resolve("notes.txt"), "not a class");

        URL root = dir.resolve("io/ganglion/broker/").toUri().toURL();
        assertThat(EagerClasses.classNames(root, "io/ganglion/broker/"))
                .containsExactlyInAnyOrder(
                        "io.ganglion.broker.peer.PeerCodec", "io.ganglion.broker.peer.PeerCodec$Frame");
    }

    @Test
    void shouldNameTheClassesUnderAFolderOfAJar(@TempDir Path dir) throws Exception {
        Path jar = dir.resolve("ganglion-replication.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            for (String entry : new String[] {
                "io/ganglion/replication/",
                "io/ganglion/replication/Replica.class",
                "io/ganglion/replication/ReplicaEffect$Seal.class",
                "io/ganglion/storage/Storage.class",
                "META-INF/MANIFEST.MF"
            }) {
                out.putNextEntry(new JarEntry(entry));
                out.closeEntry();
            }
        }
        URL root = new java.net.URI("jar:" + jar.toUri() + "!/io/ganglion/replication/").toURL();
        assertThat(EagerClasses.classNames(root, "io/ganglion/replication/"))
                .containsExactlyInAnyOrder(
                        "io.ganglion.replication.Replica", "io.ganglion.replication.ReplicaEffect$Seal");
    }

    @Test
    void shouldListTheModulesClassesButNotTheTestClassesOfABuildsFolders() {
        java.util.TreeSet<String> names = EagerClasses.names();
        assertThat(names)
                .contains(
                        "io.ganglion.replication.Replica",
                        "io.ganglion.broker.peer.PeerCodec",
                        "io.ganglion.amqp.codec.MethodCodec",
                        "io.ganglion.storage.Storage",
                        "sun.net.ConnectionResetException")
                .doesNotContain(EagerClassesTest.class.getName());
    }

    @Test
    void shouldInitializeTheBrokersOwnClassesFromTheClassPath() {
        // the modules on this test's class path: the broker's classes and those of the modules it depends on
        int initialized = EagerClasses.initialize(EagerClassesTest.class.getClassLoader());
        assertThat(initialized).isGreaterThan(200);
        assertThat(EagerClasses.className("io/ganglion/replication/Replica.class"))
                .contains("io.ganglion.replication.Replica");
        assertThat(EagerClasses.className("io/ganglion/broker/package-info.class"))
                .isEmpty();
    }
}
