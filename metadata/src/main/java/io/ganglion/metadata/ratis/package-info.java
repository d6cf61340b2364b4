/**
 * The metadata log on Apache Ratis: {@link io.ganglion.metadata.ratis.RatisMetadataLog}, one Ratis server per broker
 * of the voter set, and the state machine that applies committed commands to the
 * {@link io.ganglion.metadata.MetadataImage}. Nothing outside this package sees Ratis; the broker holds a
 * {@link io.ganglion.metadata.MetadataLog}.
 */
package io.ganglion.metadata.ratis;
