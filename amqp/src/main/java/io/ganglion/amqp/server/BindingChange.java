package io.ganglion.amqp.server;

import io.ganglion.amqp.protocol.FieldTable;
import java.util.function.UnaryOperator;

/**
 * One {@code queue.bind}, {@code queue.unbind}, {@code exchange.bind} or {@code exchange.unbind}: from the exchange
 * {@code source} to {@code destination} (a queue or an exchange, by the method), as the channel resolved it.
 *
 * @param bind true to add the binding, false to remove it
 */
public record BindingChange(String source, String destination, String routingKey, FieldTable arguments, boolean bind) {

    /** The same change with both names passed through {@code name} (the default exchange's alias, for one). */
    public BindingChange renamed(UnaryOperator<String> name) {
        return new BindingChange(name.apply(source), name.apply(destination), routingKey, arguments, bind);
    }
}
