/**
 * JMH micro-benchmarks of the storage and the codecs, run by {@code bench/jmh.sh} and never by the build's tests.
 * They drive the real classes of the modules they measure; nothing depends on them.
 */
package io.ganglion.bench.jmh;
