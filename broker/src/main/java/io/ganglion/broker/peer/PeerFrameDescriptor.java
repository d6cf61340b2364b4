package io.ganglion.broker.peer;

import io.netty.buffer.ByteBuf;

/**
 * The binary layout of the peer link: one frame per {@link PeerMessage}. Every offset, length and type code the codec
 * uses is here.
 *
 * <pre>
 * Frame:
 * 0              4        5                      4 + length
 * +--------------+--------+----------------------+
 * | length       | type   | body                 |
 * | uint32       | octet  | length - 1 octets    |
 * +--------------+--------+----------------------+
 *
 * length counts the type octet and the body, never itself: 1 &lt;= length &lt;= max frame length (16 MiB by default).
 *
 * Field encodings (big-endian, network order):
 *   int64, int32        two's complement
 *   bool                one octet, 0 or 1; any other value is malformed
 *   string              uint16 octet count, then that many UTF-8 octets (at most 65535)
 *   NodeId              string
 *   Incarnation         int64
 *   ObjectId            string vhost, string name
 *   bytes               int32 octet count (&gt;= 0), then the octets
 *   list of bytes       int32 count (&gt;= 0), then each as bytes
 *   list of int64       int32 count (&gt;= 0), then each int64
 *   list of NodeId      int32 count (&gt;= 0), then each NodeId
 *   Epoch               int64 (&gt;= 0; a negative epoch is malformed)
 *   LogPosition         epoch Epoch, offset int64 (&gt;= -1)
 *   history             int32 count (&gt;= 0), then count x (epoch int64, first offset int64), both ascending
 *   record              kind octet, epoch Epoch, offset int64, then by kind (a replication.Record):
 *                         0x01 EpochStart  nothing more
 *                         0x02 Message     publisher int64, sequence int64, timestamp int64, body bytes
 *                         0x03 Settle      settled int64 list (at least one)
 *                         0x04 Returned    returned int64 list (at least one)
 *                         0x05 DeadLettered reason octet, offsets int64 list (at least one)
 *   list of record      int32 count (&gt;= 0), then each record
 *
 * An unknown kind octet, an epoch history out of order or a value a record refuses is malformed.
 *
 * Bodies: the record components in declaration order, nothing else (a body with octets left over is malformed).
 *
 *   type  message          body
 *   0x01  Hello            clusterName string, node NodeId, incarnation Incarnation
 *   0x02  Heartbeat        node NodeId, incarnation Incarnation, draining bool, sentAtMillis int64
 *   0x03  Forward          origin NodeId, publisherId int64, sequence int64, epoch int64, object ObjectId,
 *                          payload bytes
 *   0x04  ForwardOutcome   publisherId int64, sequence int64, object ObjectId, confirmed bool, reason string
 *   0x10  Append           object ObjectId, epoch int64, firstOffset int64, records list of bytes,
 *                          commitOffset int64
 *   0x11  Progress         object ObjectId, epoch int64, node NodeId, incarnation Incarnation, durableOffset int64
 *   0x12  SealRequest      object ObjectId, epoch int64
 *   0x13  SealReply        object ObjectId, sealedEpoch int64, lastEpoch int64, lastOffset int64,
 *                          durableOffset int64, node NodeId
 *   0x14  InstallRequest   object ObjectId, epoch int64, recoveryPointEpoch int64, recoveryPointOffset int64,
 *                          source NodeId
 *   0x15  InstallReply     object ObjectId, epoch int64, node NodeId, ok bool, reason string
 *   0x16  Fetch            object ObjectId, fromOffset int64, maxBytes int32
 *   0x17  FetchReply       object ObjectId, fromOffset int64, records list of bytes, epochs list of int64
 *   0x18  Replication      object ObjectId, kind octet, then by kind (a replication.PeerMessage):
 *           0x01 Replicate   epoch Epoch, truncateFrom int64, records list of record, sentMs int64
 *           0x02 Progress    epoch Epoch, incarnation Incarnation, history, end int64, durable int64, resync bool,
 *                            echoMs int64
 *           0x03 Fetch       installEpoch Epoch, history, end int64, upTo LogPosition
 *           0x04 FetchReply  installEpoch Epoch, truncateFrom int64, records list of record
 *           0x05 Snapshot    epoch Epoch, start int64, history
 *   0x19  RecoveryCommand  kind octet, object ObjectId, epoch Epoch, node NodeId, then by kind (a RecoveryRequest):
 *           0x01 Seal        nothing more
 *           0x02 Install     point LogPosition, sources list of NodeId
 *           0x03 CatchUp     owner NodeId
 *           0x04 Drop        follower NodeId
 *   0x20  PublishToHome    publisher int64, sequence int64, after int64, queueId int64, message bytes
 *   0x21  PublishToHomeOutcome  sequence int64, replyCode int32, text string
 *   0x22  Subscribe        requestId int64, queueId int64, consumerId int64, tag string, noAck bool,
 *                          exclusive bool, prefetch int32, stream start kind int8 (0 first, 1 last, 2 next,
 *                          3 offset, 4 timestamp, 5 interval), stream start value int64 (the offset, epoch
 *                          millis, or millis back from the owner's now)
 *   0x23  Deliver          consumerId int64, offset int64, redelivered bool, message bytes
 *   0x24  Settle           queueId int64, offsets list of int64, settlement int32
 *   0x25  CancelConsumer   queueId int64, consumerId int64
 *   0x26  ConsumerCancelled  consumerId int64
 *   0x27  QueueCall        requestId int64, queueId int64, op int32, flags int32
 *   0x28  QueueReply       requestId int64, replyCode int32, text string, count int64, consumers int64,
 *                          offset int64, redelivered bool, message bytes
 *   0x29  DropReply        object ObjectId, epoch int64, node NodeId, follower NodeId
 * </pre>
 *
 * <p>To add a message: a record in {@link PeerMessage}, a type code here (never reuse one), a case in {@link
 * #typeOf} and {@link #name}, and in the codec's {@code encode}, {@code encodedLength} and {@code decodeBody}. The
 * compiler finds {@code typeOf}, {@code encode} and {@code encodedLength} (pattern switches over the sealed
 * interface); {@code PeerCodecTest} finds the rest once the new record has a sample.
 */
