/**
 * The broker process: executes what the pure modules decide with real IO. It owns the Netty server, the shards that
 * run queue replicas, the storage engine and the metadata log.
 */
package io.ganglion.broker;
