/**
 * This broker's part in a cluster: the seed list ({@link io.ganglion.broker.cluster.Seed}), the incarnation kept in
 * {@code data.dir/incarnation} ({@link io.ganglion.broker.cluster.IncarnationFile}), the peer links and heartbeats
 * ({@link io.ganglion.broker.cluster.ClusterNode}), the controller runtime that runs the pure {@code ControllerTick} on
 * the metadata leader and proposes its commands ({@link io.ganglion.broker.cluster.Controller}), and the rehearsed
 * connection reset ({@link io.ganglion.broker.cluster.ResetRehearsal}).
 *
 * <p>It executes decisions, it does not make them: liveness, placement, promotion and recovery planning stay in
 * {@code coordination}, so the simulator runs the same logic. Depends on {@code coordination}, {@code metadata} and the
 * broker's peer link only; never on the AMQP layer, the queues, storage or the replication hosts.
 */
package io.ganglion.broker.cluster;
