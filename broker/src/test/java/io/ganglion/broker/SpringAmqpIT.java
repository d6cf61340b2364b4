package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.config.RetryInterceptorBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.retry.RejectAndDontRequeueRecoverer;
import org.springframework.amqp.rabbit.retry.RepublishMessageRecoverer;

/**
 * Spring AMQP against one broker, as many Java applications use dead-lettering: {@link RabbitTemplate} publishing with
 * confirms, {@link RabbitAdmin} declaring quorum queues with a dead-letter exchange, and a listener container whose
 * retry interceptor gives up on a failing message after three attempts and rejects it (the broker dead-letters it to
 * the DLQ with its {@code x-death}) or republishes it to a parking queue.
 */
class SpringAmqpIT {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @RegisterExtension
    static final OneBroker broker = new OneBroker();

    private static CachingConnectionFactory connections() {
        CachingConnectionFactory factory = new CachingConnectionFactory(broker.factory());
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
        return factory;
    }

    private static void send(RabbitTemplate template, String queue, String... bodies) {
        template.invoke(operations -> {
            for (String body : bodies) {
                operations.convertAndSend("", queue, body);
            }
            operations.waitForConfirmsOrDie(5_000);
            return null;
        });
    }

    @Test
    void shouldDeadLetterWhatTheRetryInterceptorGivesUpOn() throws Exception {
        CachingConnectionFactory connections = connections();
        try {
            RabbitAdmin admin = new RabbitAdmin(connections);
            Queue dlq = QueueBuilder.durable("spring.dlq").quorum().build();
            Queue work = QueueBuilder.durable("spring.work")
                    .quorum()
                    .deadLetterExchange("")
                    .deadLetterRoutingKey("spring.dlq")
                    .build();
            admin.declareQueue(dlq);
            admin.declareQueue(work);
            RabbitTemplate template = new RabbitTemplate(connections);
            Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connections);
            container.setQueueNames("spring.work");
            container.setAdviceChain(RetryInterceptorBuilder.stateless()
                    .maxAttempts(3)
                    .backOffOptions(10, 2.0, 50)
                    .recoverer(new RejectAndDontRequeueRecoverer())
                    .build());
            container.setMessageListener((Message message) -> {
                String body = new String(message.getBody(), java.nio.charset.StandardCharsets.UTF_8);
                attempts.computeIfAbsent(body, unused -> new AtomicInteger()).incrementAndGet();
                if (body.startsWith("bad")) {
                    throw new IllegalStateException("cannot handle " + body);
                }
            });
            container.start();
            try {
                send(template, "spring.work", "good-1", "bad-1", "good-2");
                Message dead = template.receive("spring.dlq", WAIT.toMillis());

                assertThat(dead).isNotNull();
                assertThat(new String(dead.getBody(), java.nio.charset.StandardCharsets.UTF_8))
                        .isEqualTo("bad-1");
                List<Map<String, ?>> deaths = dead.getMessageProperties().getXDeathHeader();
                assertThat(deaths).hasSize(1);
                assertThat(deaths.get(0).get("reason")).hasToString("rejected");
                assertThat(deaths.get(0).get("queue")).hasToString("spring.work");
                assertThat(deaths.get(0).get("count")).isEqualTo(1L);
                assertThat(attempts.get("bad-1")).hasValue(3);
                io.ganglion.testing.Poll.until(
                        WAIT, () -> attempts.containsKey("good-2"), () -> "the good messages handled: " + attempts);
                assertThat(attempts.get("good-1")).hasValue(1);
                assertThat(template.receive("spring.dlq", 200)).isNull();
            } finally {
                container.stop();
            }
        } finally {
            connections.destroy();
        }
    }

    @Test
    void shouldRepublishWhatTheRetryInterceptorGivesUpOnToAParkingQueue() throws Exception {
        CachingConnectionFactory connections = connections();
        try {
            RabbitAdmin admin = new RabbitAdmin(connections);
            admin.declareQueue(QueueBuilder.durable("spring.parking").build());
            admin.declareQueue(QueueBuilder.durable("spring.jobs").build());
            RabbitTemplate template = new RabbitTemplate(connections);
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connections);
            container.setQueueNames("spring.jobs");
            container.setAdviceChain(RetryInterceptorBuilder.stateless()
                    .maxAttempts(2)
                    .backOffOptions(10, 2.0, 50)
                    .recoverer(new RepublishMessageRecoverer(template, "", "spring.parking"))
                    .build());
            container.setMessageListener((Message message) -> {
                throw new IllegalStateException("always fails");
            });
            container.start();
            try {
                send(template, "spring.jobs", "job-1");
                Message parked = template.receive("spring.parking", WAIT.toMillis());

                assertThat(parked).isNotNull();
                assertThat(parked.getMessageProperties().getHeaders().get("x-exception-message"))
                        .hasToString("always fails");
                assertThat(parked.getMessageProperties().getHeaders().get("x-original-routingKey"))
                        .hasToString("spring.jobs");
            } finally {
                container.stop();
            }
        } finally {
            connections.destroy();
        }
    }
}
