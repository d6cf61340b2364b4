package io.ganglion.amqp.protocol;

/**
 * The methods of class connection ({@link ClassId#CONNECTION}). Work with connections: the handshake, tuning, closing,
 * and RabbitMQ's flow and secret extensions.
 */
public sealed interface ConnectionMethod extends Method {
    /**
     * {@code connection.start}: starts the handshake: the server's protocol version, properties, SASL mechanisms and
     * locales.
     */
    record Start(
            int versionMajor, int versionMinor, FieldTable serverProperties, LongString mechanisms, LongString locales)
            implements ConnectionMethod {
        public Start {
            Check.octet(versionMajor, "versionMajor");
            Check.octet(versionMinor, "versionMinor");
            Check.present(serverProperties, "serverProperties");
            Check.present(mechanisms, "mechanisms");
            Check.present(locales, "locales");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_START;
        }
    }

    /** {@code connection.start-ok}: the client's properties, chosen mechanism, SASL response and locale. */
    record StartOk(FieldTable clientProperties, String mechanism, LongString response, String locale)
            implements ConnectionMethod {
        public StartOk {
            Check.present(clientProperties, "clientProperties");
            Check.present(mechanism, "mechanism");
            Check.present(response, "response");
            Check.present(locale, "locale");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_START_OK;
        }
    }

    /** {@code connection.secure}: a SASL challenge. */
    record Secure(LongString challenge) implements ConnectionMethod {
        public Secure {
            Check.present(challenge, "challenge");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_SECURE;
        }
    }

    /** {@code connection.secure-ok}: a SASL response. */
    record SecureOk(LongString response) implements ConnectionMethod {
        public SecureOk {
            Check.present(response, "response");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_SECURE_OK;
        }
    }

    /** {@code connection.tune}: the server's proposed channel_max, frame_max and heartbeat (seconds). */
    record Tune(int channelMax, long frameMax, int heartbeat) implements ConnectionMethod {
        public Tune {
            Check.ushort(channelMax, "channelMax");
            Check.uint(frameMax, "frameMax");
            Check.ushort(heartbeat, "heartbeat");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_TUNE;
        }
    }

    /** {@code connection.tune-ok}: the client's negotiated channel_max, frame_max and heartbeat (seconds). */
    record TuneOk(int channelMax, long frameMax, int heartbeat) implements ConnectionMethod {
        public TuneOk {
            Check.ushort(channelMax, "channelMax");
            Check.uint(frameMax, "frameMax");
            Check.ushort(heartbeat, "heartbeat");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_TUNE_OK;
        }
    }

    /** {@code connection.open}: opens a virtual host. Reserved: {@code capabilities}, {@code insist}. */
    record Open(String virtualHost, String capabilities, boolean insist) implements ConnectionMethod {
        public Open {
            Check.present(virtualHost, "virtualHost");
            Check.present(capabilities, "capabilities");
        }

        /** With the reserved fields at the values clients send. */
        public Open(String virtualHost) {
            this(virtualHost, "", false);
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_OPEN;
        }
    }

    /** {@code connection.open-ok}: the virtual host is open. Reserved: {@code knownHosts}. */
    record OpenOk(String knownHosts) implements ConnectionMethod {
        public OpenOk {
            Check.present(knownHosts, "knownHosts");
        }

        /** With the reserved fields at the values clients send. */
        public OpenOk() {
            this("");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_OPEN_OK;
        }
    }

    /**
     * {@code connection.close}: closes the connection, with the reply code and the failing method's ids (0 when none
     * failed).
     */
    record Close(int replyCode, String replyText, int failingClassId, int failingMethodId) implements ConnectionMethod {
        public Close {
            Check.ushort(replyCode, "replyCode");
            Check.present(replyText, "replyText");
            Check.ushort(failingClassId, "failingClassId");
            Check.ushort(failingMethodId, "failingMethodId");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_CLOSE;
        }
    }

    /** {@code connection.close-ok}: confirms a connection close. */
    record CloseOk() implements ConnectionMethod {
        @Override
        public MethodId id() {
            return MethodId.CONNECTION_CLOSE_OK;
        }
    }

    /** {@code connection.blocked}: rabbitMQ extension: the server stopped reading publishes (a resource alarm). */
    record Blocked(String reason) implements ConnectionMethod {
        public Blocked {
            Check.present(reason, "reason");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_BLOCKED;
        }
    }

    /** {@code connection.unblocked}: rabbitMQ extension: the server reads publishes again. */
    record Unblocked() implements ConnectionMethod {
        @Override
        public MethodId id() {
            return MethodId.CONNECTION_UNBLOCKED;
        }
    }

    /**
     * {@code connection.update-secret}: rabbitMQ extension: a new secret (an OAuth 2 token) for the connection's user.
     */
    record UpdateSecret(LongString newSecret, String reason) implements ConnectionMethod {
        public UpdateSecret {
            Check.present(newSecret, "newSecret");
            Check.present(reason, "reason");
        }

        @Override
        public MethodId id() {
            return MethodId.CONNECTION_UPDATE_SECRET;
        }
    }

    /** {@code connection.update-secret-ok}: the new secret is in force. */
    record UpdateSecretOk() implements ConnectionMethod {
        @Override
        public MethodId id() {
            return MethodId.CONNECTION_UPDATE_SECRET_OK;
        }
    }
}
