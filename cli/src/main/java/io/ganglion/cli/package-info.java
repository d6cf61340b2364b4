/** {@code bin/ganglion}: the one entry point. Starts brokers and talks to running ones. */
package io.ganglion.cli;
