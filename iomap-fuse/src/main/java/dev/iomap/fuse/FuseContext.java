package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Optional;

/**
 * libfuse3's per-request context, which jfuse 0.7.3 does not expose: {@code fuse_get_context()} (the
 * calling process's uid and gid, so new inodes belong to whoever created them) and the session behind
 * it ({@code fuse_get_session}, {@code fuse_session_fd}, {@code fuse_session_custom_io}, used by
 * {@link DirectIoMmap}). Called through the foreign-function API on the library jfuse loaded (looked up
 * again by its path, which gives the same loaded library).
 *
 * <p>{@code struct fuse_context} is {@code { struct fuse *fuse; uid_t uid; gid_t gid; pid_t pid; ... }}
 * in every libfuse 3 release (fuse.h): uid at byte 8, gid at 12 on 64-bit Linux. Only valid on a libfuse
 * thread, inside an operation. Immutable and thread-safe.
 */
final class FuseContext {
    private static final System.Logger LOG = System.getLogger(FuseContext.class.getName());
    private static final long UID_OFFSET = ADDRESS.byteSize();
    private static final long GID_OFFSET = UID_OFFSET + JAVA_INT.byteSize();
    private static final long CONTEXT_BYTES = GID_OFFSET + JAVA_INT.byteSize();

    private final MethodHandle getContext;
    private final MethodHandle getSession;
    private final MethodHandle sessionFd;
    private final MethodHandle customIo;

    @SuppressWarnings("restricted") // libfuse3's own functions, with their C signatures
    private FuseContext(SymbolLookup fuse) {
        Linker linker = Linker.nativeLinker();
        getContext = linker.downcallHandle(find(fuse, "fuse_get_context"), FunctionDescriptor.of(ADDRESS));
        getSession = linker.downcallHandle(find(fuse, "fuse_get_session"), FunctionDescriptor.of(ADDRESS, ADDRESS));
        sessionFd = linker.downcallHandle(find(fuse, "fuse_session_fd"), FunctionDescriptor.of(JAVA_INT, ADDRESS));
        customIo = linker.downcallHandle(find(fuse, "fuse_session_custom_io"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    }

    private static MemorySegment find(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new IllegalStateException("libfuse3 has no " + name));
    }

    /**
     * @param library libfuse3's shared object as jfuse was given it, or null for {@code libfuse3.so.3}
     * @return the context functions, or empty (with the reason logged) if the library or a symbol is
     *     missing
     */
    @SuppressWarnings("restricted") // loading the library jfuse loaded, by its path
    static Optional<FuseContext> find(Path library) {
        try {
            SymbolLookup lookup = library != null ? SymbolLookup.libraryLookup(library, Arena.global())
                    : SymbolLookup.libraryLookup("libfuse3.so.3", Arena.global());
            return Optional.of(new FuseContext(lookup));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "fuse_get_context is not reachable: new files belong to the"
                    + " mounting user", e);
            return Optional.empty();
        }
    }

    /** @return the current request's caller, or null outside a request (no context) */
    @SuppressWarnings("restricted") // libfuse's struct fuse_context, read up to gid
    InodeOperations.Caller caller() {
        MemorySegment context = context();
        if (context.equals(MemorySegment.NULL)) {
            return null;
        }
        MemorySegment fields = context.reinterpret(CONTEXT_BYTES);
        return new InodeOperations.Caller(fields.get(JAVA_INT, UID_OFFSET), fields.get(JAVA_INT, GID_OFFSET));
    }

    /** @return the {@code struct fuse_session *} of the current request's file system, or NULL */
    @SuppressWarnings("restricted") // libfuse's struct fuse_context: its first member
    MemorySegment session() {
        MemorySegment context = context();
        if (context.equals(MemorySegment.NULL)) {
            return MemorySegment.NULL;
        }
        MemorySegment fuse = context.reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0);
        if (fuse.equals(MemorySegment.NULL)) {
            return MemorySegment.NULL;
        }
        return (MemorySegment) invoke(getSession, fuse);
    }

    /**
     * @param session a session
     * @return its {@code /dev/fuse} descriptor
     */
    int sessionFd(MemorySegment session) {
        return (int) invoke(sessionFd, session);
    }

    /**
     * {@code fuse_session_custom_io(session, io, fd)}: from now on the session reads and writes the
     * device through {@code io}'s functions.
     *
     * @param session the session
     * @param io a {@code struct fuse_custom_io} (libfuse copies it)
     * @param fd the descriptor to use
     * @return 0, or a negated errno
     */
    int customIo(MemorySegment session, MemorySegment io, int fd) {
        return (int) invoke(customIo, session, io, fd);
    }

    private MemorySegment context() {
        return (MemorySegment) invoke(getContext);
    }

    private static Object invoke(MethodHandle handle, Object... args) {
        try {
            return handle.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("a libfuse3 call failed", t);
        }
    }
}