public final class PeerFrameDescriptor {
    public static final int LENGTH_OFFSET = 0;
    public static final int LENGTH_FIELD_LENGTH = 4;
    public static final int TYPE_OFFSET = 4;
    public static final int TYPE_LENGTH = 1;
    public static final int BODY_OFFSET = 5;
    /** The length field and the type: what precedes the body. */
    public static final int HEADER_LENGTH = LENGTH_FIELD_LENGTH + TYPE_LENGTH;

    /** The smallest valid length field: a type and an empty body. */
    public static final int MIN_LENGTH = TYPE_LENGTH;

    /** The default largest length field accepted and sent: 16 MiB. */
    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

    /** The smallest max frame length a link may be configured with; every message without data fits. */
    public static final int MIN_MAX_FRAME_LENGTH = 1024;

    /** The largest max frame length: what a Netty buffer can hold with the length field. */
    public static final int MAX_MAX_FRAME_LENGTH = Integer.MAX_VALUE - LENGTH_FIELD_LENGTH;

    public static final int STRING_MAX_LENGTH = 0xFFFF;

    public static final int TYPE_HELLO = 0x01;
    public static final int TYPE_HEARTBEAT = 0x02;
    public static final int TYPE_FORWARD = 0x03;
    public static final int TYPE_FORWARD_OUTCOME = 0x04;
    public static final int TYPE_APPEND = 0x10;
    public static final int TYPE_PROGRESS = 0x11;
    public static final int TYPE_SEAL_REQUEST = 0x12;
    public static final int TYPE_SEAL_REPLY = 0x13;
    public static final int TYPE_INSTALL_REQUEST = 0x14;
    public static final int TYPE_INSTALL_REPLY = 0x15;
    public static final int TYPE_FETCH = 0x16;
    public static final int TYPE_FETCH_REPLY = 0x17;
    public static final int TYPE_REPLICATION = 0x18;
    public static final int TYPE_RECOVERY_COMMAND = 0x19;
    public static final int TYPE_PUBLISH_TO_HOME = 0x20;
    public static final int TYPE_PUBLISH_TO_HOME_OUTCOME = 0x21;
    public static final int TYPE_SUBSCRIBE = 0x22;
    public static final int TYPE_DELIVER = 0x23;
    public static final int TYPE_SETTLE = 0x24;
    public static final int TYPE_CANCEL_CONSUMER = 0x25;
    public static final int TYPE_CONSUMER_CANCELLED = 0x26;
    public static final int TYPE_QUEUE_CALL = 0x27;
    public static final int TYPE_QUEUE_REPLY = 0x28;
    public static final int TYPE_DROP_REPLY = 0x29;

    /** Kinds of the replication message inside a {@code Replication} frame. */
    public static final int REPLICATION_REPLICATE = 0x01;

    public static final int REPLICATION_PROGRESS = 0x02;
    public static final int REPLICATION_FETCH = 0x03;
    public static final int REPLICATION_FETCH_REPLY = 0x04;
    public static final int REPLICATION_SNAPSHOT = 0x05;

    /** Kinds of a replication record. */
    public static final int RECORD_EPOCH_START = 0x01;

    public static final int RECORD_MESSAGE = 0x02;
    public static final int RECORD_SETTLE = 0x03;
    public static final int RECORD_RETURNED = 0x04;
    public static final int RECORD_DEAD_LETTERED = 0x05;

    /** Octets of a record before its kind's fields: kind, epoch, offset. */
    public static final int RECORD_HEADER_LENGTH = 1 + 2 * Long.BYTES;

    /** Kinds of the recovery request inside a {@code RecoveryCommand} frame. */
    public static final int RECOVERY_SEAL = 0x01;

    public static final int RECOVERY_INSTALL = 0x02;
    public static final int RECOVERY_CATCH_UP = 0x03;
    public static final int RECOVERY_DROP = 0x04;

    private PeerFrameDescriptor() {}

