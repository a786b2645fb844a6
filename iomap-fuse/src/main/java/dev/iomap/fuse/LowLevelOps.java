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
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;

/**
 * libfuse's {@code struct fuse_lowlevel_ops}: one upcall stub per operation the mount answers, each of
 * which decodes libfuse's arguments (node ids, names as bytes, {@code fuse_file_info}, {@code struct
 * stat}), calls {@link FuseBridge}, and replies with {@code fuse_reply_*} ({@link Libfuse}): what the
 * bridge returns as the reply, what it throws as {@code fuse_reply_err} with {@link ErrnoMapping}'s errno
 * ({@link Calls#errno}). No exception leaves an upcall (it would unwind into libfuse and bring the JVM
 * down), and every request gets exactly one reply.
 *
 * <p>Names are C strings read as their bytes and decoded one-to-one ({@link FileNames#decode}); names
 * going back (readdir) are {@link FileNames#encode}'s bytes. Operations left out (NULL slots, so libfuse
 * answers ENOSYS or its default): access (with {@code default_permissions} the kernel checks), fsyncdir,
 * locks, bmap, poll, write_buf (the data is copied into iomap4j's page cache either way: splice would not
 * save that copy, see docs/design-notes.md).
 *
 * <p>Each worker thread keeps its own native scratch memory for replies ({@link ReplyMemory}). Thread-safe.
 */
final class LowLevelOps {
    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();
    /** libfuse's {@code FUSE_CAP_*} bits the mount changes in {@code want} (fuse_common.h). */
    static final int CAP_EXPORT_SUPPORT = 1 << 4;
    static final int CAP_AUTO_INVAL_DATA = 1 << 12;
    static final int CAP_READDIRPLUS = 1 << 13;
    static final int CAP_READDIRPLUS_AUTO = 1 << 14;
    static final int CAP_WRITEBACK_CACHE = 1 << 16;
    static final int CAP_HANDLE_KILLPRIV = 1 << 20;
    static final int CAP_DONT_MASK = 1 << 6;
    static final int CAP_POSIX_ACL = 1 << 19;

    private final Libfuse libfuse;
    private final FuseBridge bridge;
    private final CacheMode cache;
    private final InodeOperations.Caller owner;
    private final DirectoryReplies directories;
    private final Runnable destroyed;

    /**
     * @param libfuse the library
     * @param bridge where the operations go
     * @param owner the mounting user, the caller where libfuse gives no context
     * @param destroyed run by the {@code destroy} upcall (before libfuse answers {@code FUSE_DESTROY})
     */
    LowLevelOps(Libfuse libfuse, FuseBridge bridge, InodeOperations.Caller owner, Runnable destroyed) {
        this.libfuse = libfuse;
        this.destroyed = destroyed;
        this.bridge = bridge;
        this.cache = bridge.cache();
        this.owner = owner;
        this.directories = new DirectoryReplies(libfuse, bridge);
    }

