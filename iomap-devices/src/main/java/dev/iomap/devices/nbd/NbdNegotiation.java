package dev.iomap.devices.nbd;

import static dev.iomap.devices.nbd.NbdProtocol.*;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The client's side of the fixed newstyle handshake: client flags, {@code NBD_OPT_STRUCTURED_REPLY}
 * if wanted, then {@code NBD_OPT_GO} asking for {@code NBD_INFO_BLOCK_SIZE} (falling back to
 * {@code NBD_OPT_EXPORT_NAME} on a server that does not know {@code NBD_OPT_GO}). TLS is never
 * started: a server that insists on it is refused with {@link NbdTlsException}. A refusal ends the
 * session softly ({@code NBD_OPT_ABORT}) before it is thrown; the caller closes the channel either way.
 */
final class NbdNegotiation {
    /** The largest option reply this client reads (info items and error strings are far smaller). */
    private static final int MAX_OPTION_REPLY = 1 << 20;

    private final SocketChannel channel;
    private final NbdExport export;

    private NbdNegotiation(SocketChannel channel, NbdExport export) {
        this.channel = channel;
        this.export = export;
    }

    /**
     * Runs the handshake on a freshly connected, blocking channel.
     *
     * @param channel the connection, left in the transmission phase on success
     * @param export the export to ask for, and whether to ask for structured replies
     * @return what was agreed
     * @throws NbdTlsException if the server requires TLS
     * @throws NbdNegotiationException if the server refuses the export or does not speak fixed newstyle
     * @throws IOException if the connection fails
     */
    static NbdSession negotiate(SocketChannel channel, NbdExport export) throws IOException {
        return new NbdNegotiation(channel, export).run();
    }

    private NbdSession run() throws IOException {
        ByteBuffer hello = read(18);
        long magic = hello.getLong();
        long style = hello.getLong();
        if (magic != INIT_PASSWD || (style != IHAVEOPT && style != CLISERV_MAGIC)) {
            throw refused("is not an NBD server (it did not greet with NBDMAGIC)");
        }
        if (style == CLISERV_MAGIC) {
            throw refused("speaks only the oldstyle negotiation, which has no export names; run a newstyle server"
                    + " (nbd-server 3.10 or later, qemu-nbd)");
        }
        int handshakeFlags = hello.getShort() & 0xffff;
        if ((handshakeFlags & NBD_FLAG_FIXED_NEWSTYLE) == 0) {
            throw refused("does not speak the fixed newstyle negotiation (handshake flags " + handshakeFlags + ")");
        }
        boolean noZeroes = (handshakeFlags & NBD_FLAG_NO_ZEROES) != 0;
        write(ByteBuffer.allocate(4).putInt(NBD_FLAG_C_FIXED_NEWSTYLE | (noZeroes ? NBD_FLAG_C_NO_ZEROES : 0)));
        try {
            boolean structured = export.options().structuredReplies() && structuredReplies();
            return go(structured, noZeroes);
        } catch (NbdNegotiationException | NbdTlsException e) {
            abortQuietly();
            throw e;
        }
    }

    /** @return whether the server agreed to structured replies */
    private boolean structuredReplies() throws IOException {
        sendOption(NBD_OPT_STRUCTURED_REPLY, ByteBuffer.allocate(0));
        OptionReply reply = readReply(NBD_OPT_STRUCTURED_REPLY);
        if (reply.type() == NBD_REP_ERR_TLS_REQD) {
            throw tlsRequired();
        }
        return reply.type() == NBD_REP_ACK;
    }

    private NbdSession go(boolean structured, boolean noZeroes) throws IOException {
        byte[] name = export.name().getBytes(StandardCharsets.UTF_8);
        ByteBuffer data = ByteBuffer.allocate(4 + name.length + 2 + 2)
                .putInt(name.length).put(name).putShort((short) 1).putShort((short) NBD_INFO_BLOCK_SIZE);
        sendOption(NBD_OPT_GO, data.flip());
        long size = -1;
        int flags = 0;
        int[] blockSizes = {1, 4096, DEFAULT_MAX_PAYLOAD};
        while (true) {
            OptionReply reply = readReply(NBD_OPT_GO);
            switch (reply.type()) {
                case NBD_REP_INFO -> {
                    ByteBuffer info = reply.data();
                    int type = info.remaining() >= 2 ? info.getShort() & 0xffff : -1;
                    if (type == NBD_INFO_EXPORT && info.remaining() == 10) {
                        size = info.getLong();
                        flags = info.getShort() & 0xffff;
                    } else if (type == NBD_INFO_BLOCK_SIZE && info.remaining() == 12) {
                        blockSizes = new int[] {info.getInt(), info.getInt(), info.getInt()};
                    }
                }
                case NBD_REP_ACK -> {
                    if (size < 0) {
                        throw refused("accepted export '" + export.name() + "' without giving its size"
                                + " (NBD_INFO_EXPORT), against the protocol");
                    }
                    return session(size, flags, blockSizes, structured);
                }
                case NBD_REP_ERR_UNSUP -> {
                    return exportName(noZeroes, structured);
                }
                case NBD_REP_ERR_TLS_REQD -> throw tlsRequired();
                case NBD_REP_ERR_UNKNOWN -> throw refused("has no export named '" + export.name() + "'"
                        + serverSays(reply));
                default -> throw refused("refused export '" + export.name() + "' with "
                        + replyName(reply.type()) + serverSays(reply));
            }
        }
    }

