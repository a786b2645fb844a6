package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The functions of libfuse 3's low-level API the mount calls, bound with the foreign-function API:
 * the session ({@code fuse_session_new}, {@code _mount}, {@code _loop_mt}, {@code _unmount},
 * {@code _exit}, {@code _destroy}, {@code _custom_io}), the replies ({@code fuse_reply_*},
 * {@code fuse_add_direntry}, {@code fuse_add_direntry_plus}), the caller of a request
 * ({@code fuse_req_ctx}) and {@code fuse_lowlevel_notify_inval_inode}.
 *
 * <p>Signatures are those of fuse_lowlevel.h in libfuse 3.14 ({@code size_t}, {@code off_t} and
 * {@code fuse_ino_t} are 64-bit, {@code mode_t} and {@code unsigned} 32-bit, on the two architectures
 * {@link FuseStructs} describes). The multi-threaded loop is {@code fuse_session_loop_mt_312} with a
 * {@code fuse_loop_config} from {@code fuse_loop_cfg_create} where the library has them (3.12 and later),
 * else {@code fuse_session_loop_mt_32} with a {@code fuse_loop_config_v1}. Immutable and thread-safe;
 * the library stays loaded for the life of the JVM.
 */
final class Libfuse {
    private static final Linker LINKER = Linker.nativeLinker();
    /** The idle worker threads the loop keeps (it starts a new one only when all are busy). */
    static final int MAX_IDLE_THREADS = 16;
    /** The most worker threads the loop runs at once. */
    static final int MAX_THREADS = 16;

    private final SymbolLookup library;
    final MethodHandle sessionNew;
    final MethodHandle sessionMount;
    final MethodHandle sessionUnmount;
    final MethodHandle sessionDestroy;
    final MethodHandle sessionExit;
    final MethodHandle sessionFd;
    final MethodHandle customIo;
    final MethodHandle replyErr;
    final MethodHandle replyNone;
    final MethodHandle replyEntry;
    final MethodHandle replyCreate;
    final MethodHandle replyAttr;
    final MethodHandle replyReadlink;
    final MethodHandle replyOpen;
    final MethodHandle replyWrite;
    final MethodHandle replyBuf;
    final MethodHandle replyStatfs;
    final MethodHandle replyXattr;
    final MethodHandle replyLseek;
    final MethodHandle replyIoctl;
    final MethodHandle addDirentry;
    final MethodHandle addDirentryPlus;
    final MethodHandle reqCtx;
    final MethodHandle notifyInvalInode;
    private final Optional<MethodHandle> loopMt312;
    private final Optional<MethodHandle> loopCfgCreate;
    private final Optional<MethodHandle> loopCfgSetCloneFd;
    private final Optional<MethodHandle> loopCfgSetIdleThreads;
    private final Optional<MethodHandle> loopCfgSetMaxThreads;
    private final Optional<MethodHandle> loopCfgDestroy;
    private final MethodHandle loopMt32;

