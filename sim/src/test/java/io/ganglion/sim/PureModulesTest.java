package io.ganglion.sim;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZonedDateTime;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.Timer;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The pure modules (DESIGN.md section 2: {@code coordination}, {@code replication}, {@code queues}, and the metadata
 * image that the simulator applies, {@code io.ganglion.metadata} without {@code ratis}) do no IO, start no thread, and
 * read no clock and no randomness of their own: time, randomness and messages are their inputs. Checked here, where
 * all four are on the class path, on their main classes.
 */
class PureModulesTest {
    private static final String[] PURE = {
        "io.ganglion.coordination..",
        "io.ganglion.replication..",
        "io.ganglion.queues..",
        "io.ganglion.serving..",
        "io.ganglion.metadata"
    };

    private static final JavaClasses CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(
                    "io.ganglion.coordination",
                    "io.ganglion.replication",
                    "io.ganglion.queues",
                    "io.ganglion.serving",
                    "io.ganglion.metadata")
            .that(resideInAnyPackage(PURE));

    @Test
    void shouldDoNoIo() {
        check(noClasses()
                .should()
                .dependOnClassesThat(resideInAnyPackage("java.nio.file..", "java.nio.channels..", "java.net.."))
                .orShould()
                .dependOnClassesThat(belongToAnyOf(
                        java.io.File.class,
                        java.io.FileDescriptor.class,
                        java.io.FileInputStream.class,
                        java.io.FileOutputStream.class,
                        java.io.FileReader.class,
                        java.io.FileWriter.class,
                        java.io.RandomAccessFile.class,
                        java.io.Console.class))
                .orShould()
                .accessField(System.class, "out")
                .orShould()
                .accessField(System.class, "err")
                .orShould()
                .accessField(System.class, "in")
                .because("a pure module's messages and records are effects that its caller executes"));
    }

    /** A future is allowed: {@code MetadataLog}, the port through which the broker reaches its log, returns them. */
    @Test
    void shouldStartNoThread() {
        check(noClasses()
                .should()
                .dependOnClassesThat(belongToAnyOf(
                        Thread.class, Executors.class, ExecutorService.class, ForkJoinPool.class, Timer.class))
                .because("a pure module runs on its caller's thread; timers are effects"));
    }

    @Test
    void shouldReadNoClockAndDrawNoRandomnessOfItsOwn() {
        check(noClasses()
                .should()
                .callMethod(System.class, "currentTimeMillis")
                .orShould()
                .callMethod(System.class, "nanoTime")
                .orShould()
                .callMethod(Instant.class, "now")
                .orShould()
                .callMethod(LocalDateTime.class, "now")
                .orShould()
                .callMethod(LocalDate.class, "now")
                .orShould()
                .callMethod(ZonedDateTime.class, "now")
                .orShould()
                .dependOnClassesThat(belongToAnyOf(Clock.class))
                .orShould()
                .dependOnClassesThat(belongToAnyOf(
                        Random.class, SecureRandom.class, ThreadLocalRandom.class, SplittableRandom.class))
                .orShould()
                .callMethod(Math.class, "random")
                .orShould()
                .callMethod(UUID.class, "randomUUID")
                .because("time and randomness are inputs: a method that needs the time takes it as an argument"));
    }

    @Test
    void shouldSeeNeitherNettyNorRatisNorTheGanglionModulesThatDoIo() {
        check(noClasses()
                .should()
                .dependOnClassesThat(resideInAnyPackage("io.netty..", "org.apache.ratis.."))
                .orShould()
                .dependOnClassesThat(resideInAPackage("io.ganglion..").and(not(resideInAnyPackage(PURE))))
                .because("the pure modules depend on the JDK and on each other only"));
    }

    /** The arrows between the pure modules (their poms): replication to coordination, serving to
     * the three below it, metadata to coordination and queues. */
    @Test
    void shouldDependOnEachOtherOnlyAlongTheAllowedArrows() {
        check(layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("coordination")
                .definedBy("io.ganglion.coordination..")
                .layer("replication")
                .definedBy("io.ganglion.replication..")
                .layer("queues")
                .definedBy("io.ganglion.queues..")
                .layer("serving")
                .definedBy("io.ganglion.serving..")
                .layer("metadata")
                .definedBy("io.ganglion.metadata")
                .whereLayer("coordination")
                .mayNotAccessAnyLayer()
                .whereLayer("queues")
                .mayNotAccessAnyLayer()
                .whereLayer("replication")
                .mayOnlyAccessLayers("coordination")
                .whereLayer("serving")
                .mayOnlyAccessLayers("coordination", "replication", "queues")
                .whereLayer("metadata")
                .mayOnlyAccessLayers("coordination", "queues"));
    }

    private static void check(ArchRule rule) {
        rule.check(CLASSES);
    }
}
