package dev.iomap.devices.nbd;

import static dev.iomap.devices.nbd.NbdProtocol.*;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.devices.DeviceCounters;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * A block device on an export of an NBD server, over one TCP connection of ours (no kernel module):
 * {@code nbd://HOST:PORT/EXPORT} ({@link NbdExport}). The handshake is the fixed newstyle one with
 * {@code NBD_OPT_GO}, which gives the export's size and block size constraints
 * ({@code NBD_INFO_BLOCK_SIZE}); replies are structured if the server agrees
 * ({@code NBD_OPT_STRUCTURED_REPLY}); TLS is refused ({@link NbdTlsException}).
 *
 * <p><b>Requests.</b> Any number are in flight at once on the connection, each with its own handle;
 * a request longer than the server's maximum payload (at most 32 MiB) goes as several. Reads, flushes
 * and discards wait in the calling thread, uninterruptibly (an interrupt is kept and set again on
 * return; only the device's own two threads touch the socket, so no interrupt can break it). A
 * write's future completes on the device's reader thread once the server acknowledged every part of
 * it, so its callbacks must not block. The caller's buffers are read by the device's sender thread,
 * and again after a reconnect, until the future completes. A discard is {@code NBD_CMD_WRITE_ZEROES}
 * (the server may punch a hole; later reads return zeroes), or zeroes written where the server does
 * not offer it; {@link #trim} is {@code NBD_CMD_TRIM}, a hint after which the range's contents are
 * undefined.
 *
 * <p><b>Durability.</b> As for every device, a write that completed is visible to reads and is durable
 * once a later {@link #flush()} returns: {@code flush()} is {@code NBD_CMD_FLUSH}, which the server
 * answers only after every write it had answered before is on stable storage. With
 * {@link NbdOptions#forceUnitAccess} every write and discard carries {@code NBD_CMD_FLAG_FUA} instead,
 * so each is durable when it completes, and {@code flush()} has nothing left to do. A server that
 * offers no flush promises nothing beyond what it does anyway (e.g. nbd-server's {@code sync}); a
 * flush is then only counted.
 *
 * <p><b>A dropped connection</b> (the server restarted, the network failed, or no reply came within
 * {@link NbdOptions#replyTimeout}) is made again, with a new handshake, for up to
 * {@link NbdOptions#reconnectWindow} from the drop; requests wait meanwhile. On the new connection
 * the device first sends again, in their order, every write acknowledged since the last flush that
 * was acknowledged (the replay log: a server that restarted may have lost them from its cache, and the
 * writer was already told they were done; writes are idempotent, and writes that overlap are sent one
 * after the other), waits for those, and then sends every request not yet answered. A flush in flight
 * at the drop is therefore answered only by a flush sent after that replay, on the new connection: a
 * flush the old server may have answered to nobody, or answered after losing writes it had
 * acknowledged, never reaches the caller as a success. The replay log keeps copies of at most
 * {@link NbdOptions#replayLimitBytes} bytes; past that the device flushes on its own and writers wait
 * for it. In FUA mode, or against a server without flush, there is no replay log (nothing is
 * acknowledged that a flush would still have to make durable, or nothing can be). When the window
 * passes, every waiting request fails with {@link NbdConnectionLostException} (EIO), and so does
 * every later one: nothing the server did not acknowledge is reported done, nothing not flushed is
 * reported durable; writes acknowledged but never flushed may be lost as by a power cut. (A device
 * that had nothing at stake, no request waiting and no write awaiting a flush, is not lost: it stays
 * unconnected, and its next request starts a new window.)
 *
 * <p>Bad requests get {@link dev.iomap.device.DeviceRangeException} (see
 * {@link DeviceCounters#checkRequest}); an error the server returns for a request is a
 * {@link DeviceIoException} naming it. A read-only device ({@link #openReadOnly}, or an export the
 * server marks read-only) refuses writes and discards with {@link ReadOnlyDeviceException}.
 * Thread-safe. After {@link #close()} every I/O operation fails with an {@link IOException} saying the
 * device is closed; the geometry and statistics still answer.
 */
public final class NbdBlockDevice implements BlockDevice {
    private final NbdExport export;
    private final int blockSize;
    private final long capacity;
    private final boolean readOnly;
    /** What the first handshake agreed; a reconnect must agree on an export at least as large. */
    private final NbdSession session;
    /** Bytes per NBD read or write: the server's maximum payload, in whole blocks. */
    private final int pieceBytes;
    private final DeviceCounters counters = new DeviceCounters();
    /** The device's threads (connections' senders and readers, reconnects): they must not wait on it. */
    private final Set<Thread> ownThreads;
    private final ThreadFactory threads;
    private final ScheduledExecutorService timer;
    private final Object lock = new Object();
    private final ReplayLog log = new ReplayLog();
    private final boolean logging;
    /** Requests not yet answered, in the order they were issued; guarded by {@link #lock}. */
    private final Set<NbdRequest> pending = new LinkedHashSet<>();
    /** The live connection; null while reconnecting, after the window passed, and after close. */
    private NbdConnection connection;
    /** Set once the reconnect window passed, saying why: every request fails with it. */
    private String lost;
    /** The last connection error when the window passed. */
    private IOException lostCause;
    /** Whether {@link #close()} began: no new request from a caller. */
    private boolean closing;
    /** Whether {@link #close()} is done with requests: the reconnect gives up. */
    private boolean closed;
    private boolean reconnecting;
    private boolean logFlushInFlight;
    private int reconnects;
    private long internalFlushes;

    private NbdBlockDevice(NbdExport export, NbdConnection first, int blockSize, long capacity, boolean readOnly,
            Set<Thread> ownThreads, ThreadFactory threads, ScheduledExecutorService timer) {
        this.export = export;
        this.session = first.session();
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.readOnly = readOnly;
        this.ownThreads = ownThreads;
        this.threads = threads;
        this.timer = timer;
        this.pieceBytes = session.maximumPayload() / blockSize * blockSize;
        this.logging = !readOnly && session.canFlush() && !export.options().forceUnitAccess();
        this.connection = first;
    }

    /**
     * Connects to an export for reading and writing; the device is as large as the export, in whole
     * blocks. The first connection is made at once (no reconnect window applies to it).
     *
     * @param export the export and the options
     * @param blockSize a power of two, at least 512 and at least the server's minimum block size
     * @return the open device, which the caller must close
     * @throws IllegalArgumentException if {@code blockSize} is not allowed
     * @throws java.net.ConnectException if the server cannot be reached
     * @throws NbdTlsException if the server requires TLS
     * @throws NbdNegotiationException if the server refuses the export, or its constraints do not fit
     *     the block size, or FUA was asked for and the server does not offer it
     * @throws IOException if connecting fails otherwise
     */
    public static NbdBlockDevice open(NbdExport export, int blockSize) throws IOException {
        return open(export, blockSize, -1, false);
    }

    /**
     * As {@link #open(NbdExport, int)}, but using only the first {@code capacity} bytes of the export.
     *
     * @param export the export and the options
     * @param blockSize a power of two, at least 512 and at least the server's minimum block size
     * @param capacity bytes, a positive multiple of {@code blockSize}, at most the export's size
     * @return the open device, which the caller must close
     * @throws NbdNegotiationException also if the export is smaller than {@code capacity}
     * @throws IOException as {@link #open(NbdExport, int)}
     */
    public static NbdBlockDevice open(NbdExport export, int blockSize, long capacity) throws IOException {
        if (capacity <= 0 || capacity % blockSize != 0) {
            throw new IllegalArgumentException("capacity " + capacity + " is not a positive multiple of the block"
                    + " size " + blockSize);
        }
        return open(export, blockSize, capacity, false);
    }

    /**
     * Connects to an export for reading only (fsck, stat): every write and discard is refused with
     * {@link ReadOnlyDeviceException}, a flush only counts, nothing is ever sent that changes the export.
     *
     * @param export the export and the options
     * @param blockSize a power of two, at least 512 and at least the server's minimum block size
     * @return the open device, which the caller must close
     * @throws IOException as {@link #open(NbdExport, int)}
     */
    public static NbdBlockDevice openReadOnly(NbdExport export, int blockSize) throws IOException {
        return open(export, blockSize, -1, true);
    }

    private static NbdBlockDevice open(NbdExport export, int blockSize, long capacity, boolean readOnly)
            throws IOException {
        Objects.requireNonNull(export, "export");
        if (blockSize < 512 || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a power of two of at least 512");
        }
        Set<Thread> own = ConcurrentHashMap.newKeySet();
        ThreadFactory factory = task -> {
            Thread thread = Thread.ofPlatform().daemon().unstarted(() -> {
                try {
                    task.run();
                } finally {
                    own.remove(Thread.currentThread());
                }
            });
            own.add(thread);
            return thread;
        };
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("iomap-nbd-timer").daemon().factory());
        NbdConnection first = null;
        try {
            first = NbdConnection.open(export, timer, factory, export.options().connectTimeout().toMillis());
            NbdSession agreed = first.session();
            checkFits(export, agreed, blockSize, capacity);
            long usable = capacity > 0 ? capacity : agreed.exportSize() / blockSize * blockSize;
            var device = new NbdBlockDevice(export, first, blockSize, usable, readOnly || agreed.readOnly(), own,
                    factory, timer);
            device.startWatchdog();
            return device;
        } catch (IOException | RuntimeException e) {
            if (first != null) {
                first.close();
            }
            timer.shutdownNow();
            throw e;
        }
    }

    /** Checks that the export takes requests of {@code blockSize} and has room for {@code capacity}. */
    private static void checkFits(NbdExport export, NbdSession session, int blockSize, long capacity)
            throws NbdNegotiationException {
        if (blockSize < session.minimumBlockSize() || blockSize > session.maximumPayload()) {
            throw new NbdNegotiationException(export + ": the server takes requests of " + session.minimumBlockSize()
                    + " to " + session.maximumPayload() + " bytes, which " + blockSize + "-byte blocks do not fit");
        }
        long needed = capacity > 0 ? capacity : blockSize;
        if (session.exportSize() < needed) {
            throw new NbdNegotiationException(export + ": the export has " + session.exportSize()
                    + " bytes, fewer than the " + needed + " needed");
        }
        if (export.options().forceUnitAccess() && !session.canForceUnitAccess()) {
            throw new NbdNegotiationException(export + ": fua=on was asked for, but the server does not offer"
                    + " NBD_CMD_FLAG_FUA (nbd-server: fua = true); leave fua off to make writes durable by flushes");
        }
    }

    /** @return the export, with the options it was opened with */
    public NbdExport export() {
        return export;
    }

    /** @return the block size given when opened; answers after close too */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the export's size (or the capacity given) in whole blocks; answers after close too */
    @Override
    public long capacity() {
        return capacity;
    }

    /** @return whether opened read-only, or the server marks the export read-only */
    @Override
    public boolean readOnly() {
        return readOnly;
    }

    /** @return the block size the server prefers ({@code NBD_INFO_BLOCK_SIZE}; 4096 if it gave none) */
    public int preferredBlockSize() {
        return session.preferredBlockSize();
    }

    /** @return whether the first handshake agreed on structured replies */
    public boolean structuredReplies() {
        return session.structuredReplies();
    }

    /** @return how many times the connection was made again after a drop, so far */
    public int reconnects() {
        synchronized (lock) {
            return reconnects;
        }
    }

    /** @return bytes of acknowledged, not yet flushed writes held to send again after a reconnect */
    public long replayLogBytes() {
        synchronized (lock) {
            return log.bytes();
        }
    }

    /** @return flushes the device sent on its own to keep its replay log within its limit */
    public long internalFlushes() {
        synchronized (lock) {
            return internalFlushes;
        }
    }

    /**
     * Reads {@code dst.remaining()} bytes at {@code offset} into {@code dst} and moves its position to
     * its limit, waiting in the calling thread (uninterruptibly, see the class comment) for the server.
     *
     * @param offset device byte offset, block aligned
     * @param dst a writable buffer whose remaining length is block aligned; written by the calling
     *     thread only, so it may be confined to it
     * @throws dev.iomap.device.DeviceRangeException if the range is not whole blocks inside the device
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @throws DeviceIoException if the server returns an error
     * @throws NbdConnectionLostException if the connection could not be made again within the window
     * @throws IOException if the device is closed
     */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("read: the destination buffer is read-only");
        }
        int length = dst.remaining();
        DeviceCounters.checkRequest("read", offset, length, blockSize, capacity);
        List<NbdRequest> pieces = new ArrayList<>();
        for (int at = 0; at < length; at += pieceBytes) {
            pieces.add(submit(new NbdRequest(NBD_CMD_READ, 0, offset + at, Math.min(pieceBytes, length - at),
                    List.of(), false)));
        }
        for (NbdRequest piece : pieces) {
            dst.put(NbdPieces.await(piece, export));
        }
        counters.countRead(length);
    }

    /**
     * Sends a write of the remaining bytes of {@code srcs}, one after the other, at {@code offset}. The
     * future completes normally once the server acknowledged all of it (visible to reads; durable after
     * a later {@link #flush()}, or at once with FUA), or exceptionally with {@link DeviceIoException}
     * (the server's error) or {@link NbdConnectionLostException}. Never throws: a closed device, a null
     * argument, a read-only device ({@link ReadOnlyDeviceException}) or a bad range is the returned
     * future's exception, and then nothing is counted; a write that passes those checks is counted at
     * once. Waits before sending while the replay log is over its limit (see the class comment), unless
     * called on one of the device's own threads.
     *
     * @param offset device byte offset, block aligned
     * @param srcs the data, whose total remaining length is block aligned; positions are not changed,
     *     and the buffers must not be changed until the future completes
     * @param purpose data or metadata, for the statistics
     * @return the completion
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            Objects.requireNonNull(purpose, "purpose");
            List<ByteBuffer> data = srcs.stream().map(ByteBuffer::duplicate).toList();
            ensureWritable("write to");
            long length = DeviceCounters.totalRemaining(data);
            DeviceCounters.checkRequest("write", offset, length, blockSize, capacity);
            awaitLogRoom();
            counters.countWrite(length, purpose);
            List<NbdRequest> pieces = new ArrayList<>();
            for (long at = 0; at < length; at += pieceBytes) {
                int bytes = (int) Math.min(pieceBytes, length - at);
                pieces.add(submit(new NbdRequest(NBD_CMD_WRITE, writeFlags(), offset + at, bytes,
                        NbdPieces.slice(data, at, bytes), false)));
            }
            return NbdPieces.allDone(pieces);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Makes every write whose future completed before this call durable: {@code NBD_CMD_FLUSH}, waited
     * for in the calling thread (uninterruptibly). With FUA, on a read-only device, or against a
     * server that offers no flush, there is nothing to send; the flush is only counted.
     *
     * @throws DeviceIoException if the server returns an error
     * @throws NbdConnectionLostException if the connection could not be made again within the window
     * @throws IOException if the device is closed
     */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        if (logging) {
            NbdRequest request = submit(new NbdRequest(NBD_CMD_FLUSH, 0, 0, 0, List.of(), false));
            NbdPieces.await(request, export);
        }
        counters.countFlush();
    }

    /**
     * Zeroes the range: {@code NBD_CMD_WRITE_ZEROES} (the server may deallocate it), or zeroes written
     * where the server does not offer that; later reads of it return zeroes. Waited for in the calling
     * thread (uninterruptibly). Counted as discarded bytes, not as bytes written.
     *
     * @param offset device byte offset, block aligned
     * @param length bytes, block aligned
     * @throws ReadOnlyDeviceException if the device is read-only
     * @throws dev.iomap.device.DeviceRangeException if the range is not whole blocks inside the device
     * @throws DeviceIoException if the server returns an error
     * @throws IOException if the device is closed
     */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        ensureWritable("discard in");
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity);
        awaitLogRoom();
        boolean zeroes = session.canWriteZeroes();
        ByteBuffer zero = zeroes ? null : ByteBuffer.allocate((int) Math.min(pieceBytes, length)).asReadOnlyBuffer();
        List<NbdRequest> pieces = new ArrayList<>();
        for (long at = 0; at < length; at += pieceBytes) {
            int bytes = (int) Math.min(pieceBytes, length - at);
            pieces.add(submit(zeroes
                    ? new NbdRequest(NBD_CMD_WRITE_ZEROES, writeFlags(), offset + at, bytes, List.of(), false)
                    : new NbdRequest(NBD_CMD_WRITE, writeFlags(), offset + at, bytes,
                            List.of(zero.duplicate().limit(bytes)), false)));
        }
        NbdPieces.awaitAll(pieces, export);
        counters.countDiscard(length);
    }

    /**
     * Tells the server the range's contents are no longer needed ({@code NBD_CMD_TRIM}): it may free
     * the space; until it is written again, reads of it may return anything. A server that does not
     * offer trim is not asked (a trim is only a hint). Counted as discarded bytes.
     *
     * @param offset device byte offset, block aligned
     * @param length bytes, block aligned
     * @throws ReadOnlyDeviceException if the device is read-only
     * @throws dev.iomap.device.DeviceRangeException if the range is not whole blocks inside the device
     * @throws DeviceIoException if the server returns an error
     * @throws IOException if the device is closed
     */
    public void trim(long offset, long length) throws IOException {
        ensureOpen();
        ensureWritable("trim in");
        DeviceCounters.checkRequest("trim", offset, length, blockSize, capacity);
        if (session.canTrim()) {
            List<NbdRequest> pieces = new ArrayList<>();
            for (long at = 0; at < length; at += pieceBytes) {
                int bytes = (int) Math.min(pieceBytes, length - at);
                pieces.add(submit(new NbdRequest(NBD_CMD_TRIM, writeFlags(), offset + at, bytes, List.of(), false)));
            }
            NbdPieces.awaitAll(pieces, export);
        }
        counters.countDiscard(length);
    }

    /** @return the counts so far; answers after close too */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /**
     * Waits for every request in flight (through a reconnect, if one is under way), flushes (unless
     * read-only), ends the session ({@code NBD_CMD_DISC}) and closes the connection. Idempotent: later
     * calls return at once. An interrupt of the waiting thread is kept and set again on return.
     *
     * @throws IllegalStateException if called on one of the device's own threads (a write-completion
     *     callback), which would wait for itself forever
     * @throws DeviceIoException if the final flush fails, or requests were still failing (the device
     *     is closed anyway)
     */
    @Override
    public void close() throws IOException {
        if (ownThreads.contains(Thread.currentThread())) {
            throw new IllegalStateException("close() of " + this + " called on its own thread; close it from"
                    + " another thread (attach the callback with an *Async method)");
        }
        synchronized (lock) {
            if (closing) {
                return;
            }
            closing = true;
        }
        IOException failure = null;
        try {
            drain();
            if (logging) {
                NbdRequest flush = submitInternal(new NbdRequest(NBD_CMD_FLUSH, 0, 0, 0, List.of(), true));
                NbdPieces.await(flush, export);
            }
        } catch (IOException e) {
            failure = new DeviceIoException("final flush of " + export + " failed: " + e.getMessage(), 0, capacity, e);
        } finally {
            NbdConnection last;
            synchronized (lock) {
                closed = true;
                last = connection;
                connection = null;
                lock.notifyAll();
            }
            if (last != null) {
                last.close();
            }
            timer.shutdownNow();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** @return the export, the geometry and whether it is read-only, for messages */
    @Override
    public String toString() {
        return "NbdBlockDevice[" + export + ", blockSize=" + blockSize + ", capacity=" + capacity
                + (export.options().forceUnitAccess() ? ", FUA" : "") + (readOnly ? ", read-only" : "") + "]";
    }

    private int writeFlags() {
        return export.options().forceUnitAccess() ? NBD_CMD_FLAG_FUA : 0;
    }

    /** Queues a caller's request; fails it at once if the device is closed or lost. */
    private NbdRequest submit(NbdRequest request) {
        synchronized (lock) {
            if (closing) {
                request.done.completeExceptionally(closedException());
                return request;
            }
            return submitInternal(request);
        }
    }

    /** Queues a request (also while closing); sends it if there is a connection, else it waits for one. */
    private NbdRequest submitInternal(NbdRequest request) {
        synchronized (lock) {
            if (lost != null) {
                request.done.completeExceptionally(lostFor(request));
                return request;
            }
            if (closed) {
                request.done.completeExceptionally(closedException());
                return request;
            }
            pending.add(request);
            if (connection != null) {
                send(connection, request);
            } else if (!reconnecting) {
                // idle when the last window passed, with nothing at stake: a request starts a new window
                startReconnect(new IOException(export + ": not connected"));
            }
            return request;
        }
    }

    /** Hands a request to a connection; under {@link #lock}. */
    private void send(NbdConnection on, NbdRequest request) {
        request.logMark = log.lastSequence();
        request.sends++;
        on.send(request).whenComplete((reply, error) -> answered(on, request, reply, error));
    }

    /** A connection answered a request, or failed before it did. */
    private void answered(NbdConnection on, NbdRequest request, NbdReply reply, Throwable error) {
        if (error != null) {
            connectionFailed(on, error instanceof IOException io ? io : new IOException(error));
            return;
        }
        if (reply.error() == ESHUTDOWN) {
            // The server is going away: the connection is given up and the request sent again on the next.
            connectionFailed(on, new IOException(export + ": the server is shutting down (ESHUTDOWN)"));
            return;
        }
        synchronized (lock) {
            if (on != connection || !pending.remove(request)) {
                return; // an answer on a connection already given up: the request was or will be sent again
            }
            if (reply.error() == 0) {
                acknowledged(request);
            }
            lock.notifyAll();
        }
        if (reply.error() != 0) {
            request.done.completeExceptionally(serverError(request, reply));
        } else {
            request.done.complete(reply.data());
        }
    }

    /** Keeps the replay log; under {@link #lock}. */
    private void acknowledged(NbdRequest request) {
        if (!logging) {
            return;
        }
        if (request.writes()) {
            log.add(request);
        } else if (request.command == NBD_CMD_FLUSH) {
            log.dropThrough(request.logMark);
            if (request.internal) {
                logFlushInFlight = false;
            }
        }
        if (log.bytes() > export.options().replayLimitBytes() && !logFlushInFlight && !closed) {
            logFlushInFlight = true;
            internalFlushes++;
            submitInternal(new NbdRequest(NBD_CMD_FLUSH, 0, 0, 0, List.of(), true));
        }
    }

    /** Writers wait while the replay log is over its limit, unless they are the device's own threads. */
    private void awaitLogRoom() throws IOException {
        if (!logging || ownThreads.contains(Thread.currentThread())) {
            return;
        }
        boolean interrupted = false;
        synchronized (lock) {
            while (log.bytes() > export.options().replayLimitBytes() && logFlushInFlight && lost == null
                    && !closed) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private IOException serverError(NbdRequest request, NbdReply reply) {
        String what = "the NBD server answered " + request + " of " + export + " with "
                + errorName(reply.error()) + (reply.message() == null || reply.message().isEmpty() ? ""
                        : " (" + reply.message() + ")");
        if (reply.error() == EPERM && request.writes()) {
            return new ReadOnlyDeviceException(what + ": the export does not take writes");
        }
        return new DeviceIoException(what, request.offset, request.length, null);
    }

    /**
     * A connection died: if it is the live one, the device starts connecting again (once).
     *
     * @param on the connection
     * @param cause why
     */
    private void connectionFailed(NbdConnection on, IOException cause) {
        on.abort(cause);
        synchronized (lock) {
            if (on != connection) {
                return;
            }
            connection = null;
            if (!reconnecting) {
                startReconnect(cause);
            }
        }
    }

    /** Starts the thread that connects again, within a window from now; under {@link #lock}. */
    private void startReconnect(IOException cause) {
        reconnecting = true;
        long deadline = System.nanoTime() + export.options().reconnectWindow().toNanos();
        Thread reconnect = threads.newThread(() -> reconnect(deadline, cause));
        reconnect.setName("iomap-nbd-reconnect-" + export.host() + ":" + export.port());
        reconnect.start();
    }

    /** Connects again until {@code deadline}, replays the log, resends what waits; or fails it all. */
    private void reconnect(long deadline, IOException firstCause) {
        IOException last = firstCause;
        long backoffMillis = 50;
        while (true) {
            synchronized (lock) {
                if (closed) {
                    giveUp(last);
                    return;
                }
            }
            NbdConnection fresh = null;
            try {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                fresh = NbdConnection.open(export, timer, threads,
                        Math.clamp(left, 1, export.options().connectTimeout().toMillis()));
                checkSameExport(fresh.session());
                List<ReplayLog.Entry> unflushed;
                synchronized (lock) {
                    unflushed = log.entries();
                }
                ReplayLog.replay(unflushed, fresh, export);
                if (resume(fresh)) {
                    return;
                }
            } catch (IOException e) {
                last = e;
                if (fresh != null) {
                    fresh.abort(e);
                }
            }
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                giveUp(last);
                return;
            }
            sleepQuietly(Math.min(backoffMillis, left));
            backoffMillis = Math.min(backoffMillis * 2, 1000);
        }
    }

    private void checkSameExport(NbdSession fresh) throws NbdNegotiationException {
        if (fresh.exportSize() < capacity || (fresh.readOnly() && !readOnly)
                || fresh.minimumBlockSize() > blockSize || fresh.maximumPayload() < pieceBytes) {
            throw new NbdNegotiationException(export + ": after reconnecting, the export is not the one this device"
                    + " was opened on (" + fresh.exportSize() + " bytes" + (fresh.readOnly() ? ", read-only" : "")
                    + ", requests of " + fresh.minimumBlockSize() + " to " + fresh.maximumPayload() + " bytes)");
        }
    }

    /** Makes {@code fresh} the live connection and sends every waiting request on it, in order. */
    private boolean resume(NbdConnection fresh) {
        synchronized (lock) {
            if (closed) {
                fresh.close();
                return false;
            }
            connection = fresh;
            reconnecting = false;
            reconnects++;
            // A copy: an answer that comes at once is handled in this thread and removes its request.
            for (NbdRequest request : List.copyOf(pending)) {
                send(fresh, request);
            }
            lock.notifyAll();
            return true;
        }
    }

    /**
     * The window passed (or the device closed while reconnecting): everything waiting fails, and the
     * device is lost for good, unless nothing was at stake (no request waited and no acknowledged write
     * awaited a flush): then it stays unconnected, and the next request starts a new window.
     */
    private void giveUp(IOException cause) {
        List<NbdRequest> waiting;
        synchronized (lock) {
            reconnecting = false;
            if (pending.isEmpty() && log.size() == 0 && !closed) {
                return;
            }
            if (!closed) {
                lost = "the connection to " + export + " was lost and not made again within "
                        + export.options().reconnectWindow().toMillis() + " ms (last error: " + cause.getMessage() + ")";
                lostCause = cause;
            }
            waiting = List.copyOf(pending);
            pending.clear();
            lock.notifyAll();
        }
        for (NbdRequest request : waiting) {
            request.done.completeExceptionally(lost != null ? lostFor(request) : closedException());
        }
    }

    /** @return the device's loss as it concerns one request; under {@link #lock} or after it is set */
    private NbdConnectionLostException lostFor(NbdRequest request) {
        long length = request.command == NBD_CMD_FLUSH ? capacity : request.length;
        return new NbdConnectionLostException(request + ": " + lost, request.offset, length, lostCause);
    }

    /** Waits until no request is pending (answered, or failed when the window passed). */
    private void drain() {
        boolean interrupted = false;
        synchronized (lock) {
            while (!pending.isEmpty()) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void startWatchdog() {
        long period = Math.clamp(export.options().replyTimeout().toMillis() / 4, 10, 1000);
        timer.scheduleWithFixedDelay(this::watch, period, period, TimeUnit.MILLISECONDS);
    }

    /** Takes a connection that died idle, or whose oldest request waits past the reply timeout, for dead. */
    private void watch() {
        NbdConnection live;
        synchronized (lock) {
            live = connection;
        }
        if (live == null) {
            return;
        }
        IOException failure = live.failure();
        if (failure == null && live.longestWaitNanos(System.nanoTime())
                > export.options().replyTimeout().toNanos()) {
            failure = new IOException(export + ": no reply within " + export.options().replyTimeout().toMillis()
                    + " ms");
        }
        if (failure != null) {
            connectionFailed(live, failure);
        }
    }

    private void ensureOpen() throws IOException {
        synchronized (lock) {
            if (closing) {
                throw closedException();
            }
        }
    }

    private void ensureWritable(String operation) throws ReadOnlyDeviceException {
        if (readOnly) {
            throw new ReadOnlyDeviceException(operation + " " + export + " refused: the device is read-only");
        }
    }

    private IOException closedException() {
        return new IOException(this + " is closed");
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