    private Libfuse(SymbolLookup library) {
        this.library = library;
        sessionNew = bind("fuse_session_new", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        sessionMount = bind("fuse_session_mount", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        sessionUnmount = bind("fuse_session_unmount", FunctionDescriptor.ofVoid(ADDRESS));
        sessionDestroy = bind("fuse_session_destroy", FunctionDescriptor.ofVoid(ADDRESS));
        sessionExit = bind("fuse_session_exit", FunctionDescriptor.ofVoid(ADDRESS));
        sessionFd = bind("fuse_session_fd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        customIo = bind("fuse_session_custom_io", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        replyErr = bind("fuse_reply_err", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        replyNone = bind("fuse_reply_none", FunctionDescriptor.ofVoid(ADDRESS));
        replyEntry = bind("fuse_reply_entry", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        replyCreate = bind("fuse_reply_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        replyAttr = bind("fuse_reply_attr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_DOUBLE));
        replyReadlink = bind("fuse_reply_readlink", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        replyOpen = bind("fuse_reply_open", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        replyWrite = bind("fuse_reply_write", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        replyBuf = bind("fuse_reply_buf", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
        replyStatfs = bind("fuse_reply_statfs", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        replyXattr = bind("fuse_reply_xattr", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        replyLseek = bind("fuse_reply_lseek", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        replyIoctl = bind("fuse_reply_ioctl", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG));
        addDirentry = bind("fuse_add_direntry",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG));
        addDirentryPlus = bind("fuse_add_direntry_plus",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG));
        reqCtx = bind("fuse_req_ctx", FunctionDescriptor.of(ADDRESS, ADDRESS));
        notifyInvalInode = bind("fuse_lowlevel_notify_inval_inode",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        loopMt312 = optional("fuse_session_loop_mt_312", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        loopCfgCreate = optional("fuse_loop_cfg_create", FunctionDescriptor.of(ADDRESS));
        loopCfgSetCloneFd = optional("fuse_loop_cfg_set_clone_fd", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        loopCfgSetIdleThreads = optional("fuse_loop_cfg_set_idle_threads",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        loopCfgSetMaxThreads = optional("fuse_loop_cfg_set_max_threads",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        loopCfgDestroy = optional("fuse_loop_cfg_destroy", FunctionDescriptor.ofVoid(ADDRESS));
        loopMt32 = bind("fuse_session_loop_mt_32", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    }

    /**
     * Loads libfuse3.
     *
     * @param path the shared object, or null for {@code libfuse3.so.3} on the loader's path
     * @return its functions
     * @throws IllegalArgumentException if the library cannot be loaded
     * @throws IllegalStateException if a function is missing (libfuse older than 3.2)
     */
    @SuppressWarnings("restricted") // loading libfuse3: what this class is for
    static Libfuse load(Path path) {
        SymbolLookup lookup = path != null ? SymbolLookup.libraryLookup(path, Arena.global())
                : SymbolLookup.libraryLookup("libfuse3.so.3", Arena.global());
        return new Libfuse(lookup);
    }

    @SuppressWarnings("restricted") // libfuse3's own functions, with their C signatures
    private MethodHandle bind(String name, FunctionDescriptor signature) {
        MemorySegment address = library.find(name)
                .orElseThrow(() -> new IllegalStateException("libfuse3 has no " + name + " (libfuse 3.2 or later"
                        + " is needed)"));
        return LINKER.downcallHandle(address, signature);
    }

    @SuppressWarnings("restricted") // as bind
    private Optional<MethodHandle> optional(String name, FunctionDescriptor signature) {
        return library.find(name).map(address -> LINKER.downcallHandle(address, signature));
    }

    /**
     * Runs the session's multi-threaded loop until it exits (an unmount, {@code fuse_session_exit}):
     * worker threads each with their own {@code /dev/fuse} descriptor ({@code clone_fd}), at most
     * {@link #MAX_THREADS}, idle ones kept.
     *
     * @param session the session
     * @param arena for the v1 config where the library is older than 3.12
     * @return the loop's result: 0, or a negated errno
     * @throws Throwable as the downcall
     */
    int loop(MemorySegment session, Arena arena) throws Throwable {
        if (loopMt312.isPresent() && loopCfgCreate.isPresent() && loopCfgSetCloneFd.isPresent()
                && loopCfgSetIdleThreads.isPresent() && loopCfgSetMaxThreads.isPresent()) {
            MemorySegment config = (MemorySegment) loopCfgCreate.get().invokeExact();
            loopCfgSetCloneFd.get().invokeExact(config, 1);
            loopCfgSetIdleThreads.get().invokeExact(config, MAX_IDLE_THREADS);
            loopCfgSetMaxThreads.get().invokeExact(config, MAX_THREADS);
            try {
                return (int) loopMt312.get().invokeExact(session, config);
            } finally {
                if (loopCfgDestroy.isPresent()) {
                    loopCfgDestroy.get().invokeExact(config);
                }
            }
        }
        MemorySegment config = arena.allocate(FuseStructs.LOOP_CONFIG_V1);
        config.set(JAVA_INT, FuseStructs.offset(FuseStructs.LOOP_CONFIG_V1, "clone_fd"), 1);
        config.set(JAVA_INT, FuseStructs.offset(FuseStructs.LOOP_CONFIG_V1, "max_idle_threads"), MAX_IDLE_THREADS);
        return (int) loopMt32.invokeExact(session, config);
    }
}
