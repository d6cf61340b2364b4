package io.ganglion.coordination;

import java.util.Objects;

/** A queue or stream, named within its virtual host. */
public record ObjectId(String vhost, String name) implements Comparable<ObjectId> {
    public ObjectId {
        Objects.requireNonNull(vhost, "vhost");
        Objects.requireNonNull(name, "name");
    }

    public static ObjectId of(String vhost, String name) {
        return new ObjectId(vhost, name);
    }

    @Override
    public int compareTo(ObjectId other) {
        int byVhost = vhost.compareTo(other.vhost);
        return byVhost != 0 ? byVhost : name.compareTo(other.name);
    }

    @Override
    public String toString() {
        return vhost + "/" + name;
    }
}
