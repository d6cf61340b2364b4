/**
 * What a broker does to the JVM it runs on, outside its message path: classes initialized at start ({@link
 * io.ganglion.broker.jvm.EagerClasses}), the C2 compiler threads' priority ({@link
 * io.ganglion.broker.jvm.CompilerPriority}), the collector's soft maximum heap ({@link
 * io.ganglion.broker.jvm.SoftMaxHeap}) and connection resets rehearsed on its own peer port ({@link
 * io.ganglion.broker.jvm.ResetRehearsal}). The command-line flags a broker's JVM starts with are the CLI's
 * ({@code io.ganglion.cli.JvmFlags}).
 *
 * <p>The metadata leader's warm-up ({@code io.ganglion.metadata.ratis.LeaderPathWarmup}) stays in {@code metadata}: it
 * drives Ratis's own client and server, which nothing outside {@code io.ganglion.metadata.ratis} may see.
 */
package io.ganglion.broker.jvm;
