package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Lets programs {@code mmap(MAP_SHARED)} files of a direct-I/O mount. The kernel refuses a shared
 * mapping of a file opened with {@code FOPEN_DIRECT_IO} (ENODEV, fs/fuse/file.c
 * {@code fuse_file_mmap}) unless the file system answered FUSE_INIT with
 * {@code FUSE_DIRECT_IO_ALLOW_MMAP} (bit 36 of the flags: bit 4 of {@code flags2}, with
 * {@code FUSE_INIT_EXT} in {@code flags}; Linux 6.6 and later). libfuse 3.16 and later ask for it
 * ({@code FUSE_CAP_DIRECT_IO_ALLOW_MMAP}); libfuse 3.14 (Debian 12) builds the reply only from the
 * capabilities it knows, so nothing a file system sets in {@code init} can ask for it.
 *
 * <p>So, from {@code init} (which libfuse calls just before it writes the INIT reply, on the same
 * thread), this gives the session a custom I/O ({@code fuse_session_custom_io}, libfuse 3.14 and
 * later): libc's {@code read}, and a {@code writev} upcall that sets the two bits in the INIT reply,
 * writes it with libc's {@code writev}, and then gives the session libc's {@code read} and
 * {@code writev} themselves, so that no later message passes through Java. An older kernel ignores
 * the bits (it does not know them); a kernel that did not offer {@code FUSE_INIT_EXT} would ignore
 * {@code flags2}. If anything is missing (no {@code fuse_session_custom_io}, no session), nothing is
 * changed and a shared mapping stays ENODEV; a private mapping works either way.
 *
 * <p>Thread-safe; the upcall runs once.
 */
