/**
 * The broker-to-broker peer link: the {@link io.ganglion.broker.peer.PeerMessage}s brokers exchange (heartbeats,
 * publish forwarding, replication), their binary frames ({@link io.ganglion.broker.peer.PeerFrameDescriptor}, {@link
 * io.ganglion.broker.peer.PeerCodec}) and the Netty transport that keeps one link per peer ({@link
 * io.ganglion.broker.peer.PeerLink}).
 *
 * <p>It owns sockets, event loops and frames, nothing else: it never decides what a message means. It must not depend
 * on the broker's shards, storage or metadata; the broker hands it a {@link io.ganglion.broker.peer.PeerHandler} and
 * routes what arrives.
 */
package io.ganglion.broker.peer;
