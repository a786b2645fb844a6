package dev.iomap.devices.nbd;

import static dev.iomap.devices.nbd.NbdProtocol.*;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One TCP connection to an NBD server in the transmission phase, with any number of requests in
 * flight: a sender thread writes requests in the order they are {@link #send sent} (several at a
 * time in one gathering write), a reader thread matches replies, simple or structured and in any
 * order, to them by handle and completes each one's attempt future.
 *
 * <p>Once the connection fails (the server closes it, an I/O error, a reply that breaks the
 * protocol, {@link #abort}) it is dead for good: every attempt in flight, and every later one, fails
 * with the same {@link IOException}. Only its own two threads touch the socket, and nothing
 * interrupts them, so a caller's interrupt never breaks a connection. Thread-safe.
 */
final class NbdConnection {
    /** Requests the sender gathers into one write at most. */
    private static final int SEND_BATCH = 64;
    /** The largest structured reply chunk this client reads that is not read data. */
    private static final int MAX_CHUNK = 1 << 20;

    private final NbdExport export;
    private final SocketChannel channel;
    private final NbdSession session;
    private final Map<Long, Attempt> inFlight = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<Attempt> outbox = new LinkedBlockingQueue<>();
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile IOException dead;
    private long nextHandle = 1;

    /** One sending of a request on this connection. */
    private record Attempt(long handle, NbdRequest request, long sentNanos, CompletableFuture<NbdReply> reply) {
    }

    /** Tells the sender to stop. */
    private static final Attempt STOP = new Attempt(0, null, 0, null);

    private NbdConnection(NbdExport export, SocketChannel channel, NbdSession session) {
        this.export = export;
        this.channel = channel;
        this.session = session;
    }

    /**
     * Connects and negotiates, within a time limit.
     *
     * @param export the export
     * @param timer runs the timeout
     * @param threads makes the connection's two threads
     * @param timeoutMillis how long connecting and negotiating may take
     * @return the connection, in the transmission phase
     * @throws ConnectException if the server cannot be reached
     * @throws SocketTimeoutException if connecting and negotiating took too long
     * @throws NbdTlsException if the server requires TLS
     * @throws NbdNegotiationException if the server refuses the export
     * @throws IOException if the connection fails during the handshake
     */
    static NbdConnection open(NbdExport export, ScheduledExecutorService timer, ThreadFactory threads,
            long timeoutMillis) throws IOException {
        SocketChannel channel = SocketChannel.open();
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> guard = timer.schedule(() -> {
            timedOut.set(true);
            closeQuietly(channel);
        }, timeoutMillis, TimeUnit.MILLISECONDS);
        try {
            connect(channel, export, (int) timeoutMillis);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            NbdSession session = NbdNegotiation.negotiate(channel, export);
            if (!guard.cancel(false)) {
                throw new SocketTimeoutException(export + ": connecting took longer than " + timeoutMillis + " ms");
            }
            var connection = new NbdConnection(export, channel, session);
            connection.start(threads);
            return connection;
        } catch (IOException | RuntimeException e) {
            guard.cancel(false);
            closeQuietly(channel);
            if (timedOut.get() && !(e instanceof NbdNegotiationException) && !(e instanceof NbdTlsException)) {
                var timeout = new SocketTimeoutException(export + ": connecting and negotiating took longer than "
                        + timeoutMillis + " ms");
                timeout.initCause(e);
                throw timeout;
            }
            throw e;
        }
    }

    private static void connect(SocketChannel channel, NbdExport export, int timeoutMillis) throws IOException {
        try {
            channel.socket().connect(new InetSocketAddress(export.host(), export.port()), timeoutMillis);
        } catch (IOException e) {
            var refused = new ConnectException(export + ": cannot connect (" + e.getMessage() + "); is the NBD"
                    + " server running there?");
            refused.initCause(e);
            throw refused;
        }
    }

    private void start(ThreadFactory threads) {
        Thread sender = threads.newThread(this::sendLoop);
        Thread reader = threads.newThread(this::readLoop);
        sender.setName("iomap-nbd-send-" + export.host() + ":" + export.port());
        reader.setName("iomap-nbd-recv-" + export.host() + ":" + export.port());
        sender.start();
        reader.start();
    }

    /** @return what the handshake agreed */
    NbdSession session() {
        return session;
    }

    /**
     * Queues a request to be sent.
     *
     * @param request the request
     * @return its reply, or, if the connection is or becomes dead first, the connection's failure
     */
    CompletableFuture<NbdReply> send(NbdRequest request) {
        IOException failure = dead;
        if (failure != null) {
            return CompletableFuture.failedFuture(failure);
        }
        Attempt attempt;
        synchronized (this) {
            attempt = new Attempt(nextHandle++, request, System.nanoTime(), new CompletableFuture<>());
        }
        inFlight.put(attempt.handle(), attempt);
        outbox.add(attempt);
        failure = dead;
        if (failure != null && inFlight.remove(attempt.handle()) != null) {
            attempt.reply().completeExceptionally(failure);
        }
        return attempt.reply();
    }

    /** @return the failure that killed the connection, or null while it lives */
    IOException failure() {
        return dead;
    }

    /**
     * @param now {@link System#nanoTime()}
     * @return nanoseconds the oldest unanswered request has waited, 0 if none waits
     */
    long longestWaitNanos(long now) {
        long longest = 0;
        for (Attempt attempt : inFlight.values()) {
            longest = Math.max(longest, now - attempt.sentNanos());
        }
        return longest;
    }

    /**
     * Kills the connection: closes the socket and fails every attempt in flight with {@code cause}.
     * Idempotent: the first cause stays.
     *
     * @param cause why
     */
    void abort(IOException cause) {
        synchronized (this) {
            if (dead != null) {
                return;
            }
            dead = cause;
        }
        closing.set(true);
        outbox.add(STOP);
        closeQuietly(channel);
        for (Attempt attempt : List.copyOf(inFlight.values())) {
            if (inFlight.remove(attempt.handle()) != null) {
                attempt.reply().completeExceptionally(cause);
            }
        }
    }

    /**
     * Ends the session softly: queues {@code NBD_CMD_DISC} behind what is queued and closes the
     * socket once it is written. Attempts still in flight fail as by {@link #abort}.
     */
    void close() {
        if (dead != null || !closing.compareAndSet(false, true)) {
            return;
        }
        outbox.add(new Attempt(0, new NbdRequest(NBD_CMD_DISC, 0, 0, 0, List.of(), true), 0, null));
        outbox.add(STOP);
    }

    private void sendLoop() {
        List<Attempt> batch = new ArrayList<>(SEND_BATCH);
        try {
            while (true) {
                batch.clear();
                batch.add(outbox.take());
                outbox.drainTo(batch, SEND_BATCH - 1);
                boolean stop = batch.removeIf(attempt -> attempt == STOP); // close() and abort() may both add it
                sendBatch(batch);
                if (stop) {
                    break;
                }
            }
            if (dead == null) {
                abort(new IOException(export + ": connection closed by this client"));
            }
        } catch (IOException e) {
            abort(dead != null ? dead : new IOException(export + ": sending to the server failed: " + e, e));
        } catch (InterruptedException e) {
            abort(new IOException(export + ": the sender thread was interrupted", e));
        }
    }

    private void sendBatch(List<Attempt> batch) throws IOException {
        List<ByteBuffer> buffers = new ArrayList<>();
        for (Attempt attempt : batch) {
            NbdRequest request = attempt.request();
            buffers.add(ByteBuffer.allocate(REQUEST_HEADER_BYTES).putInt(NBD_REQUEST_MAGIC)
                    .putShort((short) request.flags).putShort((short) request.command).putLong(attempt.handle())
                    .putLong(request.offset).putInt(request.command == NBD_CMD_DISC ? 0 : request.length).flip());
            if (request.command == NBD_CMD_WRITE) {
                for (ByteBuffer data : request.data) {
                    buffers.add(data.duplicate());
                }
            }
        }
        ByteBuffer[] array = buffers.toArray(ByteBuffer[]::new);
        int first = 0;
        while (first < array.length) {
            channel.write(array, first, array.length - first);
            while (first < array.length && !array[first].hasRemaining()) {
                first++;
            }
        }
    }

    private void readLoop() {
        Map<Long, ChunkedReply> partial = new HashMap<>();
        ByteBuffer magic = ByteBuffer.allocate(4);
        try {
            while (true) {
                readFully(magic.clear());
                switch (magic.getInt(0)) {
                    case NBD_SIMPLE_REPLY_MAGIC -> simpleReply();
                    case NBD_STRUCTURED_REPLY_MAGIC -> structuredChunk(partial);
                    default -> throw protocol("sent a reply with the unknown magic 0x"
                            + Integer.toHexString(magic.getInt(0)));
                }
            }
        } catch (IOException e) {
            abort(dead != null ? dead : closing.get() ? new IOException(export + ": connection closed", e)
                    : new IOException(export + ": the connection to the server failed: " + e, e));
        }
    }

    private void simpleReply() throws IOException {
        ByteBuffer header = readFully(ByteBuffer.allocate(12)).flip();
        int error = header.getInt();
        Attempt attempt = expected(header.getLong());
        byte[] data = null;
        if (error == 0 && attempt.request().command == NBD_CMD_READ) {
            if (session.structuredReplies()) {
                throw protocol("answered a read with a simple reply after agreeing to structured replies");
            }
            data = new byte[attempt.request().length];
            readFully(ByteBuffer.wrap(data));
        }
        answer(attempt, new NbdReply(error, null, data));
    }

    /** What has arrived of one request's structured reply. */
    private static final class ChunkedReply {
        byte[] data;
        long covered;
        int error;
        String message;
    }

    private void structuredChunk(Map<Long, ChunkedReply> partial) throws IOException {
        ByteBuffer header = readFully(ByteBuffer.allocate(16)).flip();
        int flags = header.getShort() & 0xffff;
        int type = header.getShort() & 0xffff;
        long handle = header.getLong();
        long length = Integer.toUnsignedLong(header.getInt());
        if (!session.structuredReplies()) {
            throw protocol("sent a structured reply it was not asked for");
        }
        Attempt attempt = expected(handle);
        NbdRequest request = attempt.request();
        ChunkedReply reply = partial.computeIfAbsent(handle, h -> new ChunkedReply());
        switch (type) {
            case NBD_REPLY_TYPE_NONE -> {
                if (length != 0) {
                    throw protocol("sent an NBD_REPLY_TYPE_NONE chunk with " + length + " bytes");
                }
            }
            case NBD_REPLY_TYPE_OFFSET_DATA -> offsetData(request, reply, length);
            case NBD_REPLY_TYPE_OFFSET_HOLE -> offsetHole(request, reply, length);
            default -> otherChunk(type, reply, length);
        }
        if ((flags & NBD_REPLY_FLAG_DONE) == 0) {
            return;
        }
        partial.remove(handle);
        answer(attempt, finished(request, reply));
    }

    private NbdReply finished(NbdRequest request, ChunkedReply reply) throws IOException {
        if (reply.error != 0) {
            return new NbdReply(reply.error, reply.message, null);
        }
        if (request.command != NBD_CMD_READ) {
            return new NbdReply(0, null, null);
        }
        if (reply.covered != request.length) {
            throw protocol("answered " + request + " with " + reply.covered + " bytes of data and holes");
        }
        return new NbdReply(0, null, reply.data);
    }

    private void offsetData(NbdRequest request, ChunkedReply reply, long length) throws IOException {
        if (request.command != NBD_CMD_READ || length < 9) {
            throw protocol("sent an NBD_REPLY_TYPE_OFFSET_DATA chunk of " + length + " bytes for " + request);
        }
        long offset = readFully(ByteBuffer.allocate(8)).flip().getLong();
        int at = within(request, offset, length - 8);
        readFully(ByteBuffer.wrap(buffer(request, reply), at, (int) (length - 8)));
        reply.covered += length - 8;
    }

    private void offsetHole(NbdRequest request, ChunkedReply reply, long length) throws IOException {
        if (request.command != NBD_CMD_READ || length != 12) {
            throw protocol("sent an NBD_REPLY_TYPE_OFFSET_HOLE chunk of " + length + " bytes for " + request);
        }
        ByteBuffer hole = readFully(ByteBuffer.allocate(12)).flip();
        long offset = hole.getLong();
        long size = Integer.toUnsignedLong(hole.getInt());
        within(request, offset, size);
        buffer(request, reply); // zero-filled: a hole reads as zeroes
        reply.covered += size;
    }

    /** An error chunk (recorded), or a chunk type this client does not use (skipped; an unknown error is an error). */
    private void otherChunk(int type, ChunkedReply reply, long length) throws IOException {
        if (length > MAX_CHUNK) {
            throw protocol("sent a chunk of type " + type + " and " + length + " bytes");
        }
        ByteBuffer payload = readFully(ByteBuffer.allocate((int) length)).flip();
        if ((type & NBD_REPLY_TYPE_ERROR_BIT) == 0) {
            return;
        }
        if (length < 6) {
            throw protocol("sent an error chunk of " + length + " bytes");
        }
        int error = payload.getInt();
        int messageLength = payload.getShort() & 0xffff;
        if (messageLength > payload.remaining()) {
            throw protocol("sent an error chunk whose message is longer than the chunk");
        }
        reply.error = error == 0 ? EIO : error;
        reply.message = StandardCharsets.UTF_8.decode(payload.slice(payload.position(), messageLength)).toString();
    }

    private static byte[] buffer(NbdRequest request, ChunkedReply reply) {
        if (reply.data == null) {
            reply.data = new byte[request.length];
        }
        return reply.data;
    }

    /** @return where {@code [offset, +length)} starts in the request's data, checking it lies inside */
    private int within(NbdRequest request, long offset, long length) throws IOException {
        if (offset < request.offset || length < 0 || offset + length > request.offset + request.length) {
            throw protocol("sent a chunk for [" + offset + ", +" + length + ") outside " + request);
        }
        return (int) (offset - request.offset);
    }

    private Attempt expected(long handle) throws IOException {
        Attempt attempt = inFlight.get(handle);
        if (attempt == null) {
            throw protocol("replied to handle " + handle + ", which no request in flight has");
        }
        return attempt;
    }

    private void answer(Attempt attempt, NbdReply reply) {
        if (inFlight.remove(attempt.handle()) != null) {
            attempt.reply().complete(reply);
        }
    }

    private IOException protocol(String what) {
        return new IOException(export + ": the server broke the NBD protocol: it " + what);
    }

    private ByteBuffer readFully(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                throw new EOFException(export + ": the server closed the connection");
            }
        }
        return buffer;
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // Closing a socket that failed: nothing more can be learned or done.
        }
    }
}
