package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceBusyException;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceNoSpaceException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.device.SyncSubmit;
import dev.iomap.api.NotSupportedException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A block device backed by a file, read and written with positional {@link FileChannel} calls.
 *
 * <p>A read, flush or discard runs in the calling thread, with no thread switch (on a small virtual
 * machine two switches cost as much as the disk's flush). An interrupt of the calling thread neither
 * cuts the call short nor is lost: its interrupt status is set on return. An interrupt that arrives
 * inside a {@link FileChannel} call closes the channel, as it always does; the device then opens the
 * file again and repeats the calls it cut short (see {@code IoChannel}), so an interrupt never breaks
 * the device. These calls never queue behind writes, so one made from a write-completion callback
 * cannot deadlock (though, like any blocking callback, it holds up the writes queued behind it).
 *
 * <p>Writes run on at most {@value #BUFFERED_WRITE_THREADS} threads named {@code iomap-file-io-N}
 * ({@value #DIRECT_WRITE_THREADS} with {@code O_DIRECT}, where each write waits for the disk, so that
 * that many large writes are in flight at once; the system property {@value #WRITE_THREADS_PROPERTY}
 * sets another count for both, for measurements); the returned future completes
 * on one of them, so callbacks attached with the non-async {@link CompletableFuture} methods run
 * there too and must not block (use the {@code *Async} variants for that). A write issued under
 * {@link SyncSubmit#run} (an fsync's writeback, which waits for it at once) is done in the calling
 * thread instead, like a read, and returns a completed future: no thread switch to start it, none to
 * report its end (the system property {@value #INLINE_SYNC_WRITES_PROPERTY}{@code =false} turns that
 * off, for measurements). Writes in flight at the
 * same time are not ordered with respect to each other; wait for one before issuing another to the
 * same range. As the write threads read the caller's buffers, those must be readable from any
 * thread: memory of a confined {@link Arena} is not, and a write from it fails with
 * {@link WrongThreadException}.
 *
 * <p>Thread-safe: any number of reads, writes and discards may run at once, with no device-wide lock.
 * Concurrent operations on overlapping ranges are not atomic with respect to each other.
 *
 * <p>With direct I/O ({@code O_DIRECT}) the page cache is bypassed. The block size must then be a
 * multiple of the filesystem's I/O alignment (its block size, at least 512). A caller's buffer is
 * used as it is if it is a direct buffer whose address and remaining length are multiples of that
 * alignment; any other buffer is copied through an aligned bounce buffer. A write of several such
 * buffers (an ioend of several folios) goes out as one gathering write ({@code pwritev}, through a
 * descriptor of the device's own; Linux) straight from them, or, where that is not at hand, copied
 * through the bounce buffer in requests of up to 1 MiB; the system property
 * {@value #GATHERING_WRITES_PROPERTY}{@code =false} asks for the copy, for measurements.
 *
 * <p>Bad requests (negative, unaligned, overflowing or past the end) get
 * {@link DeviceRangeException}; see {@link DeviceCounters#checkRequest}. Null arguments get
 * {@link NullPointerException} (for a write: as the future's exception). I/O errors are
 * {@link DeviceIoException}s naming the range and the file; a write or flush the host refuses because
 * its filesystem is full (ENOSPC) is a {@link DeviceNoSpaceException}, and the first of a run of them
 * is logged in one line (a write that succeeds ends the run).
 *
 * <p><b>Exclusive images.</b> A device opened for writing ({@link #open}) holds the whole backing
 * file under an exclusive lock, a read-only device ({@link #openReadOnly}) under a shared one, from
 * the open until {@link #close()}: any number of read-only devices may have a file open at once
 * ({@code fsck}, {@code stat}), but a device for writing has it alone (a mount, {@code mkfs}), and
 * an open that conflicts, from this process or another, fails at once with
 * {@link DeviceBusyException}, one line naming the file and whether the holder writes. On Linux the
 * lock is an open file description lock ({@code F_OFD_SETLK}), as virtual machine monitors lock
 * disk images: it belongs to a descriptor the device keeps for it, so two devices in one process
 * conflict like two processes, and closing some other channel on the file does not drop it.
 * Elsewhere it is a {@link java.nio.channels.FileLock}, with the weaknesses of an fcntl record lock;
 * see {@code ImageLock}. Either way the lock is advisory: it keeps out other iomap4j devices (and
 * programs that lock images the same way), not a program that writes the file without asking.
 * The nodes of a cluster filesystem open one image with {@link #openShared}: they share it for
 * writing with each other only.
 *
 * <p>A read-only device opens the file for reading only and refuses every write and discard (and
 * {@link #resize}) with {@link ReadOnlyDeviceException}; its {@link #readOnly()} is true. A flush
 * has nothing to make durable and only counts.
 *
 * <p>After {@link #close()} every read, write, flush and discard fails with {@link IOException}
 * (for a write: as the future's exception); {@link #blockSize()}, {@link #capacity()} and
 * {@link #stats()} still answer.
 */
public final class FileBlockDevice implements BlockDevice {
    private static final System.Logger LOG = System.getLogger(FileBlockDevice.class.getName());
    /** Bytes of zeroes a discard writes at a time, unless a block is larger. */
    private static final int ZEROES_SIZE = 1 << 16;

    private final Path path;
    /** The channel reads, writes, flushes and discards go through, opened again after an interrupt. */
    private final IoChannel channel;
    /**
     * The channel opened first, which created or extended the file and which a fallback lock is
     * taken on; never used for I/O, so an interrupt never closes it.
     */
    private final FileChannel lockChannel;
    private final ImageLock lock;
    private final int blockSize;
    private final long capacity;
    /** What {@code O_DIRECT} needs of memory, positions and lengths; 0 without it. */
    private final int directIoAlignment;
    /** Aligned direct zeroes for discards; shared, so only ever used through duplicates. */
    private final ByteBuffer zeroes;
    /** Write threads of a buffered device: its writes only copy into the host's page cache. */
    static final int BUFFERED_WRITE_THREADS = 2;
    /** Write threads of an {@code O_DIRECT} device: each write waits for the disk. */
    static final int DIRECT_WRITE_THREADS = 4;
    /**
     * System property that, set to {@code false}, sends the writes of several buffers through the
     * bounce buffer instead of one gathering write ({@code VectoredWrites}), for A/B measurements.
     */
    static final String GATHERING_WRITES_PROPERTY = "iomap.file.gatheringWrites";
    /** System property that overrides both counts (a positive integer). */
    static final String WRITE_THREADS_PROPERTY = "iomap.file.writeThreads";

    private final DeviceThreads threads;
    private final DeviceCounters counters = new DeviceCounters();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** System property that, set to {@code false}, sends every write to the write threads (for A/B measurements). */
    static final String INLINE_SYNC_WRITES_PROPERTY = "iomap.file.inlineSyncWrites";
    /** Whether writes issued under {@link SyncSubmit#run} run in the caller's thread. */
    private final boolean inlineSyncWrites =
            !"false".equalsIgnoreCase(System.getProperty(INLINE_SYNC_WRITES_PROPERTY));
    /** Writes done in the caller's thread, for tests. */
    private final LongAdder inlineWrites = new LongAdder();
    /** Concurrent flushes share a sync (group commit). */
    private final FlushBatch flushes = new FlushBatch();
    /**
     * Whether the last write or flush failed because the host filesystem is full: the first such
     * failure of an episode is logged, in one line; a write that succeeds ends the episode.
     */
    private final AtomicBoolean hostFull = new AtomicBoolean();

    /**
     * @param directIoAlignment what {@code O_DIRECT} needs of memory, positions and lengths, if the
     *     channel was opened with it; 0 if not
     */
    private FileBlockDevice(Path path, IoChannel channel, Locked locked, int blockSize,
            long capacity, int directIoAlignment) {
        this.path = path;
        this.channel = channel;
        this.lockChannel = locked.channel();
        this.lock = locked.lock();
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.directIoAlignment = directIoAlignment;
        this.threads = new DeviceThreads("iomap-file-io-", Integer.getInteger(
                WRITE_THREADS_PROPERTY, directIoAlignment != 0 ? DIRECT_WRITE_THREADS : BUFFERED_WRITE_THREADS));
        int zeroesSize = Math.max(ZEROES_SIZE, blockSize);
        this.zeroes = Arena.ofAuto()
                .allocate(zeroesSize, Math.max(directIoAlignment, 8))
                .asByteBuffer();
    }

    /**
     * Opens a device of {@code capacity} bytes on {@code path}, creating the file if it does not
     * exist and extending it (sparsely: only its last byte is written) if it is shorter. A longer
     * file is left as it is; the device uses its first {@code capacity} bytes. The file is created or
     * extended before direct I/O is tried, so it remains if direct I/O is refused; it is neither
     * created nor extended if it is busy.
     *
     * @param path the backing file
     * @param blockSize a power of two, at least 512
     * @param capacity bytes, a positive multiple of {@code blockSize}
     * @param directIo whether to bypass the page cache ({@code O_DIRECT})
     * @return the open device, which the caller must close
     * @throws IllegalArgumentException if {@code blockSize} or {@code capacity} is not allowed
     * @throws NotSupportedException if {@code directIo} is asked for and the filesystem of
     *     {@code path} does not support it, or not with blocks of {@code blockSize} bytes
     * @throws DeviceBusyException if another device, in this process or another, has the file open
     * @throws IOException if the file cannot be created, extended or opened
     */
    public static FileBlockDevice open(Path path, int blockSize, long capacity, boolean directIo)
            throws IOException {
        DeviceCounters.checkGeometry(blockSize, capacity);
        Locked locked = Locked.open(path, false, StandardOpenOption.CREATE);
        try {
            if (locked.channel().size() < capacity) {
                new PositionalIo(locked.channel(), 0).write(capacity - 1, ByteBuffer.allocate(1));
            }
            return openChannel(path, locked, blockSize, capacity, directIo);
        } catch (IOException | RuntimeException e) {
            locked.closeAfterFailure(e);
            throw e;
        }
    }

    /**
     * Opens a device on an existing file for reading and writing, as large as the file, holding
     * it exclusively.
     *
     * @param path the backing file, whose size is a positive multiple of {@code blockSize}
     * @param blockSize a power of two, at least 512
     * @param directIo whether to bypass the page cache ({@code O_DIRECT})
     * @return the open device, which the caller must close
     * @throws IllegalArgumentException if {@code blockSize} is not allowed
     * @throws DeviceRangeException if the file is empty or not a whole number of blocks
     * @throws NotSupportedException if {@code directIo} is asked for and the filesystem of
     *     {@code path} does not support it, or not with blocks of {@code blockSize} bytes
     * @throws DeviceBusyException if another device, in this process or another, has the file open
     * @throws IOException if the file does not exist or cannot be opened
     */
    public static FileBlockDevice open(Path path, int blockSize, boolean directIo)
            throws IOException {
        return openExisting(path, blockSize, directIo, false);
    }

    /**
     * Opens a device on an existing file for reading only, as large as the file, sharing it with
     * other read-only devices: {@code fsck} and {@code stat} open images this way. Every write and
     * discard fails with {@link ReadOnlyDeviceException}; the file is never changed.
     *
     * @param path the backing file, whose size is a positive multiple of {@code blockSize}
     * @param blockSize a power of two, at least 512
     * @param directIo whether to bypass the page cache ({@code O_DIRECT})
     * @return the open device, which the caller must close
     * @throws IllegalArgumentException if {@code blockSize} is not allowed
     * @throws DeviceRangeException if the file is empty or not a whole number of blocks
     * @throws NotSupportedException if {@code directIo} is asked for and the filesystem of
     *     {@code path} does not support it, or not with blocks of {@code blockSize} bytes
     * @throws DeviceBusyException if a device for writing, in this process or another, has the
     *     file open
     * @throws IOException if the file does not exist or cannot be opened
     */
    public static FileBlockDevice openReadOnly(Path path, int blockSize, boolean directIo)
            throws IOException {
        return openExisting(path, blockSize, directIo, true);
    }

    /**
     * Opens a device on an existing file for reading and writing, as large as the file, shared with the
     * other nodes of a cluster filesystem that open it this way, in this process or another (gfs2-like
     * mounted with {@code --cluster}: the filesystem's cluster locks keep the nodes coherent), and with
     * nobody else: a device opened by {@link #open} or {@link #openReadOnly} conflicts with it either way
     * (see {@code ImageLock}). The nodes should open it with {@code directIo}, so that none reads from the
     * host's page cache what another node has since overwritten through another descriptor.
     *
     * @param path the backing file, whose size is a positive multiple of {@code blockSize}
     * @param blockSize a power of two, at least 512
     * @param directIo whether to bypass the page cache ({@code O_DIRECT})
     * @return the open device, which the caller must close
     * @throws IllegalArgumentException if {@code blockSize} is not allowed
     * @throws DeviceRangeException if the file is empty or not a whole number of blocks
     * @throws NotSupportedException if {@code directIo} is asked for and the filesystem of {@code path}
     *     does not support it, or where open file description locks are not available (not Linux)
     * @throws DeviceBusyException if a device that is not a cluster node's has the file open
     * @throws IOException if the file does not exist or cannot be opened
     */
    public static FileBlockDevice openShared(Path path, int blockSize, boolean directIo) throws IOException {
        return openExisting(path, blockSize, directIo, false, true);
    }

    private static FileBlockDevice openExisting(Path path, int blockSize, boolean directIo,
            boolean readOnly) throws IOException {
        return openExisting(path, blockSize, directIo, readOnly, false);
    }

    private static FileBlockDevice openExisting(Path path, int blockSize, boolean directIo,
            boolean readOnly, boolean clusterMember) throws IOException {
        DeviceCounters.checkBlockSize(blockSize);
        long size = Files.size(path);
        if (size == 0 || size % blockSize != 0) {
            throw new DeviceRangeException("file " + path + " is " + size
                    + " bytes long, not a positive multiple of the block size " + blockSize);
        }
        Locked locked = clusterMember ? Locked.openClusterMember(path)
                : Locked.open(path, readOnly, StandardOpenOption.READ);
        try {
            return openChannel(path, locked, blockSize, size, directIo);
        } catch (IOException | RuntimeException e) {
            locked.closeAfterFailure(e);
            throw e;
        }
    }

    /**
     * A channel on the file and the lock on it: together from the open until the device closes.
     *
     * @param channel read-only for a shared lock, read-write for an exclusive one
     * @param lock shared exactly if the channel is read-only
     */
    private record Locked(FileChannel channel, ImageLock lock) {

        /**
         * Opens {@code path} (for reading only if {@code readOnly}) and locks the whole file, shared
         * if {@code readOnly}, else exclusively.
         *
         * @param extra {@link StandardOpenOption#CREATE} to create a missing file (not with
         *     {@code readOnly})
         * @throws DeviceBusyException if a conflicting lock is held, by this process or another
         */
        static Locked open(Path path, boolean readOnly, StandardOpenOption extra) throws IOException {
            FileChannel channel = readOnly
                    ? FileChannel.open(path, StandardOpenOption.READ, extra)
                    : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, extra);
            try {
                return new Locked(channel, ImageLock.acquire(path, channel, readOnly));
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        }

        /** Opens {@code path} for reading and writing under a cluster member's lock. */
        static Locked openClusterMember(Path path) throws IOException {
            FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            try {
                return new Locked(channel, ImageLock.acquireClusterMember(path));
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        }

        boolean readOnly() {
            return lock.isShared();
        }

        /** Closes the channel, then releases the lock; a failure of either is added to {@code e}. */
        void closeAfterFailure(Exception e) {
            try (lock; channel) {
                // closed in reverse order: the channel first
            } catch (IOException | RuntimeException closing) {
                e.addSuppressed(closing);
            }
        }
    }

    /**
     * Opens the channel the device does its I/O through, beside the locked one (which only holds the
     * lock, so that an interrupt closing the I/O channel never drops it).
     */
    private static FileBlockDevice openChannel(Path path, Locked locked, int blockSize,
            long capacity, boolean directIo) throws IOException {
        OpenOption[] access = locked.readOnly()
                ? new OpenOption[] {StandardOpenOption.READ}
                : new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE};
        if (!directIo) {
            IoChannel channel = new IoChannel(path, FileChannel.open(path, access), 0, null, access);
            return new FileBlockDevice(path, channel, locked, blockSize, capacity, 0);
        }
        int alignment = directIoAlignment(path, blockSize);
        OpenOption[] options = Arrays.copyOf(access, access.length + 1);
        options[access.length] = directOpenOption();
        FileChannel channel;
        try {
            channel = FileChannel.open(path, options);
        } catch (AccessDeniedException | NoSuchFileException e) {
            throw e;
        } catch (IOException | UnsupportedOperationException e) {
            var notSupported = new NotSupportedException(
                    "the filesystem of " + path + " does not support direct I/O (O_DIRECT): " + e);
            notSupported.initCause(e);
            throw notSupported;
        }
        VectoredWrites vectored = locked.readOnly() || "false".equalsIgnoreCase(
                System.getProperty(GATHERING_WRITES_PROPERTY)) ? null : VectoredWrites.open(path, alignment);
        return new FileBlockDevice(path, new IoChannel(path, channel, alignment, vectored, options), locked,
                blockSize, capacity, alignment);
    }

    /**
     * @return O_DIRECT, {@code com.sun.nio.file.ExtendedOpenOption.DIRECT} (module jdk.unsupported),
     *     looked up by name: javac warns about every compile-time use of that internal API, and the
     *     build fails on warnings
     * @throws UnsupportedOperationException if this JDK has no such option
     */
    private static OpenOption directOpenOption() {
        try {
            return (OpenOption) Class.forName("com.sun.nio.file.ExtendedOpenOption")
                    .getField("DIRECT").get(null);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new UnsupportedOperationException("this JDK has no ExtendedOpenOption.DIRECT", e);
        }
    }

    /** @return the filesystem's direct I/O alignment, which {@code blockSize} must be a multiple of */
    private static int directIoAlignment(Path path, int blockSize) throws IOException {
        long alignment;
        try {
            alignment = Math.max(512, Files.getFileStore(path).getBlockSize());
        } catch (UnsupportedOperationException e) {
            alignment = 512;
        }
        if (alignment > blockSize || blockSize % alignment != 0) {
            throw new NotSupportedException("direct I/O on " + path + " needs a block size that is a"
                    + " multiple of the filesystem's " + alignment + "-byte blocks; this device"
                    + " has " + blockSize + "-byte blocks");
        }
        return (int) alignment;
    }

    /** @return the block size given when opened; answers after close too */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return the capacity given, or the file's size, when opened; answers after close too */
    @Override
    public long capacity() {
        return capacity;
    }

    /** @return the backing file */
    public Path path() {
        return path;
    }

    /** @return whether the device bypasses the page cache ({@code O_DIRECT}) */
    public boolean directIo() {
        return directIoAlignment != 0;
    }

    /**
     * @return whether the device was opened read-only ({@link #openReadOnly}), sharing the file with
     *     other read-only devices and refusing writes; answers after close too
     */
    @Override
    public boolean readOnly() {
        return lock.isShared();
    }

    /**
     * Reads {@code dst.remaining()} bytes at {@code offset} into {@code dst} and moves its position to
     * its limit, in the calling thread, even if interrupted (see the class comment). On an I/O error {@code dst}'s position and content are
     * unspecified; on a bad range they are unchanged.
     *
     * @param offset device byte offset, block aligned
     * @param dst a writable buffer whose remaining length is block aligned
     * @throws DeviceRangeException if the range is not whole blocks inside the device
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @throws DeviceIoException if the file cannot be read, or ends before the range does
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
        int start = dst.position();
        inCaller("read from", offset, length, (io, file) -> {
            io.read(offset, dst.position(start));
            return null;
        });
        counters.countRead(length);
    }

    /**
     * Queues a write of the remaining bytes of {@code srcs}, one after the other, at {@code offset}
     * (or, under {@link SyncSubmit#run}, does it in the calling thread, even if interrupted, and
     * returns it completed). The future completes normally once the bytes are in the file (visible to reads, not yet
     * durable), or exceptionally with {@link DeviceIoException} if writing them failed. Never throws:
     * a closed device, a null argument, a read-only device ({@link ReadOnlyDeviceException}) or a
     * bad range is the returned future's exception, and then nothing is counted. A write that passes those checks is counted at once, before it is queued,
     * so that {@link #stats()} includes every write whose future has completed; it stays counted if
     * it then fails (including one that races {@link #close()} and is refused).
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
            var done = new CompletableFuture<Void>();
            counters.countWrite(length, purpose);
            if (inlineSyncWrites && SyncSubmit.callerWaits()) {
                writeAndComplete(offset, length, data, done);
                inlineWrites.increment();
            } else {
                threads.write(() -> writeAndComplete(offset, length, data, done));
            }
            return done;
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(closedException(e));
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** @return whether writes of several aligned buffers go out as gathering direct writes, for tests */
    boolean gathers() {
        return channel.gathers();
    }

    /** @return how many gathering direct writes ({@code pwritev} calls) were made so far, for tests */
    long gatheringWrites() {
        return channel.gatheringWrites();
    }

    /** @return how many writes ran in their caller's thread ({@link SyncSubmit}) so far */
    long inlineWrites() {
        return inlineWrites.sum();
    }

    /**
     * Makes every write whose future completed before this call durable ({@code fdatasync}), in the
     * calling thread, even if interrupted (see the class comment). Concurrent flushes share syncs: one
     * that started after this call began is enough (see {@code FlushBatch}); every call is counted. On a
     * read-only device there is nothing to make durable: the flush is only counted.
     *
     * @throws DeviceIoException if the file cannot be synced
     * @throws IOException if the device is closed
     */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        if (!readOnly()) {
            flushes.flush(() -> inCaller("flush of", 0, capacity, (io, file) -> {
                file.force(false);
                return null;
            }));
        }
        counters.countFlush();
    }

    /**
     * Writes zeroes over the range, in the calling thread,
     * even if interrupted (see the class comment); later reads of it return zeroes. Counted as
     * discarded bytes, not as bytes written. Not ordered with respect to writes in flight.
     *
     * @param offset device byte offset, block aligned
     * @param length bytes, block aligned
     * @throws ReadOnlyDeviceException if the device is read-only
     * @throws DeviceRangeException if the range is not whole blocks inside the device
     * @throws DeviceIoException if the zeroes cannot be written
     * @throws IOException if the device is closed
     */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        ensureWritable("discard in");
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity);
        inCaller("discard in", offset, length, (io, file) -> {
            writeZeroes(io, offset, length);
            return null;
        });
        counters.countDiscard(length);
    }

    /** @return the counts so far; answers after close too */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /**
     * Waits for every queued write to finish, syncs the file (unless read-only), closes it and
     * releases its lock. Idempotent: later calls return at once. If the calling thread is interrupted while waiting, it keeps waiting and the
     * interrupt is re-asserted on return.
     *
     * @throws IllegalStateException if called from a write-completion callback running on one of
     *     the device's own threads, which would wait for itself forever
     * @throws DeviceIoException if the final sync or the close fails (the device is closed anyway)
     */
    @Override
    public void close() throws IOException {
        if (threads.isWriteThread(Thread.currentThread())) {
            throw new IllegalStateException("close() of " + this + " called on its own write thread;"
                    + " close it from another thread (attach the callback with an *Async method)");
        }
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        threads.shutdown();
        try (lock; lockChannel) {
            try {
                if (!readOnly()) {
                    channel.call((io, file) -> {
                        file.force(false);
                        return null;
                    });
                }
            } finally {
                channel.close();
            }
        } catch (IOException e) {
            throw new DeviceIoException("final sync of " + path + " failed: " + e, 0, capacity, e);
        }
    }

    /**
     * Hands the file, still locked, to a new device of {@code blockSize} and {@code capacity}, and
     * sets the file's length to exactly {@code capacity} (cutting a longer file, extending a shorter
     * one sparsely). This device waits for its queued writes and is then closed, as by
     * {@link #close()}, but the file stays open and locked for the new device: no other user can
     * take it in between. {@code mkfs} uses it to look at an image before it resizes it.
     *
     * @param blockSize a power of two, at least 512
     * @param capacity bytes, a positive multiple of {@code blockSize}
     * @return the new device, which the caller must close
     * @throws IllegalArgumentException if {@code blockSize} or {@code capacity} is not allowed
     * @throws NotSupportedException if this device uses direct I/O
     * @throws ReadOnlyDeviceException if this device is read-only (it stays open)
     * @throws IOException if this device is closed, or the file cannot be synced or resized (this
     *     device is closed then, and the lock released)
     */
    public FileBlockDevice resize(int blockSize, long capacity) throws IOException {
        DeviceCounters.checkGeometry(blockSize, capacity);
        if (directIo()) {
            throw new NotSupportedException("resize of " + this + ": not with direct I/O");
        }
        ensureWritable("resize of");
        if (!closed.compareAndSet(false, true)) {
            throw closedException(null);
        }
        threads.shutdown();
        Locked locked = new Locked(lockChannel, lock);
        try {
            channel.close();
            lockChannel.force(false);
            if (lockChannel.size() > capacity) {
                lockChannel.truncate(capacity);
            } else if (lockChannel.size() < capacity) {
                new PositionalIo(lockChannel, 0).write(capacity - 1, ByteBuffer.allocate(1));
            }
            return openChannel(path, locked, blockSize, capacity, false);
        } catch (IOException | RuntimeException e) {
            locked.closeAfterFailure(e);
            throw e;
        }
    }

    /** @return the file, the geometry, whether it uses O_DIRECT and is read-only, for messages */
    @Override
    public String toString() {
        return "FileBlockDevice[" + path + ", blockSize=" + blockSize + ", capacity=" + capacity
                + (directIo() ? ", O_DIRECT" : "") + (readOnly() ? ", read-only" : "") + "]";
    }

    private void writeAndComplete(long offset, long length, List<ByteBuffer> data,
            CompletableFuture<Void> done) {
        try {
            channel.call((io, file) -> {
                // fresh duplicates each time: a write an interrupt cut short is written again whole
                io.write(offset, data.stream().map(ByteBuffer::duplicate).toList());
                return null;
            });
            if (hostFull.get()) {
                hostFull.set(false);
            }
            done.complete(null);
        } catch (IOException e) {
            done.completeExceptionally(ioError("write to", offset, length, e));
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        } catch (Error e) {
            done.completeExceptionally(e);
            throw e;
        }
    }

    /**
     * Runs {@code call} in the calling thread through {@link IoChannel#call} (which keeps the
     * caller's interrupt from breaking the channel). Its {@link IOException} is wrapped as
     * {@link #ioError} does.
     *
     * @param operation what the call does to the file, for the message of an I/O error
     */
    private <T> T inCaller(String operation, long offset, long length, IoChannel.Call<T> call)
            throws IOException {
        try {
            return channel.call(call);
        } catch (IOException e) {
            throw ioError(operation, offset, length, e);
        }
    }

    private void writeZeroes(PositionalIo io, long offset, long length) throws IOException {
        long position = offset;
        long end = offset + length;
        while (position < end) {
            ByteBuffer piece = zeroes.duplicate();
            piece.limit((int) Math.min(piece.capacity(), end - position));
            int bytes = piece.remaining();
            io.write(position, piece);
            position += bytes;
        }
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw closedException(null);
        }
    }

    /** @param operation what was refused, e.g. {@code "write to"} */
    private void ensureWritable(String operation) throws ReadOnlyDeviceException {
        if (readOnly()) {
            throw new ReadOnlyDeviceException(operation + " " + path + " refused: the device is open"
                    + " read-only");
        }
    }

    private IOException closedException(Throwable cause) {
        return new IOException(this + " is closed", cause);
    }

    /**
     * Wraps an I/O error; one caused by {@link #close()} racing the operation says so instead, and one
     * because the host filesystem is full is a {@link DeviceNoSpaceException}.
     */
    private IOException ioError(String operation, long offset, long length, IOException e) {
        if (e instanceof ClosedChannelException && closed.get()) {
            return closedException(e);
        }
        if (isHostNoSpace(e)) {
            if (hostFull.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, path + ": the host filesystem holding the image is full;"
                        + " writes to the image fail with ENOSPC until it has space again");
            }
            return new DeviceNoSpaceException(operation + " " + path + " failed: the host filesystem holding it"
                    + " is full (" + e.getMessage() + ")", offset, length, e);
        }
        return new DeviceIoException(operation + " " + path + " failed: " + e, offset, length, e);
    }

    /**
     * @return whether {@code e} is the host's ENOSPC: the JDK words it with the C library's message,
     *     {@link VectoredWrites} with the errno's name
     */
    static boolean isHostNoSpace(IOException e) {
        String message = e.getMessage();
        return message != null && (message.contains("No space left on device") || message.contains("(ENOSPC"));
    }
}
