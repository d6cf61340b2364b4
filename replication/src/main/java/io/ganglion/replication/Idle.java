package io.ganglion.replication;

/** No role in any epoch: the replica serves installs and answers seals, and takes the next role it is given. */
final class Idle implements Role {
    static final Idle INSTANCE = new Idle();

    private Idle() {}

    @Override
    public String toString() {
        return "Idle";
    }
}