final class DirectIoMmap {
    private static final System.Logger LOG = System.getLogger(DirectIoMmap.class.getName());
    /** fuse_kernel.h: {@code FUSE_INIT_EXT}, in {@code fuse_init_out.flags}. */
    static final int FUSE_INIT_EXT = 1 << 30;
    /** fuse_kernel.h: {@code FUSE_DIRECT_IO_ALLOW_MMAP} is {@code 1ULL << 36}: bit 4 of {@code flags2}. */
    static final int FLAGS2_DIRECT_IO_ALLOW_MMAP = 1 << (36 - 32);
    /** {@code struct fuse_init_out}: {@code flags} at byte 12, {@code flags2} at byte 32. */
    static final long FLAGS_OFFSET = 12;
    static final long FLAGS2_OFFSET = 32;
    /** {@code struct fuse_out_header}: {@code u32 len; s32 error; u64 unique}. */
    static final long HEADER_BYTES = 16;
    private static final long ERROR_OFFSET = 4;
    /** {@code struct iovec}: {@code void *iov_base; size_t iov_len}. */
    private static final long IOVEC_BYTES = 16;
    /** {@code struct fuse_custom_io}: writev, read, splice_receive, splice_send. */
    private static final long CUSTOM_IO_BYTES = 4 * ADDRESS.byteSize();
    private static final FunctionDescriptor WRITEV = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT,
            ADDRESS);

    private final FuseContext context;
    private final Arena arena;
    private final MethodHandle libcWritev;
    private final MemorySegment libcWritevAddress;
    private final MemorySegment libcReadAddress;
    private final AtomicBoolean replied = new AtomicBoolean();
    private volatile MemorySegment session = MemorySegment.NULL;
    private volatile boolean asked;

    /**
     * @param context libfuse's context functions
     * @param arena owns the upcall stub; must stay open until the FUSE loop has ended
     */
    @SuppressWarnings("restricted") // libc's writev, with its C signature
    DirectIoMmap(FuseContext context, Arena arena) {
        this.context = context;
        this.arena = arena;
        Linker linker = Linker.nativeLinker();
        libcWritevAddress = linker.defaultLookup().find("writev").orElseThrow();
        libcReadAddress = linker.defaultLookup().find("read").orElseThrow();
        libcWritev = linker.downcallHandle(libcWritevAddress,
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    }

    /**
     * Installs the custom I/O; call from {@code init}, on libfuse's thread.
     *
     * @return whether it is installed (the INIT reply will ask for shared mappings)
     */
    @SuppressWarnings("restricted") // an upcall stub for libfuse's writev
    boolean install() {
        try {
            MemorySegment se = context.session();
            if (se.equals(MemorySegment.NULL)) {
                LOG.log(System.Logger.Level.WARNING, "no FUSE session in init: shared mmap stays ENODEV");
                return false;
            }
            MethodHandle target = MethodHandles.lookup().findVirtual(DirectIoMmap.class, "writev",
                    WRITEV.toMethodType()).bindTo(this);
            MemorySegment stub = Linker.nativeLinker().upcallStub(target, WRITEV, arena);
            session = se;
            int result = context.customIo(se, customIo(stub), context.sessionFd(se));
            if (result != 0) {
                LOG.log(System.Logger.Level.WARNING, "fuse_session_custom_io failed (" + result
                        + "): shared mmap stays ENODEV");
                return false;
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot ask for FUSE_DIRECT_IO_ALLOW_MMAP: shared mmap stays ENODEV",
                    e);
            return false;
        }
    }

    /** @return whether the INIT reply went out with {@code FUSE_DIRECT_IO_ALLOW_MMAP} */
    boolean asked() {
        return asked;
    }

    private MemorySegment customIo(MemorySegment writev) {
        MemorySegment io = arena.allocate(CUSTOM_IO_BYTES);
        io.set(ADDRESS, 0, writev);
        io.set(ADDRESS, ADDRESS.byteSize(), libcReadAddress);
        return io;
    }

    /**
     * The custom {@code writev(int fd, struct iovec *iov, int count, void *userdata)}: the first message
     * (the INIT reply) gets the bits ({@link #patch}); every message is written with libc's
     * {@code writev}; then libc's functions replace this one.
     */
    @SuppressWarnings("restricted") // libfuse's iovec array and the buffers it points at
    long writev(int fd, MemorySegment iov, int count, MemorySegment userdata) {
        try {
            if (replied.compareAndSet(false, true)) {
                MemorySegment vector = iov.reinterpret(count * IOVEC_BYTES);
                if (count >= 2) {
                    MemorySegment header = vector.get(ADDRESS, 0).reinterpret(HEADER_BYTES);
                    MemorySegment body = vector.get(ADDRESS, IOVEC_BYTES);
                    long bodyBytes = vector.get(JAVA_LONG, IOVEC_BYTES + ADDRESS.byteSize());
                    asked = patch(header, body.reinterpret(bodyBytes));
                }
                long written = (long) libcWritev.invokeExact(fd, iov, count);
                int reset = context.customIo(session, customIo(libcWritevAddress), fd);
                if (reset != 0) {
                    LOG.log(System.Logger.Level.WARNING, "FUSE replies stay on the Java writev: " + reset);
                }
                return written;
            }
            return (long) libcWritev.invokeExact(fd, iov, count);
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "writing a FUSE reply failed", t);
            return -1;
        }
    }

    /**
     * Sets {@code FUSE_INIT_EXT} and {@code FUSE_DIRECT_IO_ALLOW_MMAP} in a successful INIT reply.
     *
     * @param header the {@code struct fuse_out_header}
     * @param initOut the {@code struct fuse_init_out} that follows it
     * @return whether the reply was a successful one long enough to hold {@code flags2} (and so was changed)
     */
    static boolean patch(MemorySegment header, MemorySegment initOut) {
        if (header.get(JAVA_INT, ERROR_OFFSET) != 0 || initOut.byteSize() < FLAGS2_OFFSET + JAVA_INT.byteSize()) {
            return false;
        }
        initOut.set(JAVA_INT, FLAGS_OFFSET, initOut.get(JAVA_INT, FLAGS_OFFSET) | FUSE_INIT_EXT);
        initOut.set(JAVA_INT, FLAGS2_OFFSET, initOut.get(JAVA_INT, FLAGS2_OFFSET) | FLAGS2_DIRECT_IO_ALLOW_MMAP);
        return true;
    }
}