    /** The type code of a message. */
    public static int typeOf(PeerMessage message) {
        return switch (message) {
            case PeerMessage.Hello m -> TYPE_HELLO;
            case PeerMessage.Heartbeat m -> TYPE_HEARTBEAT;
            case PeerMessage.Forward m -> TYPE_FORWARD;
            case PeerMessage.ForwardOutcome m -> TYPE_FORWARD_OUTCOME;
            case PeerMessage.Append m -> TYPE_APPEND;
            case PeerMessage.Progress m -> TYPE_PROGRESS;
            case PeerMessage.SealRequest m -> TYPE_SEAL_REQUEST;
            case PeerMessage.SealReply m -> TYPE_SEAL_REPLY;
            case PeerMessage.InstallRequest m -> TYPE_INSTALL_REQUEST;
            case PeerMessage.InstallReply m -> TYPE_INSTALL_REPLY;
            case PeerMessage.Fetch m -> TYPE_FETCH;
            case PeerMessage.FetchReply m -> TYPE_FETCH_REPLY;
            case PeerMessage.Replication m -> TYPE_REPLICATION;
            case PeerMessage.RecoveryCommand m -> TYPE_RECOVERY_COMMAND;
            case PeerMessage.PublishToHome m -> TYPE_PUBLISH_TO_HOME;
            case PeerMessage.PublishToHomeOutcome m -> TYPE_PUBLISH_TO_HOME_OUTCOME;
            case PeerMessage.Subscribe m -> TYPE_SUBSCRIBE;
            case PeerMessage.Deliver m -> TYPE_DELIVER;
            case PeerMessage.Settle m -> TYPE_SETTLE;
            case PeerMessage.CancelConsumer m -> TYPE_CANCEL_CONSUMER;
            case PeerMessage.ConsumerCancelled m -> TYPE_CONSUMER_CANCELLED;
            case PeerMessage.QueueCall m -> TYPE_QUEUE_CALL;
            case PeerMessage.QueueReply m -> TYPE_QUEUE_REPLY;
            case PeerMessage.DropReply m -> TYPE_DROP_REPLY;
        };
    }

    /** The message name of a type code, for logs; {@code "unknown(0x..)"} for a code no message has. */
    public static String name(int type) {
        return switch (type) {
            case TYPE_HELLO -> "hello";
            case TYPE_HEARTBEAT -> "heartbeat";
            case TYPE_FORWARD -> "forward";
            case TYPE_FORWARD_OUTCOME -> "forward_outcome";
            case TYPE_APPEND -> "append";
            case TYPE_PROGRESS -> "progress";
            case TYPE_SEAL_REQUEST -> "seal_request";
            case TYPE_SEAL_REPLY -> "seal_reply";
            case TYPE_INSTALL_REQUEST -> "install_request";
            case TYPE_INSTALL_REPLY -> "install_reply";
            case TYPE_FETCH -> "fetch";
            case TYPE_FETCH_REPLY -> "fetch_reply";
            case TYPE_REPLICATION -> "replication";
            case TYPE_RECOVERY_COMMAND -> "recovery_command";
            case TYPE_PUBLISH_TO_HOME -> "publish_to_home";
            case TYPE_PUBLISH_TO_HOME_OUTCOME -> "publish_to_home_outcome";
            case TYPE_SUBSCRIBE -> "subscribe";
            case TYPE_DELIVER -> "deliver";
            case TYPE_SETTLE -> "settle";
            case TYPE_CANCEL_CONSUMER -> "cancel_consumer";
            case TYPE_CONSUMER_CANCELLED -> "consumer_cancelled";
            case TYPE_QUEUE_CALL -> "queue_call";
            case TYPE_QUEUE_REPLY -> "queue_reply";
            case TYPE_DROP_REPLY -> "drop_reply";
            default -> "unknown(0x" + Integer.toHexString(type) + ")";
        };
    }

    /** The length field of the frame at {@code frameIndex}: type and body octets, read unsigned. */
    public static long length(ByteBuf buffer, int frameIndex) {
        return buffer.getUnsignedInt(frameIndex + LENGTH_OFFSET);
    }

    public static int type(ByteBuf buffer, int frameIndex) {
        return buffer.getUnsignedByte(frameIndex + TYPE_OFFSET);
    }

    /** The whole frame's size, length field included, for a length field of {@code length}. */
    public static int frameSize(int length) {
        return LENGTH_FIELD_LENGTH + length;
    }

    /**
     * Checks a configured max frame length.
     *
     * @throws IllegalArgumentException when it is outside [{@link #MIN_MAX_FRAME_LENGTH}, {@link
     *     #MAX_MAX_FRAME_LENGTH}]
     */
    public static int checkMaxFrameLength(int maxFrameLength) {
        if (maxFrameLength < MIN_MAX_FRAME_LENGTH || maxFrameLength > MAX_MAX_FRAME_LENGTH) {
            throw new IllegalArgumentException("max frame length must be in [" + MIN_MAX_FRAME_LENGTH + ", "
                    + MAX_MAX_FRAME_LENGTH + "], was " + maxFrameLength);
        }
        return maxFrameLength;
    }
}
