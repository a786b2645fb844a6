package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.nio.charset.StandardCharsets.ISO_8859_1;

import dev.iomap.api.FileNames;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.Fuse;
import org.cryptomator.jfuse.api.FuseOperations;
import org.cryptomator.jfuse.api.FuseOperations.Operation;

/**
 * Binds libfuse3's path-taking operations to upcalls of this module, so that file names are bytes
 * end to end. jfuse 0.7.3 decodes every {@code const char *} path with
 * {@code MemorySegment.getString} (UTF-8, each malformed byte becoming U+FFFD, so {@code caf\xe9} and
 * {@code caf\xe8} were one name), its {@code DirFiller} encodes names back as UTF-8 (an escaped byte
 * becoming {@code '?'}), and it has no {@code FALLOCATE}, {@code LINK}, {@code COPY_FILE_RANGE} or
 * {@code LSEEK} operation at all. Here each path, symbolic-link target and extended-attribute name is
 * decoded with {@link FileNames#decode} (one-to-one), readdir fills with {@link RawDirFiller} (the
 * bytes of {@link FileNames#encode}), fallocate reaches {@link FuseBridge#fallocate}, copy_file_range
 * {@link FuseBridge#copyFileRange}, lseek (SEEK_DATA, SEEK_HOLE) {@link FuseBridge#lseek}, and
 * symlink, readlink, link, chmod, chown, ioctl (the inode flags of lsattr and chattr) and the
 * extended-attribute operations
 * {@link InodeOperations}: their buffers are libfuse's memory, seen as {@link ByteBuffer}s of the size
 * libfuse gave (empty for a size probe).
 *
 * <p>Before mounting, the {@link #SLOTS} of jfuse's {@code struct fuse_operations} (a protected field
 * of {@link Fuse}, reached by reflection, which works while jfuse is on the class path) that the
 * bridge declares, and those jfuse lacks, are set to upcall stubs. Slot offsets are libfuse3's ABI, fixed
 * across 3.x (members are only ever appended; all are 8-byte pointers on amd64 and aarch64); a test
 * checks them against jfuse's generated layouts for both. The structs behind the other pointers are
 * read and written through jfuse's own views ({@link JfuseStructs}). getattr goes through jfuse's
 * operations object (also a protected field), which watches for the probe its mount uses to see the
 * mount is up; every other upcall calls the bridge. Operations the bridge does not use a path for
 * (init, destroy, read, write, flush, release, fsync) stay jfuse's.
 *
 * <p>All or nothing. If anything is not as expected (not Linux amd64 or aarch64, the struct too
 * small, a jfuse class or member missing, its struct views failing a trial on zeroed memory), no slot
 * is changed and the mount runs on jfuse's binding: without links, chmod, chown, extended attributes and
 * copy_file_range (ENOSYS; the kernel then copies itself), without fallocate (EOPNOTSUPP), with the kernel's
 * default SEEK_DATA/SEEK_HOLE (all data, the hole at EOF), and with jfuse's lossy names, which the
 * bridge then guards ({@link FuseBridge#useExactNames} is not called): a path holding U+FFFD is
 * refused with EILSEQ, so two names never silently become one, and readdir leaves out names that are
 * not UTF-8.
 *
 * <p>No exception leaves an upcall (it would unwind into libfuse and bring the JVM down): each returns
 * a negated errno from {@link ErrnoMapping}. Thread-safe: upcalls come from libfuse's threads.
 */
final class RawPathBinding {
    private static final System.Logger LOG = System.getLogger(RawPathBinding.class.getName());

    /**
     * One slot of {@code struct fuse_operations}: the upcall method of the same name, its C signature,
     * and the jfuse operation the bridge declares for it (null for those bound whatever the bridge
     * declares).
     *
     * @param name the member's name (the upcall method's, in camel case: {@link #method()})
     * @param index the member's index (byte offset / 8)
     * @param signature its C signature
     * @param operation the bridge's declaration of it; null if always bound
     */
    record Slot(String name, int index, FunctionDescriptor signature, Operation operation) {
        /** @return the slot's byte offset in {@code struct fuse_operations} */
        long offset() {
            return index * ADDRESS.byteSize();
        }

