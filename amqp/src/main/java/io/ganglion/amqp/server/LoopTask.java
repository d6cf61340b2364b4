package io.ganglion.amqp.server;

/**
 * Work handed to a connection's event loop from another thread: a delivery, a completed broker stage. If the loop is
 * gone (the server shut down) the task is abandoned instead, on the posting thread, and must let go of what it holds.
 */
@FunctionalInterface
interface LoopTask {
    /** On the connection's event loop. */
    void run();

    /** On the posting thread, when the event loop refused the task: release buffers; never touch connection state. */
    default void abandon() {}
}
