/**
 * The pure coordination core: live set, placement, accepted histories, promotion with the follower loss hold, recovery
 * planning, runtime settings and the controller tick.
 *
 * <p>Pure: no threads, sockets, files, clock reads or randomness of its own. Every method that needs the time takes
 * {@code now} as an argument. It depends on nothing but the JDK.
 */
package io.ganglion.coordination;