        /** @return the upcall method's name: {@code name} with each {@code _x} as {@code X} */
        String method() {
            var method = new StringBuilder();
            boolean upper = false;
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (c == '_') {
                    upper = true;
                } else {
                    method.append(upper ? Character.toUpperCase(c) : c);
                    upper = false;
                }
            }
            return method.toString();
        }
    }

    /** The slots bound, in {@code struct fuse_operations} order. */
    static final List<Slot> SLOTS = List.of(
            new Slot("getattr", 0, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Operation.GET_ATTR),
            new Slot("readlink", 1, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG), null),
            new Slot("mkdir", 3, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Operation.MKDIR),
            new Slot("unlink", 4, FunctionDescriptor.of(JAVA_INT, ADDRESS), Operation.UNLINK),
            new Slot("rmdir", 5, FunctionDescriptor.of(JAVA_INT, ADDRESS), Operation.RMDIR),
            new Slot("symlink", 6, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), null),
            new Slot("rename", 7, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), Operation.RENAME),
            new Slot("link", 8, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), null),
            new Slot("chmod", 9, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), null),
            new Slot("chown", 10, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), null),
            new Slot("truncate", 11, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS), Operation.TRUNCATE),
            new Slot("open", 12, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), Operation.OPEN),
            new Slot("statfs", 15, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), Operation.STATFS),
            new Slot("setxattr", 19, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT),
                    null),
            new Slot("getxattr", 20, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG), null),
            new Slot("listxattr", 21, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG), null),
            new Slot("removexattr", 22, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), null),
            new Slot("readdir", 24, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS,
                    JAVA_INT), Operation.READ_DIR),
            new Slot("create", 30, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), Operation.CREATE),
            new Slot("utimens", 32, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Operation.UTIMENS),
            new Slot("ioctl", 34, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS),
                    null),
            new Slot("fallocate", 39, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS),
                    null),
            new Slot("copy_file_range", 40, FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS,
                    JAVA_LONG, JAVA_LONG, JAVA_INT), null),
            new Slot("lseek", 41, FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS), null));

    private final FuseBridge bridge;
    private final FuseOperations probeWatcher;
    private final JfuseStructs structs;

    /**
     * @param bridge where the operations go
     * @param probeWatcher jfuse's operations object over {@code bridge}, for getattr
     * @param structs jfuse's views of the structs libfuse passes
     */
    RawPathBinding(FuseBridge bridge, FuseOperations probeWatcher, JfuseStructs structs) {
        this.bridge = bridge;
        this.probeWatcher = probeWatcher;
        this.structs = structs;
    }

    /**
     * @param fuse a built, not yet mounted jfuse instance over {@code bridge}
     * @param bridge where the operations go; told {@link FuseBridge#useExactNames} if bound
     * @param arena owns the upcall stubs; must stay open until {@code fuse} is closed
     * @return whether the slots are bound (false: jfuse's binding, lossy names guarded, no fallocate)
     */
    @SuppressWarnings("restricted") // upcall stubs for libfuse: what this class is for
    static boolean bind(Fuse fuse, FuseBridge bridge, Arena arena) {
        String platform = fuse.getClass().getPackageName();
        if (!platform.endsWith(".linux.amd64") && !platform.endsWith(".linux.aarch64")) {
            LOG.log(System.Logger.Level.WARNING, "raw names and fallocate not bound: libfuse3 on Linux amd64 or"
                    + " aarch64 only, not " + platform);
            return false;
        }
        Optional<MemorySegment> operations = field(fuse, "fuseOperationsStruct", MemorySegment.class);
        Optional<FuseOperations> jfuseOperations = field(fuse, "fuseOperations", FuseOperations.class);
        Optional<JfuseStructs> structs = JfuseStructs.find(platform);
        long end = SLOTS.getLast().offset() + ADDRESS.byteSize();
        if (operations.isEmpty() || jfuseOperations.isEmpty() || structs.isEmpty()
                || operations.get().byteSize() < end) {
            LOG.log(System.Logger.Level.WARNING, "raw names and fallocate not bound: jfuse is not as expected");
            return false;
        }
        var binding = new RawPathBinding(bridge, jfuseOperations.get(), structs.get());
        Set<Operation> declared = bridge.supportedOperations();
        Map<Long, MemorySegment> stubs = new LinkedHashMap<>();
        try {
            for (Slot slot : SLOTS) {
                if (slot.operation() == null || declared.contains(slot.operation())) {
                    var target = MethodHandles.lookup()
                            .findVirtual(RawPathBinding.class, slot.method(), slot.signature().toMethodType())
                            .bindTo(binding);
                    stubs.put(slot.offset(), Linker.nativeLinker().upcallStub(target, slot.signature(), arena));
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "raw names and fallocate not bound", e);
            return false;
        }
        stubs.forEach((offset, stub) -> operations.get().set(ADDRESS, offset, stub));
        bridge.useExactNames();
        return true;
    }

    private static <T> Optional<T> field(Fuse fuse, String name, Class<T> type) {
        try {
            Field field = Fuse.class.getDeclaredField(name);
            field.setAccessible(true);
            return Optional.of(type.cast(field.get(fuse)));
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot reach jfuse's " + name, e);
            return Optional.empty();
        }
    }

    /**
     * @param cString a {@code const char *} from libfuse, or NULL
     * @return its bytes in {@link FileNames#decode}'s form; "" for NULL
     */
    @SuppressWarnings("restricted") // a C string: read up to its NUL
    static String path(MemorySegment cString) {
        if (cString.equals(MemorySegment.NULL)) {
            return "";
        }
        // ISO-8859-1 is one char per byte: the exact bytes up to the NUL, then decoded one-to-one.
        return FileNames.decode(cString.reinterpret(Long.MAX_VALUE).getString(0, ISO_8859_1).getBytes(ISO_8859_1));
    }

    private static int failed(Throwable t) {
        return -ErrnoMapping.errno(t);
    }

    /** {@code int getattr(const char *, struct stat *, struct fuse_file_info *)}. */
    int getattr(MemorySegment path, MemorySegment stat, MemorySegment fi) {
        try {
            return probeWatcher.getattr(path(path), structs.stat(stat), structs.fileInfo(fi));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int mkdir(const char *, mode_t)}. */
    int mkdir(MemorySegment path, int mode) {
        try {
            return bridge.mkdir(path(path), mode);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int unlink(const char *)}. */
    int unlink(MemorySegment path) {
        try {
            return bridge.unlink(path(path));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int rmdir(const char *)}. */
    int rmdir(MemorySegment path) {
        try {
            return bridge.rmdir(path(path));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int rename(const char *, const char *, unsigned int flags)}. */
    int rename(MemorySegment from, MemorySegment to, int flags) {
        try {
            return bridge.rename(path(from), path(to), flags);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int truncate(const char *, off_t, struct fuse_file_info *)}. */
    int truncate(MemorySegment path, long size, MemorySegment fi) {
        try {
            return bridge.truncate(path(path), size, structs.fileInfo(fi));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int open(const char *, struct fuse_file_info *)}. */
    int open(MemorySegment path, MemorySegment fi) {
        try {
            FileInfo info = structs.fileInfo(fi);
            return choosingCaching(bridge.open(path(path), info), fi, info);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /**
     * After open or create: on a mount that chooses caching per open ({@link FuseBridge#perOpenCaching}),
     * sets this open's {@code direct_io} and {@code keep_cache} in libfuse's struct as {@link OpenCaching}
     * decides.
     */
    @SuppressWarnings("restricted") // sizing libfuse's fuse_file_info to the word written
    private int choosingCaching(int result, MemorySegment fi, FileInfo info) {
        if (result == 0 && bridge.perOpenCaching()) {
            boolean direct = bridge.bypassesKernelCache(info.getFh(), info.getFlags());
            OpenCaching.set(fi.reinterpret(OpenCaching.BITS_OFFSET + JAVA_INT.byteSize()), direct,
                    !direct && bridge.keepsKernelCache(info.getFh()));
        }
        return result;
    }

    /** {@code int statfs(const char *, struct statvfs *)}. */
    int statfs(MemorySegment path, MemorySegment statvfs) {
        try {
            return bridge.statfs(path(path), structs.statvfs(statvfs));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /**
     * {@code int readdir(const char *, void *buf, fuse_fill_dir_t, off_t, struct fuse_file_info *,
     * enum fuse_readdir_flags)}.
     */
    int readdir(MemorySegment path, MemorySegment buf, MemorySegment fillDir, long offset, MemorySegment fi,
            int flags) {
        try (Arena arena = Arena.ofConfined()) {
            return bridge.readdir(path(path), new RawDirFiller(buf, fillDir, arena, structs), offset,
                    structs.fileInfo(fi), flags);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int create(const char *, mode_t, struct fuse_file_info *)}. */
    int create(MemorySegment path, int mode, MemorySegment fi) {
        try {
            FileInfo info = structs.fileInfo(fi);
            return choosingCaching(bridge.create(path(path), mode, info), fi, info);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int utimens(const char *, const struct timespec tv[2], struct fuse_file_info *)}; NULL is "now". */
    int utimens(MemorySegment path, MemorySegment times, MemorySegment fi) {
        try {
            if (times.equals(MemorySegment.NULL)) {
                return bridge.utimens(path(path), null, null, structs.fileInfo(fi));
            }
            return bridge.utimens(path(path), structs.timeSpec(times, 0), structs.timeSpec(times, 1),
                    structs.fileInfo(fi));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /**
     * {@code off_t lseek(const char *, off_t off, int whence, struct fuse_file_info *)} (libfuse 3.8 and
     * later; older ones never call it): SEEK_DATA and SEEK_HOLE, see {@link FuseBridge#lseek}.
     */
    long lseek(MemorySegment path, long offset, int whence, MemorySegment fi) {
        try {
            return bridge.lseek(path(path), offset, whence, structs.fileInfo(fi));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int fallocate(const char *, int, off_t, off_t, struct fuse_file_info *)}. */
    int fallocate(MemorySegment path, int mode, long offset, long length, MemorySegment fi) {
        try {
            FileInfo info = structs.fileInfo(fi);
            if (info == null) {
                return -LinuxErrno.EBADF;
            }
            return bridge.fallocate(path(path), mode, offset, length, info);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /**
     * @param memory a buffer libfuse passed, or NULL
     * @param size its size in bytes
     * @return the buffer as a {@link ByteBuffer} of {@code size} bytes; an empty one for NULL or 0
     */
    @SuppressWarnings("restricted") // sizing libfuse's buffer to the size it gave
    static ByteBuffer buffer(MemorySegment memory, long size) {
        if (memory.equals(MemorySegment.NULL) || size <= 0) {
            return ByteBuffer.allocate(0);
        }
        return memory.reinterpret(Math.min(size, Integer.MAX_VALUE)).asByteBuffer();
    }

    /** {@code int readlink(const char *, char *buf, size_t size)}. */
    int readlink(MemorySegment path, MemorySegment buf, long size) {
        try {
            return bridge.inodes().readlink(path(path), buffer(buf, size), size);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /**
     * {@code int ioctl(const char *, unsigned int cmd, void *arg, struct fuse_file_info *, unsigned int flags,
     * void *data)}: the inode flags' commands, see {@link InodeOperations#ioctl}; {@code data} is libfuse's
     * copy of the command's buffer, {@link InodeOperations#ioctlBytes} long for those.
     */
    int ioctl(MemorySegment path, int command, MemorySegment arg, MemorySegment fi, int flags, MemorySegment data) {
        try {
            return bridge.inodes().ioctl(path(path), command, buffer(data, InodeOperations.ioctlBytes(command)));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int symlink(const char *target, const char *link)}. */
    int symlink(MemorySegment target, MemorySegment link) {
        try {
            return bridge.inodes().symlink(path(target), path(link));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int link(const char *existing, const char *link)}. */
    int link(MemorySegment existing, MemorySegment link) {
        try {
            String name = path(link);
            int result = bridge.inodes().link(path(existing), name);
            if (result == 0) {
                bridge.linked(name);
            }
            return result;
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int chmod(const char *, mode_t, struct fuse_file_info *)}. */
    int chmod(MemorySegment path, int mode, MemorySegment fi) {
        try {
            return bridge.inodes().chmod(path(path), mode);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int chown(const char *, uid_t, gid_t, struct fuse_file_info *)}; {@code (uid_t) -1} is -1 here. */
    int chown(MemorySegment path, int uid, int gid, MemorySegment fi) {
        try {
            return bridge.inodes().chown(path(path), uid, gid);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int setxattr(const char *, const char *name, const char *value, size_t, int flags)}. */
    int setxattr(MemorySegment path, MemorySegment name, MemorySegment value, long size, int flags) {
        try {
            return bridge.inodes().setxattr(path(path), path(name), buffer(value, size), flags);
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int getxattr(const char *, const char *name, char *value, size_t)}; size 0 asks for the size. */
    int getxattr(MemorySegment path, MemorySegment name, MemorySegment value, long size) {
        try {
            return bridge.inodes().getxattr(path(path), path(name), buffer(value, size));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int listxattr(const char *, char *list, size_t)}; size 0 asks for the size. */
    int listxattr(MemorySegment path, MemorySegment list, long size) {
        try {
            return bridge.inodes().listxattr(path(path), buffer(list, size));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /** {@code int removexattr(const char *, const char *name)}. */
    int removexattr(MemorySegment path, MemorySegment name) {
        try {
            return bridge.inodes().removexattr(path(path), path(name));
        } catch (Throwable t) {
            return failed(t);
        }
    }

    /**
     * {@code ssize_t copy_file_range(const char *path_in, struct fuse_file_info *fi_in, off_t off_in,
     * const char *path_out, struct fuse_file_info *fi_out, off_t off_out, size_t size, int flags)}.
     */
    long copyFileRange(MemorySegment pathIn, MemorySegment fiIn, long offsetIn, MemorySegment pathOut,
            MemorySegment fiOut, long offsetOut, long size, int flags) {
        try {
            return bridge.copyFileRange(path(pathIn), structs.fileInfo(fiIn), offsetIn, path(pathOut),
                    structs.fileInfo(fiOut), offsetOut, size, flags);
        } catch (Throwable t) {
            return failed(t);
        }
    }
}
