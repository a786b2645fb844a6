package dev.iomap.devices.nbd;

/**
 * The numbers of the NBD protocol (the NetworkBlockDevice project's {@code doc/proto.md}) that this
 * client uses, under the protocol's own names. Everything on the wire is big-endian.
 */
final class NbdProtocol {
    private NbdProtocol() {
    }

    /** The IANA port of NBD's newstyle negotiation. */
    static final int DEFAULT_PORT = 10809;

    // Handshake
    /** {@code NBDMAGIC}, the server's first 8 bytes. */
    static final long INIT_PASSWD = 0x4e42444d41474943L;
    /** {@code IHAVEOPT}: newstyle negotiation, and the magic of every option the client sends. */
    static final long IHAVEOPT = 0x49484156454F5054L;
    /** The second magic of the oldstyle negotiation, which this client does not speak. */
    static final long CLISERV_MAGIC = 0x00420281861253L;
    /** The magic of every option reply. */
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;

    static final int NBD_FLAG_FIXED_NEWSTYLE = 1;
    static final int NBD_FLAG_NO_ZEROES = 1 << 1;
    static final int NBD_FLAG_C_FIXED_NEWSTYLE = 1;
    static final int NBD_FLAG_C_NO_ZEROES = 1 << 1;

    static final int NBD_OPT_EXPORT_NAME = 1;
    static final int NBD_OPT_ABORT = 2;
    static final int NBD_OPT_STARTTLS = 5;
    static final int NBD_OPT_GO = 7;
    static final int NBD_OPT_STRUCTURED_REPLY = 8;

    static final int NBD_REP_ACK = 1;
    static final int NBD_REP_INFO = 3;
    /** Bit 31 of an option reply type: an error. */
    static final int NBD_REP_FLAG_ERROR = 1 << 31;
    static final int NBD_REP_ERR_UNSUP = NBD_REP_FLAG_ERROR | 1;
    static final int NBD_REP_ERR_POLICY = NBD_REP_FLAG_ERROR | 2;
    static final int NBD_REP_ERR_INVALID = NBD_REP_FLAG_ERROR | 3;
    static final int NBD_REP_ERR_PLATFORM = NBD_REP_FLAG_ERROR | 4;
    static final int NBD_REP_ERR_TLS_REQD = NBD_REP_FLAG_ERROR | 5;
    static final int NBD_REP_ERR_UNKNOWN = NBD_REP_FLAG_ERROR | 6;
    static final int NBD_REP_ERR_SHUTDOWN = NBD_REP_FLAG_ERROR | 7;
    static final int NBD_REP_ERR_BLOCK_SIZE_REQD = NBD_REP_FLAG_ERROR | 8;

    static final int NBD_INFO_EXPORT = 0;
    static final int NBD_INFO_BLOCK_SIZE = 3;

    // Transmission flags
    static final int NBD_FLAG_HAS_FLAGS = 1;
    static final int NBD_FLAG_READ_ONLY = 1 << 1;
    static final int NBD_FLAG_SEND_FLUSH = 1 << 2;
    static final int NBD_FLAG_SEND_FUA = 1 << 3;
    static final int NBD_FLAG_SEND_TRIM = 1 << 5;
    static final int NBD_FLAG_SEND_WRITE_ZEROES = 1 << 6;

    // Transmission
    static final int NBD_REQUEST_MAGIC = 0x25609513;
    static final int NBD_SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int NBD_STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    /** Bytes of a request header. */
    static final int REQUEST_HEADER_BYTES = 28;

    static final int NBD_CMD_READ = 0;
    static final int NBD_CMD_WRITE = 1;
    static final int NBD_CMD_DISC = 2;
    static final int NBD_CMD_FLUSH = 3;
    static final int NBD_CMD_TRIM = 4;
    static final int NBD_CMD_WRITE_ZEROES = 6;

    static final int NBD_CMD_FLAG_FUA = 1;

    static final int NBD_REPLY_FLAG_DONE = 1;
    static final int NBD_REPLY_TYPE_NONE = 0;
    static final int NBD_REPLY_TYPE_OFFSET_DATA = 1;
    static final int NBD_REPLY_TYPE_OFFSET_HOLE = 2;
    /** Bit 15 of a structured reply chunk type: an error chunk. */
    static final int NBD_REPLY_TYPE_ERROR_BIT = 1 << 15;
    static final int NBD_REPLY_TYPE_ERROR = NBD_REPLY_TYPE_ERROR_BIT | 1;
    static final int NBD_REPLY_TYPE_ERROR_OFFSET = NBD_REPLY_TYPE_ERROR_BIT | 2;

    // Errors a server may return
    static final int EPERM = 1;
    static final int EIO = 5;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EOVERFLOW = 75;
    static final int ENOTSUP = 95;
    static final int ESHUTDOWN = 108;

    /** Largest read or write a client sends when the server gives no maximum (the spec's advice). */
    static final int DEFAULT_MAX_PAYLOAD = 32 << 20;

    /** @return the command's name, for messages */
    static String commandName(int command) {
        return switch (command) {
            case NBD_CMD_READ -> "NBD_CMD_READ";
            case NBD_CMD_WRITE -> "NBD_CMD_WRITE";
            case NBD_CMD_DISC -> "NBD_CMD_DISC";
            case NBD_CMD_FLUSH -> "NBD_CMD_FLUSH";
            case NBD_CMD_TRIM -> "NBD_CMD_TRIM";
            case NBD_CMD_WRITE_ZEROES -> "NBD_CMD_WRITE_ZEROES";
            default -> "command " + command;
        };
    }

    /** @return the errno's name, for messages */
    static String errorName(int error) {
        return switch (error) {
            case EPERM -> "EPERM";
            case EIO -> "EIO";
            case ENOMEM -> "ENOMEM";
            case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC";
            case EOVERFLOW -> "EOVERFLOW";
            case ENOTSUP -> "ENOTSUP";
            case ESHUTDOWN -> "ESHUTDOWN";
            default -> "error " + error;
        };
    }

    /** @return the option reply type's name, for messages */
    static String replyName(int reply) {
        return switch (reply) {
            case NBD_REP_ACK -> "NBD_REP_ACK";
            case NBD_REP_INFO -> "NBD_REP_INFO";
            case NBD_REP_ERR_UNSUP -> "NBD_REP_ERR_UNSUP";
            case NBD_REP_ERR_POLICY -> "NBD_REP_ERR_POLICY";
            case NBD_REP_ERR_INVALID -> "NBD_REP_ERR_INVALID";
            case NBD_REP_ERR_PLATFORM -> "NBD_REP_ERR_PLATFORM";
            case NBD_REP_ERR_TLS_REQD -> "NBD_REP_ERR_TLS_REQD";
            case NBD_REP_ERR_UNKNOWN -> "NBD_REP_ERR_UNKNOWN";
            case NBD_REP_ERR_SHUTDOWN -> "NBD_REP_ERR_SHUTDOWN";
            case NBD_REP_ERR_BLOCK_SIZE_REQD -> "NBD_REP_ERR_BLOCK_SIZE_REQD";
            default -> "reply type " + Integer.toUnsignedString(reply);
        };
    }
}