    /**
     * Builds the {@code struct fuse_lowlevel_ops} with an upcall stub in each slot the mount answers.
     *
     * @param arena owns the struct and the stubs; must stay open until the session is destroyed
     * @return the struct, {@link FuseStructs#LOWLEVEL_OPS} in size
     * @throws ReflectiveOperationException if an upcall's method is missing (a bug)
     */
    @SuppressWarnings("restricted") // upcall stubs for libfuse: what this class is for
    MemorySegment operations(Arena arena) throws ReflectiveOperationException {
        MemorySegment ops = arena.allocate(FuseStructs.LOWLEVEL_OPS);
        bind(ops, arena, "init", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        bind(ops, arena, "destroy", FunctionDescriptor.ofVoid(ADDRESS));
        bind(ops, arena, "lookup", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "forget", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG));
        bind(ops, arena, "getattr", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "setattr", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS));
        bind(ops, arena, "readlink", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG));
        bind(ops, arena, "mknod", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT, JAVA_LONG));
        bind(ops, arena, "mkdir", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT));
        bind(ops, arena, "unlink", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "rmdir", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "symlink", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "rename",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT));
        bind(ops, arena, "link", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
        bind(ops, arena, "open", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "read", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
        bind(ops, arena, "write",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
        bind(ops, arena, "flush", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "release", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "fsync", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS));
        bind(ops, arena, "opendir", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "readdir", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
        bind(ops, arena, "releasedir", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "statfs", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG));
        bind(ops, arena, "setxattr",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
        bind(ops, arena, "getxattr", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG));
        bind(ops, arena, "listxattr", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG));
        bind(ops, arena, "removexattr", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "create", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS));
        bind(ops, arena, "ioctl", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS,
                JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
        bind(ops, arena, "forget_multi", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS));
        bind(ops, arena, "fallocate",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS));
        bind(ops, arena, "readdirplus",
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
        bind(ops, arena, "copy_file_range", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS,
                JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT));
        bind(ops, arena, "lseek", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS));
        return ops;
    }

    @SuppressWarnings("restricted") // as operations
    private void bind(MemorySegment ops, Arena arena, String slot, FunctionDescriptor signature)
            throws ReflectiveOperationException {
        String method = slot.equals("forget_multi") ? "forgetMulti" : slot.equals("copy_file_range") ? "copyFileRange"
                : slot;
        MethodHandle target = LOOKUP.findVirtual(LowLevelOps.class, method, signature.toMethodType()).bindTo(this);
        ops.set(ADDRESS, FuseStructs.offset(FuseStructs.LOWLEVEL_OPS, slot),
                Linker.nativeLinker().upcallStub(target, signature, arena));
    }

    // ---- helpers -------------------------------------------------------------------------------

    /**
     * @param cString a {@code const char *} from libfuse
     * @return its bytes up to the NUL, decoded one-to-one ({@link FileNames#decode})
     */
    @SuppressWarnings("restricted") // a C string: read up to its NUL
    static String name(MemorySegment cString) {
        return FileNames.decode(bytes(cString));
    }

    @SuppressWarnings("restricted") // a C string: read up to its NUL
    static byte[] bytes(MemorySegment cString) {
        return cString.reinterpret(Long.MAX_VALUE).getString(0, ISO_8859_1).getBytes(ISO_8859_1);
    }

    @SuppressWarnings("restricted") // libfuse's struct fuse_file_info, whose size the layout gives
    private static MemorySegment fileInfo(MemorySegment fi) {
        return fi.reinterpret(FuseStructs.FILE_INFO.byteSize());
    }

    /** @return the handle in {@code fi}, or 0 where libfuse passed none */
    private static long fh(MemorySegment fi) {
        return fi.equals(MemorySegment.NULL) ? 0 : fileInfo(fi).get(JAVA_LONG, FuseStructs.FI_FH);
    }

    @SuppressWarnings("restricted") // libfuse's struct fuse_ctx
    private InodeOperations.Caller caller(MemorySegment req) {
        try {
            MemorySegment ctx = (MemorySegment) libfuse.reqCtx.invokeExact(req);
            if (ctx.equals(MemorySegment.NULL)) {
                return owner;
            }
            ctx = ctx.reinterpret(FuseStructs.CTX.byteSize());
            return new InodeOperations.Caller(ctx.get(JAVA_INT, 0), ctx.get(JAVA_INT, JAVA_INT.byteSize()),
                    ctx.get(JAVA_INT, FuseStructs.offset(FuseStructs.CTX, "umask")));
        } catch (Throwable t) {
            return owner;
        }
    }

    /** Answers a failed request; the log names the node by its path ({@link FuseBridge#describe}). */
    private void error(MemorySegment req, String op, long nodeid, Throwable failure) {
        replyErr(req, Calls.errno(op, new Object() {
            @Override
            public String toString() {
                return bridge.describe(nodeid);   // only when the failure is logged
            }
        }, failure));
    }

    private void replyErr(MemorySegment req, int errno) {
        try {
            int ignored = (int) libfuse.replyErr.invokeExact(req, errno);
        } catch (Throwable t) {
            // nothing more can be said to the kernel
        }
    }

    private void fillEntry(MemorySegment e, FuseBridge.Entry entry) {
        ReplyMemory.fillEntry(e, entry, cache);
    }

    /** Replies with an entry; if the kernel did not take it (an interrupted request), its lookup is given back. */
    private void replyEntry(MemorySegment req, FuseBridge.Entry entry) throws Throwable {
        MemorySegment e = ReplyMemory.current().entry;
        fillEntry(e, entry);
        if ((int) libfuse.replyEntry.invokeExact(req, e) == -LinuxErrno.ENOENT) {
            bridge.forget(entry.nodeid(), 1);
        }
    }

    private void replyAttr(MemorySegment req, Attributes attributes) throws Throwable {
        MemorySegment stat = ReplyMemory.current().stat;
        stat.fill((byte) 0);
        FuseStructs.fillStat(stat, attributes);
        int ignored = (int) libfuse.replyAttr.invokeExact(req, stat, cache.attributeTimeout());
    }

    /**
     * Sets the reply's handle and {@code direct_io}, {@code keep_cache} and {@code noflush}: close(2) sends
     * no FLUSH (there is nothing to do for it: {@link FuseBridge#flush}; the kernel still flushes in
     * writeback-cache mode, where close writes back), which saves a round trip per close.
     */
    private void setOpenFlags(MemorySegment fi, FuseBridge.Opened opened) {
        MemorySegment info = fileInfo(fi);
        int bits = info.get(JAVA_INT, FuseStructs.FI_BITS) & ~(FuseStructs.FI_DIRECT_IO | FuseStructs.FI_KEEP_CACHE);
        bits |= (opened.directIo() ? FuseStructs.FI_DIRECT_IO : 0) | (opened.keepCache() ? FuseStructs.FI_KEEP_CACHE : 0)
                | FuseStructs.FI_NOFLUSH;
        info.set(JAVA_INT, FuseStructs.FI_BITS, bits);
        info.set(JAVA_LONG, FuseStructs.FI_FH, opened.fh());
        ReplyFlags.expectOpen(opened.directIo() ? KernelAbi.FOPEN_PARALLEL_DIRECT_WRITES : 0);
    }

    // ---- the operations ------------------------------------------------------------------------

    /**
     * {@code init(void *userdata, struct fuse_conn_info *conn)}: asks for requests of up to 1 MiB
     * ({@code max_write}, {@code max_readahead}; libfuse then asks for {@code max_pages} to match), turns
     * off {@code FUSE_CAP_HANDLE_KILLPRIV} (its successor, {@code FUSE_HANDLE_KILLPRIV_V2}, goes into the
     * reply: {@link ReplyFlags}), turns off {@code FUSE_CAP_AUTO_INVAL_DATA} where opens may cache (with it
     * the kernel asks getattr before every cached read; nothing but this mount changes the files), turns
     * off {@code FUSE_CAP_READDIRPLUS_AUTO} so that every page of a listing comes with its entries'
     * attributes (with it the kernel uses readdirplus for the first page only, unless lookups happened
     * between two pages, and {@code find -ls}, {@code ls -l} or {@code rsync} of a large directory then
     * sent one LOOKUP per entry: 5,000 lookups for 5,000 files), asks for the writeback cache in
     * {@link CacheMode.Mode#WRITEBACK}, and, where the file system keeps modes and extended attributes,
     * for POSIX ACLs ({@code FUSE_CAP_POSIX_ACL}: the kernel enforces them, {@link AclOperations} keeps
     * them) with {@code FUSE_CAP_DONT_MASK} (the umask is then the file system's to apply), and for
     * {@code FUSE_CAP_EXPORT_SUPPORT}: file handles ({@code open_by_handle_at}, NFS) of inodes the kernel
     * no longer caches are looked up by node id ({@link FuseBridge#lookup} of "{@code .}" and
     * "{@code ..}").
     */
    @SuppressWarnings("restricted") // libfuse's struct fuse_conn_info
    void init(MemorySegment userdata, MemorySegment conn) {
        MemorySegment info = conn.reinterpret(FuseStructs.CONN_INFO.byteSize());
        long wantAt = FuseStructs.offset(FuseStructs.CONN_INFO, "want");
        int capable = info.get(JAVA_INT, FuseStructs.offset(FuseStructs.CONN_INFO, "capable"));
        int want = info.get(JAVA_INT, wantAt) & ~CAP_HANDLE_KILLPRIV;
        if (cache.anyCached()) {
            want &= ~CAP_AUTO_INVAL_DATA;
        }
        if ((want & CAP_READDIRPLUS) != 0) {
            want &= ~CAP_READDIRPLUS_AUTO;
        }
        if ((capable & CAP_EXPORT_SUPPORT) != 0) {
            want |= CAP_EXPORT_SUPPORT;
        }
        if (cache.writebackCache() && (capable & CAP_WRITEBACK_CACHE) != 0) {
            want |= CAP_WRITEBACK_CACHE;
        }
        int acls = CAP_POSIX_ACL | CAP_DONT_MASK;
        if (bridge.supportsPosixAcls() && (capable & acls) == acls) {
            want |= acls;
        }
        bridge.kernelWritebackCache((want & CAP_WRITEBACK_CACHE) != 0);
        bridge.posixAcls((want & CAP_POSIX_ACL) != 0);
        info.set(JAVA_INT, wantAt, want);
        info.set(JAVA_INT, FuseStructs.offset(FuseStructs.CONN_INFO, "max_write"), FuseBridge.MAX_IO_BYTES);
        info.set(JAVA_INT, FuseStructs.offset(FuseStructs.CONN_INFO, "max_readahead"), FuseBridge.MAX_IO_BYTES);
        ReplyFlags.expectInit();
    }

    /**
     * {@code destroy(void *userdata)}: the kernel unmounts ({@code FUSE_DESTROY}, sent to {@code fuseblk}
     * mounts, which {@code umount} waits for) or the session is destroyed; closes the file system and its
     * device before libfuse answers.
     */
    void destroy(MemorySegment userdata) {
        try {
            destroyed.run();
        } catch (Throwable t) {
            System.getLogger(LowLevelOps.class.getName()).log(System.Logger.Level.ERROR, "destroy failed", t);
        }
    }

    /**
     * {@code lookup}: the entry, or where there is no such name a negative entry (node id 0) that the
     * kernel keeps for the entry timeout, so that asking again for a missing name (a build's include
     * path, a shell's command search) costs no request; every name is created through this mount, which
     * the kernel sees. A shared image answers ENOENT instead (other nodes create names).
     */
    void lookup(MemorySegment req, long parent, MemorySegment name) {
        try {
            replyEntry(req, bridge.lookup(parent, name(name)));
        } catch (java.nio.file.NoSuchFileException missing) {
            if (cache.sharedImage()) {
                replyErr(req, LinuxErrno.ENOENT);
                return;
            }
            replyNegative(req);
        } catch (Throwable t) {
            error(req, "lookup", parent, t);
        }
    }

    private void replyNegative(MemorySegment req) {
        MemorySegment e = ReplyMemory.current().entry;
        e.fill((byte) 0);
        e.set(java.lang.foreign.ValueLayout.JAVA_DOUBLE, FuseStructs.ENTRY_ENTRY_TIMEOUT, cache.entryTimeout());
        try {
            int ignored = (int) libfuse.replyEntry.invokeExact(req, e);
        } catch (Throwable t) {
            // the request is answered or gone
        }
    }

    void forget(MemorySegment req, long nodeid, long count) {
        bridge.forget(nodeid, count);
        replyNone(req);
    }

    @SuppressWarnings("restricted") // libfuse's array of struct fuse_forget_data
    void forgetMulti(MemorySegment req, long count, MemorySegment forgets) {
        long size = FuseStructs.FORGET_DATA.byteSize();
        MemorySegment all = forgets.reinterpret(count * size);
        for (long i = 0; i < count; i++) {
            bridge.forget(all.get(JAVA_LONG, i * size), all.get(JAVA_LONG, i * size + JAVA_LONG.byteSize()));
        }
        replyNone(req);
    }

    private void replyNone(MemorySegment req) {
        try {
            libfuse.replyNone.invokeExact(req);
        } catch (Throwable t) {
            // nothing to say
        }
    }

    void getattr(MemorySegment req, long nodeid, MemorySegment fi) {
        try {
            replyAttr(req, bridge.getattr(nodeid, fh(fi)));
        } catch (Throwable t) {
            error(req, "getattr", nodeid, t);
        }
    }

    @SuppressWarnings("restricted") // libfuse's struct stat
    void setattr(MemorySegment req, long nodeid, MemorySegment attr, int toSet, MemorySegment fi) {
        try {
            MemorySegment stat = attr.reinterpret(FuseStructs.STAT.byteSize());
            replyAttr(req, bridge.setattr(nodeid, change(stat, toSet), fh(fi)));
        } catch (Throwable t) {
            error(req, "setattr", nodeid, t);
        }
    }

    /**
     * @param stat the {@code struct stat} libfuse passed
     * @param toSet its {@code FUSE_SET_ATTR_*} bits
     * @return what the request asks for
     */
    static SetAttributes change(MemorySegment stat, int toSet) {
        Integer mode = (toSet & SetAttributes.SET_MODE) != 0 ? stat.get(JAVA_INT, FuseStructs.STAT_MODE) : null;
        Integer uid = (toSet & SetAttributes.SET_UID) != 0 ? stat.get(JAVA_INT, FuseStructs.STAT_UID) : null;
        Integer gid = (toSet & SetAttributes.SET_GID) != 0 ? stat.get(JAVA_INT, FuseStructs.STAT_GID) : null;
        Long size = (toSet & SetAttributes.SET_SIZE) != 0 ? stat.get(JAVA_LONG, FuseStructs.STAT_SIZE) : null;
        return new SetAttributes(mode, uid, gid, size,
                time(stat, toSet, SetAttributes.SET_ATIME, SetAttributes.SET_ATIME_NOW, FuseStructs.STAT_ATIM),
                time(stat, toSet, SetAttributes.SET_MTIME, SetAttributes.SET_MTIME_NOW, FuseStructs.STAT_MTIM),
                (toSet & SetAttributes.SET_KILL_SUIDGID) != 0);
    }

    private static java.time.Instant time(MemorySegment stat, int toSet, int set, int now, long offset) {
        if ((toSet & now) != 0) {
            return SetAttributes.NOW;
        }
        return (toSet & set) != 0 ? FuseStructs.time(stat, offset) : null;
    }

    void readlink(MemorySegment req, long nodeid) {
        try (Arena arena = Arena.ofConfined()) {
            byte[] target = bridge.readlink(nodeid);
            MemorySegment text = arena.allocate(target.length + 1L);
            text.copyFrom(MemorySegment.ofArray(target));
            int ignored = (int) libfuse.replyReadlink.invokeExact(req, text);
        } catch (Throwable t) {
            error(req, "readlink", nodeid, t);
        }
    }

    void mknod(MemorySegment req, long parent, MemorySegment name, int mode, long rdev) {
        try {
            replyEntry(req, bridge.mknod(parent, name(name), mode, rdev, caller(req)));
        } catch (Throwable t) {
            error(req, "mknod", parent, t);
        }
    }

    void mkdir(MemorySegment req, long parent, MemorySegment name, int mode) {
        try {
            replyEntry(req, bridge.mkdir(parent, name(name), mode, caller(req)));
        } catch (Throwable t) {
            error(req, "mkdir", parent, t);
        }
    }

    void unlink(MemorySegment req, long parent, MemorySegment name) {
        try {
            bridge.unlink(parent, name(name));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "unlink", parent, t);
        }
    }

    void rmdir(MemorySegment req, long parent, MemorySegment name) {
        try {
            bridge.rmdir(parent, name(name));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "rmdir", parent, t);
        }
    }

    void symlink(MemorySegment req, MemorySegment target, long parent, MemorySegment name) {
        try {
            replyEntry(req, bridge.symlink(name(target), parent, name(name), caller(req)));
        } catch (Throwable t) {
            error(req, "symlink", parent, t);
        }
    }

    void rename(MemorySegment req, long parent, MemorySegment name, long newParent, MemorySegment newName, int flags) {
        try {
            bridge.rename(parent, name(name), newParent, name(newName), flags, caller(req));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "rename", parent, t);
        }
    }

    void link(MemorySegment req, long nodeid, long newParent, MemorySegment newName) {
        try {
            replyEntry(req, bridge.link(nodeid, newParent, name(newName)));
        } catch (Throwable t) {
            error(req, "link", nodeid, t);
        }
    }

    void open(MemorySegment req, long nodeid, MemorySegment fi) {
        try {
            MemorySegment info = fileInfo(fi);
            FuseBridge.Opened opened = bridge.open(nodeid, info.get(JAVA_INT, FuseStructs.FI_FLAGS), caller(req));
            setOpenFlags(info, opened);
            if ((int) libfuse.replyOpen.invokeExact(req, info) == -LinuxErrno.ENOENT) {
                bridge.release(opened.fh());
            }
        } catch (Throwable t) {
            error(req, "open", nodeid, t);
        } finally {
            ReplyFlags.clear();
        }
    }

    void create(MemorySegment req, long parent, MemorySegment name, int mode, MemorySegment fi) {
        try {
            MemorySegment info = fileInfo(fi);
            FuseBridge.Created created = bridge.create(parent, name(name), mode, info.get(JAVA_INT, FuseStructs.FI_FLAGS),
                    caller(req));
            setOpenFlags(info, created.opened());
            MemorySegment e = ReplyMemory.current().entry;
            fillEntry(e, created.entry());
            if ((int) libfuse.replyCreate.invokeExact(req, e, info) == -LinuxErrno.ENOENT) {
                bridge.release(created.opened().fh());
                bridge.forget(created.entry().nodeid(), 1);
            }
        } catch (Throwable t) {
            error(req, "create", parent, t);
        } finally {
            ReplyFlags.clear();
        }
    }

    void read(MemorySegment req, long nodeid, long size, long offset, MemorySegment fi) {
        try {
            MemorySegment buffer = ReplyMemory.current().buffer(size);
            int n = bridge.read(fh(fi), offset, buffer.asByteBuffer());
            int ignored = (int) libfuse.replyBuf.invokeExact(req, buffer, (long) n);
        } catch (Throwable t) {
            error(req, "read", nodeid, t);
        }
    }

    /**
     * {@code write(req, ino, const char *buf, size_t size, off_t off, fi)}: the data is written straight
     * from libfuse's buffer; {@code FUSE_WRITE_KILL_SUIDGID} and {@code FUSE_WRITE_CACHE} are read from the
     * request before it ({@link KernelAbi#killsPrivileges}, {@link KernelAbi#fromPageCache}).
     */
    @SuppressWarnings("restricted") // libfuse's request buffer: the data and the fuse_write_in before it
    void write(MemorySegment req, long nodeid, MemorySegment buf, long size, long offset, MemorySegment fi) {
        try {
            long fh = fh(fi);
            MemorySegment writeIn = MemorySegment.ofAddress(buf.address() - KernelAbi.WRITE_IN_BYTES)
                    .reinterpret(KernelAbi.WRITE_IN_BYTES);
            boolean kill = KernelAbi.killsPrivileges(writeIn, fh, offset, size);
            boolean fromCache = KernelAbi.fromPageCache(writeIn, fh, offset, size);
            int n = bridge.write(fh, offset, buf.reinterpret(size).asByteBuffer(), kill, fromCache);
            int ignored = (int) libfuse.replyWrite.invokeExact(req, (long) n);
        } catch (Throwable t) {
            error(req, "write", nodeid, t);
        }
    }

    void flush(MemorySegment req, long nodeid, MemorySegment fi) {
        try {
            bridge.flush(fh(fi));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "flush", nodeid, t);
        }
    }

    void release(MemorySegment req, long nodeid, MemorySegment fi) {
        try {
            bridge.release(fh(fi));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "release", nodeid, t);
        }
    }

    void fsync(MemorySegment req, long nodeid, int datasync, MemorySegment fi) {
        try {
            bridge.fsync(fh(fi), datasync != 0);
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "fsync", nodeid, t);
        }
    }

    void opendir(MemorySegment req, long nodeid, MemorySegment fi) {
        try {
            MemorySegment info = fileInfo(fi);
            info.set(JAVA_LONG, FuseStructs.FI_FH, bridge.opendir(nodeid));
            if ((int) libfuse.replyOpen.invokeExact(req, info) == -LinuxErrno.ENOENT) {
                bridge.releasedir(info.get(JAVA_LONG, FuseStructs.FI_FH));
            }
        } catch (Throwable t) {
            error(req, "opendir", nodeid, t);
        }
    }

    void releasedir(MemorySegment req, long nodeid, MemorySegment fi) {
        bridge.releasedir(fh(fi));
        replyErr(req, 0);
    }

    void readdir(MemorySegment req, long nodeid, long size, long offset, MemorySegment fi) {
        readdir(req, nodeid, size, offset, fi, false);
    }

    void readdirplus(MemorySegment req, long nodeid, long size, long offset, MemorySegment fi) {
        readdir(req, nodeid, size, offset, fi, true);
    }

    /** readdir and readdirplus: see {@link DirectoryReplies}. */
    private void readdir(MemorySegment req, long nodeid, long size, long offset, MemorySegment fi, boolean plus) {
        try {
            directories.reply(req, bridge.listing(fh(fi), offset), size, offset, plus);
        } catch (Throwable t) {
            error(req, plus ? "readdirplus" : "readdir", nodeid, t);
        }
    }

    void statfs(MemorySegment req, long nodeid) {
        try {
            FuseBridge.Statfs stat = bridge.statfs();
            MemorySegment vfs = ReplyMemory.current().statvfs;
            vfs.fill((byte) 0);
            var layout = FuseStructs.STATVFS;
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_bsize"), stat.blockSize());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_frsize"), stat.blockSize());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_blocks"), stat.blocks());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_bfree"), stat.freeBlocks());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_bavail"), stat.availableBlocks());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_files"), stat.files());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_ffree"), stat.freeFiles());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_favail"), stat.freeFiles());
            vfs.set(JAVA_LONG, FuseStructs.offset(layout, "f_namemax"), FileNames.MAX_NAME_BYTES);
            int ignored = (int) libfuse.replyStatfs.invokeExact(req, vfs);
        } catch (Throwable t) {
            error(req, "statfs", nodeid, t);
        }
    }

    @SuppressWarnings("restricted") // the attribute's value libfuse passed, size bytes
    void setxattr(MemorySegment req, long nodeid, MemorySegment name, MemorySegment value, long size, int flags) {
        try {
            byte[] bytes = size == 0 ? new byte[0] : value.reinterpret(size).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            bridge.setxattr(nodeid, name(name), bytes, flags, caller(req));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "setxattr", nodeid, t);
        }
    }

    void getxattr(MemorySegment req, long nodeid, MemorySegment name, long size) {
        try {
            replyXattr(req, bridge.getxattr(nodeid, name(name)), size);
        } catch (Throwable t) {
            error(req, "getxattr", nodeid, t);
        }
    }

    void listxattr(MemorySegment req, long nodeid, long size) {
        try {
            replyXattr(req, bridge.listxattr(nodeid), size);
        } catch (Throwable t) {
            error(req, "listxattr", nodeid, t);
        }
    }

    /** Size 0 asks for the size; a value that does not fit is ERANGE. */
    private void replyXattr(MemorySegment req, byte[] value, long size) throws Throwable {
        if (size == 0) {
            int ignored = (int) libfuse.replyXattr.invokeExact(req, (long) value.length);
            return;
        }
        if (value.length > size) {
            replyErr(req, LinuxErrno.ERANGE);
            return;
        }
        MemorySegment buffer = ReplyMemory.current().buffer(Math.max(1, value.length));
        buffer.copyFrom(MemorySegment.ofArray(value));
        int ignored = (int) libfuse.replyBuf.invokeExact(req, buffer, (long) value.length);
    }

    void removexattr(MemorySegment req, long nodeid, MemorySegment name) {
        try {
            bridge.removexattr(nodeid, name(name));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "removexattr", nodeid, t);
        }
    }

    /**
     * {@code ioctl(req, ino, cmd, arg, fi, flags, in_buf, in_bufsz, out_bufsz)}: the inode flags' commands
     * ({@link InodeOperations#ioctl}), the label commands and {@code FITRIM}; a get answers
     * {@link InodeOperations#ioctlBytes} bytes (at most {@code out_bufsz}), a set reads them from
     * {@code in_buf}, {@code FITRIM} both. The shutdown command
     * ({@link FuseBridge#shutDown}) reads nothing (the kernel passes an {@code _IOR} command no input)
     * and answers no bytes.
     */
    @SuppressWarnings("restricted") // libfuse's copy of the command's input
    void ioctl(MemorySegment req, long nodeid, int command, MemorySegment arg, MemorySegment fi, int flags,
            MemorySegment inBuf, long inSize, long outSize) {
        try {
            int bytes = InodeOperations.ioctlBytes(command);
            MemorySegment buffer = ReplyMemory.current().buffer(Math.max(bytes, 1)).asSlice(0, bytes);
            buffer.fill((byte) 0);
            if (InodeOperations.ioctlReads(command) && bytes > 0) {
                if (inSize < bytes || inBuf.equals(MemorySegment.NULL)) {
                    replyErr(req, LinuxErrno.EINVAL);
                    return;
                }
                buffer.copyFrom(inBuf.reinterpret(bytes));
            }
            bridge.ioctl(nodeid, command, buffer.asByteBuffer(), caller(req));
            long answer = InodeOperations.ioctlAnswers(command) ? Math.min(bytes, outSize) : 0;
            MemorySegment answered = answer == 0 ? MemorySegment.NULL : buffer;
            int ignored = (int) libfuse.replyIoctl.invokeExact(req, 0, answered, answer);
        } catch (Throwable t) {
            error(req, "ioctl", nodeid, t);
        }
    }

    void fallocate(MemorySegment req, long nodeid, int mode, long offset, long length, MemorySegment fi) {
        try {
            bridge.fallocate(fh(fi), mode, offset, length, caller(req));
            replyErr(req, 0);
        } catch (Throwable t) {
            error(req, "fallocate", nodeid, t);
        }
    }

    void copyFileRange(MemorySegment req, long nodeIn, long offsetIn, MemorySegment fiIn, long nodeOut,
            long offsetOut, MemorySegment fiOut, long length, int flags) {
        try {
            long copied = bridge.copyFileRange(fh(fiIn), offsetIn, fh(fiOut), offsetOut, length, flags);
            int ignored = (int) libfuse.replyWrite.invokeExact(req, copied);
        } catch (Throwable t) {
            error(req, "copy_file_range", nodeIn, t);
        }
    }

    void lseek(MemorySegment req, long nodeid, long offset, int whence, MemorySegment fi) {
        try {
            long found = bridge.lseek(fh(fi), offset, whence);
            int ignored = (int) libfuse.replyLseek.invokeExact(req, found);
        } catch (Throwable t) {
            error(req, "lseek", nodeid, t);
        }
    }
}
