/**
 * Replicated objects on a broker: {@link io.ganglion.broker.replication.ReplicaHost} runs one object's {@link
 * io.ganglion.replication.Replica} on a shard and executes its effects with real storage and the peer link; {@link
 * io.ganglion.broker.replication.ReplicationRouter} maps peer frames and recovery requests to the hosts and sends their
 * messages. A host's parts are package-private: {@code EffectExecutor} carries out the replica's effects, {@code
 * HostLog} is the host's side of the log, {@code PeerOutbox} sends and batches its messages to peers, {@code
 * OutstandingPublishes} tracks the publishes awaiting an outcome.
 *
 * <p>Depends on {@code replication} (the state machines), {@code storage} (the logs), {@code coordination} (values and
 * recovery requests) and the broker's peer link and shards; never on the AMQP layer or the queue semantics, which talk
 * to a host through {@link io.ganglion.broker.replication.ReplicaListener} and its event methods.
 */
package io.ganglion.broker.replication;