    /** The old way into transmission, for a server without {@code NBD_OPT_GO}: no errors, no block sizes. */
    private NbdSession exportName(boolean noZeroes, boolean structured) throws IOException {
        byte[] name = export.name().getBytes(StandardCharsets.UTF_8);
        sendOption(NBD_OPT_EXPORT_NAME, ByteBuffer.wrap(name));
        ByteBuffer reply;
        try {
            reply = read(noZeroes ? 10 : 134);
        } catch (EOFException e) {
            throw new NbdNegotiationException(export + ": the server closed the connection when asked for"
                    + " export '" + export.name() + "' (it has no such export, or refuses this client)", e);
        }
        return session(reply.getLong(), reply.getShort() & 0xffff, new int[] {1, 4096, DEFAULT_MAX_PAYLOAD},
                structured);
    }

    private NbdSession session(long size, int flags, int[] blockSizes, boolean structured)
            throws NbdNegotiationException {
        if (size < 0) {
            throw refused("gave an export size past 2^63 bytes");
        }
        int minimum = blockSizes[0];
        int preferred = blockSizes[1];
        long maximum = Integer.toUnsignedLong(blockSizes[2]);
        if (minimum < 1 || Integer.bitCount(minimum) != 1 || minimum > 65536 || maximum < minimum) {
            throw refused("gave block size constraints the protocol does not allow: minimum " + minimum
                    + ", preferred " + preferred + ", maximum " + maximum);
        }
        int payload = (int) Math.min(maximum, DEFAULT_MAX_PAYLOAD);
        return new NbdSession(size, flags, minimum, preferred, payload, structured);
    }

    private void sendOption(int option, ByteBuffer data) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(16).putLong(IHAVEOPT).putInt(option).putInt(data.remaining());
        write(header);
        while (data.hasRemaining()) {
            channel.write(data);
        }
    }

    /** Ends the negotiation softly, as the protocol asks of a client that gives up; errors are moot. */
    private void abortQuietly() {
        try {
            sendOption(NBD_OPT_ABORT, ByteBuffer.allocate(0));
        } catch (IOException e) {
            // The session is being refused anyway; the caller closes the channel.
        }
    }

    /**
     * @param option the option the reply must be for
     * @return the next option reply
     */
    private OptionReply readReply(int option) throws IOException {
        ByteBuffer header = read(20);
        long magic = header.getLong();
        int repliedTo = header.getInt();
        int type = header.getInt();
        int length = header.getInt();
        if (magic != OPTION_REPLY_MAGIC || repliedTo != option) {
            throw refused("sent a malformed option reply (magic " + Long.toHexString(magic) + ", option "
                    + repliedTo + ", expected " + option + ")");
        }
        if (length < 0 || length > MAX_OPTION_REPLY) {
            throw refused("sent an option reply of " + Integer.toUnsignedString(length) + " bytes");
        }
        return new OptionReply(type, read(length));
    }

    /** One option reply: its type and its data, positioned at the start. */
    private record OptionReply(int type, ByteBuffer data) {
    }

    private static String serverSays(OptionReply reply) {
        if ((reply.type() & NBD_REP_FLAG_ERROR) == 0 || !reply.data().hasRemaining()) {
            return "";
        }
        return ": " + StandardCharsets.UTF_8.decode(reply.data().duplicate());
    }

    private NbdTlsException tlsRequired() {
        return new NbdTlsException(export + ": the server requires TLS (NBD_REP_ERR_TLS_REQD), which this client"
                + " does not speak; serve the export without TLS on a trusted network, or tunnel it (stunnel,"
                + " ssh -L) and give the tunnel's nbd:// address");
    }

    private NbdNegotiationException refused(String what) {
        return new NbdNegotiationException(export + ": the server " + what);
    }

    private ByteBuffer read(int bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(bytes);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                throw new EOFException(export + ": the server closed the connection during the handshake");
            }
        }
        return buffer.flip();
    }

    private void write(ByteBuffer buffer) throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }
}
