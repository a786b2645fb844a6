package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Sets the reply flags that libfuse 3.14 cannot: it builds the INIT reply only from the capabilities it
 * knows, and open and create replies only from the bits of its {@code fuse_file_info}. So the session
 * writes its replies through a custom I/O ({@code fuse_session_custom_io}): libc's {@code read} for
 * requests, and a {@code writev} upcall ({@link #writev}) that adds, to the one reply the current thread
 * is about to send ({@link #expectInit}, {@link #expectOpen}, set just before the {@code fuse_reply_*}
 * call on the same thread):
 * <ul>
 *   <li>INIT: {@code FUSE_HANDLE_KILLPRIV_V2} (the file system clears set-user-ID on write, truncate and
 *       chown: {@link FuseBridge#write}) and, for a direct-I/O mount, {@code FUSE_DIRECT_IO_ALLOW_MMAP}
 *       (Linux 6.6 and later: shared writable mappings of direct-I/O files, ENODEV without it), with
 *       {@code FUSE_INIT_EXT};</li>
 *   <li>open and create of a direct-I/O open: {@code FOPEN_PARALLEL_DIRECT_WRITES}, so that the kernel
 *       does not serialise direct writes to one inode (iomap4j orders them itself).</li>
 * </ul>
 * Every reply is then written with libc's {@code writev}; its {@code errno} is handed back to libfuse.
 * An older kernel ignores bits it does not know. Thread-safe.
 */
final class ReplyFlags {
    private static final System.Logger LOG = System.getLogger(ReplyFlags.class.getName());
    private static final FunctionDescriptor WRITEV = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT,
            ADDRESS);
    /** {@code struct iovec}: {@code void *iov_base; size_t iov_len}. */
    private static final long IOVEC_BYTES = 16;
    private static final StructLayout CAPTURED = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURED.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    /** What the current thread's next reply gets. */
    private static final class Pending {
        boolean init;
        int openFlags;
        final MemorySegment errno = Arena.ofAuto().allocate(CAPTURED);
    }

    private static final ThreadLocal<Pending> PENDING = ThreadLocal.withInitial(Pending::new);

    private final MethodHandle libcWritev;
    private final MethodHandle errnoLocation;
    private final MemorySegment libcRead;
    private final boolean allowMmap;
    private volatile boolean initPatched;
    private final java.util.concurrent.CountDownLatch initWritten = new java.util.concurrent.CountDownLatch(1);

    /** @param allowMmap whether the INIT reply asks for shared mappings of direct-I/O files */
    @SuppressWarnings("restricted") // libc's writev and read, with their C signatures
    ReplyFlags(boolean allowMmap) {
        Linker linker = Linker.nativeLinker();
        this.allowMmap = allowMmap;
        libcWritev = linker.downcallHandle(linker.defaultLookup().find("writev").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
        errnoLocation = linker.downcallHandle(linker.defaultLookup().find("__errno_location").orElseThrow(),
                FunctionDescriptor.of(ADDRESS));
        libcRead = linker.defaultLookup().find("read").orElseThrow();
    }

    /**
     * Gives the session this custom I/O; call after {@code fuse_session_mount}, before the loop.
     *
     * @param libfuse the library
     * @param session the mounted session
     * @param arena owns the upcall stub; must stay open until the loop has ended
     * @throws Throwable if {@code fuse_session_custom_io} fails or cannot be called
     */
    @SuppressWarnings("restricted") // an upcall stub for libfuse's writev
    void install(Libfuse libfuse, MemorySegment session, Arena arena) throws Throwable {
        MethodHandle target = MethodHandles.lookup().findVirtual(ReplyFlags.class, "writev", WRITEV.toMethodType())
                .bindTo(this);
        MemorySegment io = arena.allocate(FuseStructs.CUSTOM_IO);
        io.set(ADDRESS, FuseStructs.offset(FuseStructs.CUSTOM_IO, "writev"),
                Linker.nativeLinker().upcallStub(target, WRITEV, arena));
        io.set(ADDRESS, FuseStructs.offset(FuseStructs.CUSTOM_IO, "read"), libcRead);
        int fd = (int) libfuse.sessionFd.invokeExact(session);
        int result = (int) libfuse.customIo.invokeExact(session, io, fd);
        if (result != 0) {
            throw new IllegalStateException("fuse_session_custom_io failed: errno " + -result);
        }
    }

    /** The current thread's next reply is INIT's. */
    static void expectInit() {
        PENDING.get().init = true;
    }

    /**
     * @param flags open flags ({@link KernelAbi}) the current thread's next reply (to open or create) gets
     */
    static void expectOpen(int flags) {
        PENDING.get().openFlags = flags;
    }

    /** Forgets what {@link #expectInit} or {@link #expectOpen} asked, if the reply was not sent. */
    static void clear() {
        Pending pending = PENDING.get();
        pending.init = false;
        pending.openFlags = 0;
    }

    /**
     * Waits until the INIT reply has been written (the kernel then sends the requests it held back).
     *
     * @param timeout how long to wait at most
     * @return whether it has been written
     * @throws InterruptedException if interrupted while waiting
     */
    boolean awaitInit(java.time.Duration timeout) throws InterruptedException {
        return initWritten.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** @return whether the INIT reply went out with this class's flags */
    boolean initPatched() {
        return initPatched;
    }

    /** @return whether the INIT reply asked for shared mappings of direct-I/O files */
    boolean mmapAllowed() {
        return initPatched && allowMmap;
    }

    /**
     * The custom {@code writev(int fd, struct iovec *iov, int count, void *userdata)}: the pending flags
     * go into the reply, which libc's {@code writev} then writes; its {@code errno} is left for libfuse.
     */
    @SuppressWarnings("restricted") // libfuse's iovec array and the buffers it points at
    long writev(int fd, MemorySegment iov, int count, MemorySegment userdata) {
        Pending pending = PENDING.get();
        try {
            if ((pending.init || pending.openFlags != 0) && count >= 2) {
                MemorySegment vector = iov.reinterpret(count * IOVEC_BYTES);
                MemorySegment header = vector.get(ADDRESS, 0).reinterpret(KernelAbi.OUT_HEADER_BYTES);
                long bodyBytes = vector.get(JAVA_LONG, IOVEC_BYTES + ADDRESS.byteSize());
                MemorySegment body = vector.get(ADDRESS, IOVEC_BYTES).reinterpret(bodyBytes);
                if (pending.init) {
                    initPatched = KernelAbi.patchInit(header, body, allowMmap);
                } else {
                    KernelAbi.patchOpen(header, body, pending.openFlags);
                }
            }
            long written = (long) libcWritev.invokeExact(pending.errno, fd, iov, count);
            if (written < 0) {
                int errno = (int) ERRNO.get(pending.errno, 0L);
                MemorySegment location = ((MemorySegment) errnoLocation.invokeExact()).reinterpret(JAVA_INT.byteSize());
                location.set(JAVA_INT, 0, errno);
            }
            return written;
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "writing a FUSE reply failed", t);
            return -1;
        } finally {
            if (pending.init) {
                initWritten.countDown();
            }
            pending.init = false;
            pending.openFlags = 0;
        }
    }
}
