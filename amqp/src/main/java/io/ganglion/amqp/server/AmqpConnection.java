package io.ganglion.amqp.server;

import io.ganglion.amqp.codec.AmqpFrameDecoder;
import io.ganglion.amqp.codec.AmqpFrameEncoder;
import io.ganglion.amqp.codec.BodyFrame;
import io.ganglion.amqp.codec.Frame;
import io.ganglion.amqp.codec.FrameDescriptor;
import io.ganglion.amqp.codec.HeaderFrame;
import io.ganglion.amqp.codec.HeartbeatFrame;
import io.ganglion.amqp.codec.MethodCommand;
import io.ganglion.amqp.codec.MethodFrame;
import io.ganglion.amqp.codec.ProtocolHeader;
import io.ganglion.amqp.protocol.AmqpException;
import io.ganglion.amqp.protocol.ChannelMethod;
import io.ganglion.amqp.protocol.ClassId;
import io.ganglion.amqp.protocol.ConnectionMethod;
import io.ganglion.amqp.protocol.FieldTable;
import io.ganglion.amqp.protocol.FieldValue;
import io.ganglion.amqp.protocol.LongString;
import io.ganglion.amqp.protocol.Method;
import io.ganglion.amqp.protocol.MethodId;
import io.ganglion.amqp.protocol.ReplyCode;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.EncoderException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One AMQP 0-9-1 connection, server side: the handshake, channel 0, the table of channels, heartbeats and closing, as
 * RabbitMQ's {@code rabbit_reader} does them. Sits after {@link AmqpFrameDecoder} and {@link AmqpFrameEncoder}; build
 * the pipeline with {@link #install}.
 *
 * <pre>
 *  header ──> STARTING ──start-ok──> TUNING ──tune-ok──> OPENING ──open──> RUNNING
 *     │ (not ours: send our header, close)     any hard error, or the broker's shutdown │
 *     v                                                                                  v
 *   CLOSED <──close-ok, close, or closeTimeout── CLOSING (sent connection.close; channels torn down)
 *     ^
 *     └── connection.close from the client (close-ok sent), heartbeat timeout, handshake timeout, socket gone
 * </pre>
 *
 * <p>Errors: a fault fired by the decoder or raised on channel 0 is a hard error and closes the connection with its reply
 * code; a channel's soft error closes only that channel (see {@link AmqpChannel}); any other exception is {@code 541
 * INTERNAL_ERROR}. No exception leaves this handler. While closing, everything but {@code connection.close} and
 * {@code connection.close-ok} is discarded, and the socket closes on {@code close-ok} or after
 * {@link AmqpServerConfig#closeTimeout()}.
 *
 * <p>Heartbeats, as RabbitMQ's {@code rabbit_heartbeat}: every half interval, a heartbeat frame goes out if nothing else
 * did; every interval the monitor checks whether anything came in, and after two silent checks drops the peer
 * without a close. The monitor is paused while the connection itself stopped reading (backpressure).
 *
 * <p>Implementation notes: one instance per socket. All state is confined to the channel's event loop, except
 * {@link #events} and {@link #drainScheduled}, through which other threads (queues delivering, broker stages
 * completing) hand it {@link LoopTask}s; one task drains them all, so a burst of deliveries costs one wake-up and one
 * flush. Writes are not flushed one by one: {@link #send} queues a flush that runs after the current task.
 */
public final class AmqpConnection extends ChannelInboundHandlerAdapter {
    private static final System.Logger LOG = System.getLogger(AmqpConnection.class.getName());

    private enum State {
        AWAITING_HEADER("starting"),
        STARTING("starting"),
        TUNING("tuning"),
        OPENING("opening"),
        RUNNING("running"),
        CLOSING("closing"),
        CLOSED("closed");

        /** RabbitMQ's name for the state, as its errors quote it. */
        final String rabbitName;

        State(String rabbitName) {
            this.rabbitName = rabbitName;
        }
    }

    private final BrokerBackend backend;
    private final AmqpServerConfig config;
    private final String connectionId;
    private final IntObjectMap<AmqpChannel> channels = new IntObjectHashMap<>();
    private final Queue<LoopTask> events = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable flushTask = this::flushNow;
    private final Runnable drainTask = this::drainEvents;
    private final EarlierPublishes earlierPublishes = new EarlierPublishes();

    private volatile EventExecutor executor;
    private ChannelHandlerContext ctx;
    private State state = State.AWAITING_HEADER;
    private boolean started;
    private boolean tornDown;
    private boolean flushScheduled;
    private boolean loggedUnexpected;

    private String user;
    private String vhost;
    private int channelMax;
    private int frameMax = FrameDescriptor.FRAME_MIN_SIZE;
    private int heartbeatSeconds;
    private boolean consumerCancelNotify;

    private boolean sentSinceCheck;
    private boolean receivedSinceCheck;
    private int silentChecks;
    private int queuedCommands;

    private ScheduledFuture<?> handshakeTimer;
    private ScheduledFuture<?> closeTimer;
    private ScheduledFuture<?> heartbeatSender;
    private ScheduledFuture<?> heartbeatMonitor;

    /**
     * @param connectionId unique in the broker while the connection lives: it owns exclusive queues
     */
    public AmqpConnection(BrokerBackend backend, AmqpServerConfig config, String connectionId) {
        this.backend = backend;
        this.config = config;
        this.connectionId = connectionId;
    }

    /**
     * Builds the pipeline of one client socket: a read-activity marker for the heartbeat monitor, the frame decoder and
     * encoder, and the connection itself.
     */
    public static AmqpConnection install(
            ChannelPipeline pipeline, BrokerBackend backend, AmqpServerConfig config, String connectionId) {
        AmqpConnection connection = new AmqpConnection(backend, config, connectionId);
        pipeline.addLast("amqp-activity", connection.new ReadActivity());
        pipeline.addLast("amqp-decoder", new AmqpFrameDecoder());
        pipeline.addLast("amqp-encoder", new AmqpFrameEncoder());
        pipeline.addLast("amqp-connection", connection);
        return connection;
    }

    public String connectionId() {
        return connectionId;
    }

    /**
     * Closes the connection with {@code 320 CONNECTION_FORCED}, as RabbitMQ does on shutdown. Any thread; returns at
     * once.
     */
    public void forceClose(String reason) {
        post(() -> closeConnection(
                ReplyCode.CONNECTION_FORCED,
                ReplyCode.CONNECTION_FORCED.replyText("broker forced connection closure with reason '" + reason + "'"),
                0,
                0));
    }

    // ---------------------------------------------------------------- what channels use (event loop only)

    /** The publishes of this connection's channels whose messages are not in their queues yet. */
    EarlierPublishes earlierPublishes() {
        return earlierPublishes;
    }

    BrokerBackend backend() {
        return backend;
    }

    AmqpServerConfig config() {
        return config;
    }

    String user() {
        return user;
    }

    String vhost() {
        return vhost;
    }

    boolean consumerCancelNotify() {
        return consumerCancelNotify;
    }

    /** Writes {@code message} (a command or frame); the flush follows at the end of the current task. */
    void send(Object message) {
        ctx.write(message, ctx.voidPromise());
        sentSinceCheck = true;
        if (!flushScheduled) {
            flushScheduled = true;
            ctx.executor().execute(flushTask);
        }
    }

    /** Runs {@code task} on the event loop after the tasks already queued. On the event loop. */
    void later(Runnable task) {
        ctx.executor().execute(task);
    }

    /** Hands {@code task} to the event loop. Any thread. */
    void post(LoopTask task) {
        events.add(task);
        if (drainScheduled.compareAndSet(false, true)) {
            EventExecutor loop = executor;
            try {
                if (loop == null) {
                    throw new RejectedExecutionException("connection not yet registered");
                }
                loop.execute(drainTask);
            } catch (RejectedExecutionException e) {
                abandonEvents();
            }
        }
    }

    /** A channel's command waits (+1) or was taken (-1); too many waiting and we stop reading the socket. */
    void queued(int delta) {
        queuedCommands += delta;
        updateReading();
    }

    /** The channel sent or received {@code channel.close-ok}: its number is free again. */
    void channelFinished(AmqpChannel channel) {
        if (channels.get(channel.number()) == channel) {
            channels.remove(channel.number());
        }
    }

    /** A hard error: closes the whole connection with {@code connection.close}. */
    void closeConnection(ReplyCode code, String replyText, int classId, int methodId) {
        if (state == State.CLOSING || state == State.CLOSED || ctx == null) {
            return;
        }
        LOG.log(
                code == ReplyCode.CONNECTION_FORCED ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
                "closing AMQP connection connection={0} user={1} vhost={2} code={3} text=\"{4}\" class={5} method={6}",
                connectionId,
                user,
                vhost,
                code.code(),
                replyText,
                classId,
                methodId);
        teardown();
        cancel(handshakeTimer);
        state = State.CLOSING;
        updateReading();
        ctx.writeAndFlush(new MethodCommand(0, new ConnectionMethod.Close(code.code(), replyText, classId, methodId)));
        sentSinceCheck = true;
        closeTimer = schedule(this::onCloseTimeout, closeTimeout());
    }

    // ---------------------------------------------------------------- Netty events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.executor = ctx.executor();
        if (ctx.channel().isActive()) {
            start();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start();
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        receivedSinceCheck = true;
        try {
            switch (msg) {
                case ProtocolHeader header -> onProtocolHeader(header);
                case Frame frame -> onFrame(frame);
                default -> ReferenceCountUtil.release(msg);
            }
        } catch (AmqpException e) {
            onFault(e);
        } catch (RuntimeException e) {
            onUnexpected(e);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flushNow();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        updateReading();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        try {
            teardown();
        } catch (RuntimeException e) {
            logUnexpected(e);
        }
        state = State.CLOSED;
        cancel(handshakeTimer);
        cancel(closeTimer);
        cancel(heartbeatSender);
        cancel(heartbeatMonitor);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        AmqpException fault = amqpCause(cause);
        if (fault != null && !(cause instanceof EncoderException)) {
            onFault(fault);
        } else if (cause instanceof IOException) {
            LOG.log(System.Logger.Level.DEBUG, "AMQP connection connection={0} socket error: {1}", connectionId, cause);
            closeSocket();
        } else {
            onUnexpected(cause);
        }
    }

    // ---------------------------------------------------------------- handshake

    private void start() {
        if (started) {
            return;
        }
        started = true;
        handshakeTimer = schedule(this::onHandshakeTimeout, config.handshakeTimeout());
    }

    private void onProtocolHeader(ProtocolHeader header) {
        switch (header) {
            case ProtocolHeader.Accepted accepted -> {
                if (state != State.AWAITING_HEADER) {
                    return;
                }
                state = State.STARTING;
                send(new MethodCommand(0, start(backend.info())));
            }
            case ProtocolHeader.Rejected rejected -> {
                state = State.CLOSED;
                ctx.writeAndFlush(FrameDescriptor.protocolHeader()).addListener(ChannelFutureListener.CLOSE);
            }
        }
    }

    /** The capabilities {@code connection.start} announces, each true, as RabbitMQ's do. */
    private static final List<String> CAPABILITIES = List.of(
            "publisher_confirms",
            "exchange_exchange_bindings",
            "basic.nack",
            "consumer_cancel_notify",
            "connection.blocked",
            "authentication_failure_close",
            "per_consumer_qos");

    static ConnectionMethod.Start start(ServerInfo info) {
        FieldTable.Builder capabilities = FieldTable.builder();
        CAPABILITIES.forEach(capability -> capabilities.put(capability, true));
        FieldTable properties = FieldTable.builder()
                .put("capabilities", capabilities.build())
                .put("cluster_name", info.clusterName())
                .put("platform", info.platform())
                .put("product", info.product())
                .put("version", ServerInfo.COMPATIBLE_VERSION)
                .put("information", info.information())
                .put("copyright", "Ganglion authors")
                .build();
        return new ConnectionMethod.Start(0, 9, properties, LongString.of(Sasl.MECHANISMS), LongString.of("en_US"));
    }

    private void onFrame(Frame frame) {
        switch (state) {
            case AWAITING_HEADER, CLOSED -> release(frame);
            case CLOSING -> onFrameWhileClosing(frame);
            case RUNNING -> {
                if (frame.channel() == 0) {
                    onConnectionFrame(frame);
                } else {
                    onChannelFrame(frame);
                }
            }
            case STARTING, TUNING, OPENING -> {
                if (frame.channel() == 0) {
                    onConnectionFrame(frame);
                } else {
                    release(frame);
                    throw new ServerFault(
                            ReplyCode.UNEXPECTED_FRAME,
                            "type " + frameType(frame) + " on channel " + frame.channel()
                                    + " before the connection is open");
                }
            }
        }
    }

    private void onConnectionFrame(Frame frame) {
        switch (frame) {
            case HeartbeatFrame heartbeat -> {}
            case MethodFrame methodFrame -> onConnectionMethod(methodFrame.method());
            case HeaderFrame header -> throw contentOnChannelZero(frame);
            case BodyFrame body -> {
                body.release();
                throw contentOnChannelZero(frame);
            }
        }
    }

    private void onConnectionMethod(Method method) {
        if (method instanceof ConnectionMethod.Close close) {
            onClientClose(close);
            return;
        }
        switch (state) {
            case STARTING -> {
                if (!(method instanceof ConnectionMethod.StartOk startOk)) {
                    throw unexpectedMethod(method);
                }
                onStartOk(startOk);
            }
            case TUNING -> {
                if (!(method instanceof ConnectionMethod.TuneOk tuneOk)) {
                    throw unexpectedMethod(method);
                }
                onTuneOk(tuneOk);
            }
            case OPENING -> {
                if (!(method instanceof ConnectionMethod.Open open)) {
                    throw unexpectedMethod(method);
                }
                onOpen(open);
            }
            case RUNNING -> {
                if (!(method instanceof ConnectionMethod.UpdateSecret updateSecret)) {
                    throw unexpectedMethod(method);
                }
                onUpdateSecret(updateSecret);
            }
            case AWAITING_HEADER, CLOSING, CLOSED -> {}
        }
    }

    private void onStartOk(ConnectionMethod.StartOk startOk) {
        String mechanism = startOk.mechanism();
        if (!Sasl.isOffered(mechanism)) {
            throw Sasl.unknownMechanism(mechanism);
        }
        FieldTable capabilities = table(startOk.clientProperties(), "capabilities");
        boolean authenticationFailureClose = flag(capabilities, "authentication_failure_close");
        consumerCancelNotify = flag(capabilities, "consumer_cancel_notify");
        Sasl.Credentials credentials = Sasl.parse(mechanism, startOk.response());
        SocketAddress remote = ctx.channel().remoteAddress();
        Optional<String> authenticated = backend.authenticate(credentials.user(), credentials.password(), remote);
        if (authenticated.isEmpty()) {
            onLoginRefused(mechanism, credentials.user(), authenticationFailureClose);
            return;
        }
        user = authenticated.get();
        state = State.TUNING;
        send(new MethodCommand(
                0, new ConnectionMethod.Tune(config.channelMax(), config.frameMax(), config.heartbeatSeconds())));
    }

    private void onLoginRefused(String mechanism, String claimedUser, boolean authenticationFailureClose) {
        LOG.log(
                System.Logger.Level.WARNING,
                "AMQP login refused connection={0} user={1} mechanism={2} remote={3}",
                connectionId,
                claimedUser,
                mechanism,
                ctx.channel().remoteAddress());
        if (authenticationFailureClose) {
            closeConnection(
                    ReplyCode.ACCESS_REFUSED,
                    ReplyCode.ACCESS_REFUSED.replyText("Login was refused using authentication mechanism " + mechanism
                            + ". For details see the broker logfile."),
                    0,
                    0);
        } else {
            // A client that did not announce authentication_failure_close learns of it from the socket closing.
            state = State.CLOSED;
            closeSocket();
        }
    }

    private void onTuneOk(ConnectionMethod.TuneOk tuneOk) {
        long requestedFrameMax = tuneOk.frameMax();
        if (requestedFrameMax != 0 && requestedFrameMax < FrameDescriptor.FRAME_MIN_SIZE) {
            throw failedNegotiation("frame_max", requestedFrameMax, "lower", "minimum", FrameDescriptor.FRAME_MIN_SIZE);
        }
        if (requestedFrameMax > config.frameMax()) {
            throw failedNegotiation("frame_max", requestedFrameMax, "higher", "maximum", config.frameMax());
        }
        if (tuneOk.channelMax() > config.channelMax()) {
            throw failedNegotiation("channel_max", tuneOk.channelMax(), "higher", "maximum", config.channelMax());
        }
        // 0 is "no limit" from the client's side: ours then holds (RabbitMQ refuses 0; we are lenient).
        frameMax = requestedFrameMax == 0 ? config.frameMax() : (int) requestedFrameMax;
        channelMax = tuneOk.channelMax() == 0 ? config.channelMax() : tuneOk.channelMax();
        heartbeatSeconds = tuneOk.heartbeat();
        AmqpFrameDecoder decoder = ctx.pipeline().get(AmqpFrameDecoder.class);
        if (decoder != null) {
            decoder.frameMax(frameMax);
        }
        AmqpFrameEncoder encoder = ctx.pipeline().get(AmqpFrameEncoder.class);
        if (encoder != null) {
            encoder.frameMax(frameMax);
        }
        startHeartbeats();
        state = State.OPENING;
    }

    private void onOpen(ConnectionMethod.Open open) {
        String requested = open.virtualHost();
        if (!backend.vhostAllowed(user, requested)) {
            throw ServerFault.of(
                    ReplyCode.NOT_ALLOWED, open, "access to vhost '" + requested + "' refused for user '" + user + "'");
        }
        vhost = requested;
        cancel(handshakeTimer);
        state = State.RUNNING;
        send(new MethodCommand(0, new ConnectionMethod.OpenOk()));
        LOG.log(
                System.Logger.Level.DEBUG,
                "AMQP connection opened connection={0} user={1} vhost={2}",
                connectionId,
                user,
                vhost);
    }

    /**
     * Ganglion's users are internal users with a password, whose login state does not expire: as RabbitMQ's internal
     * backend (its {@code state_can_expire()} is false), the new secret is taken without a check and answered, and the
     * connection goes on as its user.
     */
    private void onUpdateSecret(ConnectionMethod.UpdateSecret updateSecret) {
        send(new MethodCommand(0, new ConnectionMethod.UpdateSecretOk()));
        LOG.log(
                System.Logger.Level.DEBUG,
                "AMQP secret updated connection={0} user={1} reason={2}",
                connectionId,
                user,
                updateSecret.reason());
    }

    // ---------------------------------------------------------------- channels

    private void onChannelFrame(Frame frame) {
        int number = frame.channel();
        AmqpChannel channel = channels.get(number);
        if (channel != null) {
            channel.onFrame(frame);
            return;
        }
        if (!(frame instanceof MethodFrame methodFrame)) {
            release(frame);
            throw new ServerFault(ReplyCode.UNEXPECTED_FRAME, "expected method frame, got non method frame instead");
        }
        Method method = methodFrame.method();
        if (!(method instanceof ChannelMethod.Open)) {
            throw ServerFault.of(ReplyCode.CHANNEL_ERROR, method, "expected 'channel.open'");
        }
        if (number > channelMax) {
            throw ServerFault.of(
                    ReplyCode.CHANNEL_ERROR,
                    method,
                    "channel number " + number + " is above the negotiated channel_max (" + channelMax + ")");
        }
        channels.put(number, new AmqpChannel(this, number));
        send(new MethodCommand(number, new ChannelMethod.OpenOk()));
    }

    // ---------------------------------------------------------------- closing

    private void onClientClose(ConnectionMethod.Close close) {
        LOG.log(
                System.Logger.Level.DEBUG,
                "AMQP connection closed by client connection={0} user={1} code={2} text=\"{3}\"",
                connectionId,
                user,
                close.replyCode(),
                close.replyText());
        teardown();
        state = State.CLOSED;
        ctx.writeAndFlush(new MethodCommand(0, new ConnectionMethod.CloseOk()))
                .addListener(ChannelFutureListener.CLOSE);
    }

    private void onFrameWhileClosing(Frame frame) {
        if (frame.channel() == 0 && frame instanceof MethodFrame methodFrame) {
            switch (methodFrame.method()) {
                case ConnectionMethod.CloseOk closeOk -> {
                    state = State.CLOSED;
                    closeSocket();
                }
                case ConnectionMethod.Close close -> {
                    // Both sides closed at once: answer theirs, and ours is answered too.
                    state = State.CLOSED;
                    ctx.writeAndFlush(new MethodCommand(0, new ConnectionMethod.CloseOk()))
                            .addListener(ChannelFutureListener.CLOSE);
                }
                default -> {}
            }
            return;
        }
        release(frame);
    }

    /** Tears down every channel (consumers cancelled, unacked requeued) and tells the broker; once. */
    private void teardown() {
        if (tornDown) {
            return;
        }
        tornDown = true;
        List<AmqpChannel> open = new ArrayList<>(channels.values());
        channels.clear();
        for (AmqpChannel channel : open) {
            try {
                channel.dispose();
            } catch (RuntimeException e) {
                logUnexpected(e);
            }
        }
        queuedCommands = 0;
        if (vhost != null) {
            backend.connectionClosed(connectionId);
        }
    }

    private void onFault(AmqpException fault) {
        if (state == State.CLOSING || state == State.CLOSED) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "AMQP connection connection={0} fault while closing: {1}",
                    connectionId,
                    fault);
            return;
        }
        closeConnection(fault.replyCode(), fault.replyText(), fault.classId(), fault.methodId());
    }

    private void onUnexpected(Throwable cause) {
        logUnexpected(cause);
        if (state == State.CLOSING || state == State.CLOSED || state == State.AWAITING_HEADER) {
            closeSocket();
            return;
        }
        try {
            closeConnection(
                    ReplyCode.INTERNAL_ERROR,
                    ReplyCode.INTERNAL_ERROR.replyText(
                            "unexpected " + cause.getClass().getSimpleName()),
                    0,
                    0);
        } catch (RuntimeException e) {
            closeSocket();
        }
    }

    private void logUnexpected(Throwable cause) {
        if (loggedUnexpected) {
            LOG.log(System.Logger.Level.DEBUG, "AMQP connection connection={0} unexpected error", connectionId, cause);
            return;
        }
        loggedUnexpected = true;
        LOG.log(System.Logger.Level.ERROR, "AMQP connection connection=" + connectionId + " unexpected error", cause);
    }

    private void onCloseTimeout() {
        LOG.log(System.Logger.Level.DEBUG, "AMQP connection connection={0} close-ok timed out", connectionId);
        state = State.CLOSED;
        closeSocket();
    }

    private void onHandshakeTimeout() {
        if (state == State.RUNNING || state == State.CLOSING || state == State.CLOSED) {
            return;
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "AMQP handshake timed out connection={0} state={1} remote={2}",
                connectionId,
                state.rabbitName,
                ctx.channel().remoteAddress());
        state = State.CLOSED;
        closeSocket();
    }

    private void closeSocket() {
        try {
            teardown();
        } finally {
            ctx.close();
        }
    }

    private Duration closeTimeout() {
        Duration timeout = config.closeTimeout();
        if (heartbeatSeconds > 0 && Duration.ofSeconds(heartbeatSeconds).compareTo(timeout) < 0) {
            return Duration.ofSeconds(heartbeatSeconds);
        }
        return timeout;
    }

    // ---------------------------------------------------------------- heartbeats, flushing, flow

    private void startHeartbeats() {
        if (heartbeatSeconds == 0) {
            return;
        }
        long sendMillis = heartbeatSeconds * 1000L / 2;
        heartbeatSender = ctx.executor()
                .scheduleAtFixedRate(this::heartbeatSendCheck, sendMillis, sendMillis, TimeUnit.MILLISECONDS);
        heartbeatMonitor = ctx.executor()
                .scheduleAtFixedRate(this::heartbeatReceiveCheck, heartbeatSeconds, heartbeatSeconds, TimeUnit.SECONDS);
    }

    private void heartbeatSendCheck() {
        if (state == State.CLOSED) {
            return;
        }
        if (!sentSinceCheck) {
            ctx.writeAndFlush(HeartbeatFrame.INSTANCE, ctx.voidPromise());
        }
        sentSinceCheck = false;
    }

    private void heartbeatReceiveCheck() {
        if (state == State.CLOSED) {
            return;
        }
        if (receivedSinceCheck || !ctx.channel().config().isAutoRead()) {
            silentChecks = 0;
        } else if (++silentChecks >= 2) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "missed heartbeats from client connection={0} user={1} timeout={2}s",
                    connectionId,
                    user,
                    heartbeatSeconds);
            state = State.CLOSED;
            closeSocket();
        }
        receivedSinceCheck = false;
    }

    private void flushNow() {
        flushScheduled = false;
        ctx.flush();
    }

    /**
     * Reads while the channels keep up with what was read: reading pauses when {@link AmqpServerConfig#maxQueuedCommands}
     * commands wait for the broker. Never because the socket is not writable: a client whose reader thread blocks
     * while its consumers' acks cannot be written (the Java client's per-channel work queue holds 1000 deliveries)
     * would then wait on us while we wait on it, and the connection would stall for good.
     */
    private void updateReading() {
        if (ctx == null) {
            return;
        }
        boolean read = state == State.CLOSING || queuedCommands < config.maxQueuedCommands();
        ChannelConfig channelConfig = ctx.channel().config();
        if (channelConfig.isAutoRead() != read) {
            channelConfig.setAutoRead(read);
        }
    }

    private void drainEvents() {
        drainScheduled.set(false);
        LoopTask task;
        while ((task = events.poll()) != null) {
            try {
                task.run();
            } catch (AmqpException e) {
                onFault(e);
            } catch (RuntimeException e) {
                onUnexpected(e);
            }
        }
    }

    /** The event loop is gone: every task lets go of what it holds, including tasks posted meanwhile. */
    private void abandonEvents() {
        do {
            LoopTask task;
            while ((task = events.poll()) != null) {
                try {
                    task.abandon();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.DEBUG, "abandoning a task failed", e);
                }
            }
            drainScheduled.set(false);
        } while (!events.isEmpty() && drainScheduled.compareAndSet(false, true));
    }

    private ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        return ctx.executor().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    private static void cancel(ScheduledFuture<?> timer) {
        if (timer != null) {
            timer.cancel(false);
        }
    }

    // ---------------------------------------------------------------- small helpers

    private ServerFault unexpectedMethod(Method method) {
        return ServerFault.of(
                ReplyCode.CHANNEL_ERROR, method, "unexpected method in connection state " + state.rabbitName);
    }

    private static ServerFault failedNegotiation(String field, long value, String side, String bound, long limit) {
        return new ServerFault(
                ReplyCode.NOT_ALLOWED,
                "negotiated " + field + " = " + value + " is " + side + " than the " + bound + " allowed value ("
                        + limit + ")",
                ClassId.CONNECTION,
                MethodId.CONNECTION_TUNE.methodId());
    }

    private static ServerFault contentOnChannelZero(Frame frame) {
        return new ServerFault(
                ReplyCode.UNEXPECTED_FRAME, "content frame of type " + frameType(frame) + " on channel 0");
    }

    private static int frameType(Frame frame) {
        return switch (frame) {
            case MethodFrame f -> FrameDescriptor.FRAME_METHOD;
            case HeaderFrame f -> FrameDescriptor.FRAME_HEADER;
            case BodyFrame f -> FrameDescriptor.FRAME_BODY;
            case HeartbeatFrame f -> FrameDescriptor.FRAME_HEARTBEAT;
        };
    }

    private static void release(Frame frame) {
        if (frame instanceof BodyFrame body) {
            body.release();
        }
    }

    private static FieldTable table(FieldTable table, String name) {
        return table.get(name).orElse(null) instanceof FieldValue.Table t ? t.value() : FieldTable.EMPTY;
    }

    private static boolean flag(FieldTable table, String name) {
        return table.get(name).orElse(null) instanceof FieldValue.Bool b && b.value();
    }

    private static AmqpException amqpCause(Throwable cause) {
        Throwable current = cause;
        for (int depth = 0; current != null && depth < 4; depth++) {
            if (current instanceof AmqpException fault) {
                return fault;
            }
            if (!(current instanceof DecoderException) && !(current instanceof EncoderException)) {
                return null;
            }
            current = current.getCause();
        }
        return null;
    }

    /** A human name for a socket address: {@code host:port}. */
    static String describe(SocketAddress address) {
        if (address instanceof InetSocketAddress inet) {
            return inet.getHostString() + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }

    /**
     * Marks that octets arrived, before the decoder, so a client streaming one large frame slowly is not taken for
     * silent by the heartbeat monitor.
     */
    private final class ReadActivity extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            receivedSinceCheck = true;
            ctx.fireChannelRead(msg);
        }
    }
}
