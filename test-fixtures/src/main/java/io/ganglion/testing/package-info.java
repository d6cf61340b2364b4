/**
 * Helpers that the tests of every module share: {@link io.ganglion.testing.Poll}, the one way a test waits for a
 * condition, and {@link io.ganglion.testing.ClusterTest}, the tag of the tests that start several broker processes.
 *
 * <p>Test code only: modules take it in test scope. It depends on no Ganglion module (so storage's and metadata's
 * tests can use it as well as cli's); helpers that need a broker process live with the tests of the module that
 * starts one.
 */
package io.ganglion.testing;
