package io.ganglion.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Marks a test class that starts several broker processes (a cluster on loopback): the slow tests. The build's
 * {@code fast} profile ({@code ./mvnw -B -Pfast verify}) leaves out every test with this tag; the default build runs
 * them all.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(ClusterTest.TAG)
public @interface ClusterTest {
    /** The JUnit tag, as the {@code fast} profile's {@code excludedGroups} names it. */
    String TAG = "cluster";
}
