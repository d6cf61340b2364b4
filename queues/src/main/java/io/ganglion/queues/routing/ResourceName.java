package io.ganglion.queues.routing;

/**
 * A queue or an exchange as RabbitMQ names it in reply texts ({@code rabbit_misc:rs/1}): {@code queue 'q' in vhost
 * '/'}. Texts that name a resource build the name here, so that they all read alike.
 */
public final class ResourceName {
    private ResourceName() {}

    /** {@code queue 'name' in vhost 'vhost'}. */
    public static String queue(String vhost, String name) {
        return of("queue", vhost, name);
    }

    /** {@code exchange 'name' in vhost 'vhost'}. */
    public static String exchange(String vhost, String name) {
        return of("exchange", vhost, name);
    }

    /** {@code kind 'name' in vhost 'vhost'}, {@code kind} being {@code queue} or {@code exchange}. */
    public static String of(String kind, String vhost, String name) {
        return kind + " '" + name + "' in vhost '" + vhost + "'";
    }
}
