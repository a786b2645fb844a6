package dev.iomap.fuse;

import static dev.iomap.fuse.Calls.call;
import static dev.iomap.fuse.Calls.callForLong;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.UnrepresentableNameException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.util.EnumSet;
import java.util.Set;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.Errno;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.FuseConfig;
import org.cryptomator.jfuse.api.FuseConnInfo;
import org.cryptomator.jfuse.api.FuseOperations;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.Statvfs;
import org.cryptomator.jfuse.api.TimeSpec;

/**
 * jfuse's {@link FuseOperations} over an {@link IomapFileSystem}: the paths libfuse passes are the
 * file system's paths; a FUSE file handle names an open {@link IomapFile} ({@link FileHandles}).
 *
 * <p>File names are byte strings. A path is in {@link FileNames}' form once {@link RawPathBinding} has
 * bound the path-taking operations ({@link #useExactNames}): the kernel's bytes, decoded one-to-one,
 * and readdir's names go back as the bytes they stand for. Until then (or if binding failed) paths are
 * jfuse's own decoding, UTF-8 with each malformed byte turned into U+FFFD, so that distinct names
 * could collide: the bridge then refuses any path holding U+FFFD with EILSEQ, and leaves out of
 * readdir any name that is not UTF-8 (jfuse would list it with {@code '?'}s, a name that is not its
 * own). Every name in a path is at most {@value FileNames#MAX_NAME_BYTES} bytes (ENAMETOOLONG).
 *
 * <p>Every operation returns 0 (or a byte count) or a negated errno from {@link ErrnoMapping}; no
 * exception ever leaves an operation, since it would unwind into libfuse's native frames and bring
 * the JVM down. Unexpected failures are logged.
 *
 * <p>Only what jfuse may bind is declared in {@link #supportedOperations()} (declaring an operation
 * jfuse then calls with nothing behind it crashed the JVM). {@link RawPathBinding} binds the rest
 * itself: symlink, readlink, link, chmod, chown, the extended-attribute operations
 * ({@link InodeOperations}: with names and values as bytes, size probing and the kernel's errno),
 * {@link #fallocate}, {@link #copyFileRange} and {@link #lseek}; without that binding they are
 * absent (ENOSYS). Not implemented, so the kernel answers ENOSYS or its default: opendir/releasedir
 * (libfuse's defaults suffice), access (with {@code default_permissions} the kernel checks), mknod,
 * locks.
 *
 * <p>Attributes: see {@link InodeOperations} (the stored mode, owner, times with nanoseconds where the
 * file system declares {@link Capability#POSIX_ATTRIBUTES}; today's fixed ones otherwise).
 *
 * <p>Thread-safe: libfuse calls from several threads at once.
 */
public final class FuseBridge implements FuseOperations {
    private static final System.Logger LOG = System.getLogger(FuseBridge.class.getName());
    /** fcntl.h open flags (the same on every Linux architecture jfuse supports). */
    static final int O_EXCL = 0200;
    static final int O_TRUNC = 01000;
    /** {@code O_DIRECT} as the kernel passes it to FUSE on x86-64 (the open flags are the architecture's). */
    static final int O_DIRECT = 040000;
    /** {@code O_DSYNC}; {@code O_SYNC} includes it. */
    static final int O_DSYNC = 010000;
    /** {@code O_APPEND}. */
    static final int O_APPEND = 02000;
    /** linux/falloc.h. */
    static final int FALLOC_FL_KEEP_SIZE = 0x01;
    static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    static final int FALLOC_FL_ZERO_RANGE = 0x10;
    static final int FALLOC_FL_UNSHARE_RANGE = 0x40;
    /** unistd.h lseek whence (SEEK_CUR and SEEK_END are answered by the kernel itself). */
    static final int SEEK_SET = 0;
    static final int SEEK_DATA = 3;
    static final int SEEK_HOLE = 4;
    /** linux/fs.h renameat2 flags. */
    static final int RENAME_NOREPLACE = 1;
    static final int RENAME_EXCHANGE = 2;

    private final IomapFileSystem fs;
    private final Errno errno;
    private final boolean directIo;
    private final FileHandles handles = new FileHandles();
    private final InodeOperations inodes;
    private volatile boolean kernelDirectIo;
    private volatile Runnable initHook = () -> { };
    private volatile boolean exactNames;
    private volatile boolean writebackCache;
    /** Whether the kernel granted its writeback cache at {@link #init}: it then does {@code O_APPEND} itself. */
    private volatile boolean kernelWritebackCache;
    private volatile boolean readCache;
    private volatile boolean perOpenCaching;
    /** Inodes seen with more than one name since the mount: their cached opens never keep the kernel's cache. */
    private final Set<Long> linkedInodes = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Largest write and readahead the kernel is asked to send in one request: 1 MiB (libfuse's own limit). */
    static final int MAX_IO_BYTES = 1 << 20;

    /**
     * @param fs the mounted file system; the bridge never closes it
     * @param errno jfuse's errno values of this platform ({@code FuseBuilder.errno()})
     * @param uid the mounting user: the owner every file is reported with where the file system keeps no
     *     POSIX attributes, and the owner of new files until the caller is known ({@code fuse_get_context})
     * @param gid the mounting user's group, likewise
     * @param directIo whether to have every open bypass the kernel page cache (set at {@link #init})
     */
    public FuseBridge(IomapFileSystem fs, Errno errno, int uid, int gid, boolean directIo) {
        this.fs = fs;
        this.errno = errno;
        this.directIo = directIo;
        this.inodes = new InodeOperations(fs, this::checkNames, handles, new InodeOperations.Caller(uid, gid));
    }

    /** @return the inode operations, for {@link RawPathBinding} and the mount */
    InodeOperations inodes() {
        return inodes;
    }

    @Override
    public Errno errno() {
        return errno;
    }

    @Override
    public Set<Operation> supportedOperations() {
        return EnumSet.of(Operation.INIT, Operation.DESTROY, Operation.GET_ATTR, Operation.READ_DIR,
                Operation.MKDIR, Operation.CREATE, Operation.OPEN, Operation.READ, Operation.WRITE,
                Operation.TRUNCATE, Operation.UNLINK, Operation.RMDIR, Operation.RENAME, Operation.STATFS,
                Operation.FLUSH, Operation.RELEASE, Operation.FSYNC, Operation.UTIMENS);
    }

    /**
     * @return whether, after init, every open that may write bypasses the kernel page cache: libfuse's
     *     {@code direct_io} for every open, or per open with {@link #readCache}
     */
    public boolean kernelDirectIo() {
        return kernelDirectIo;
    }

    /**
     * Says that every path from now on is the kernel's bytes in {@link FileNames}' form and that
     * readdir's filler takes such names ({@link RawPathBinding}): a U+FFFD in a path is then that
     * character, not jfuse's stand-in for a byte it could not decode. Call before mounting.
     */
    void useExactNames() {
        exactNames = true;
    }

    /** @return whether paths are the kernel's bytes ({@link #useExactNames}), not jfuse's lossy decoding */
    public boolean exactNames() {
        return exactNames;
    }

    /** @return how many files the kernel has open */
    public int openFiles() {
        return handles.size();
    }

    /**
     * Closes every file the kernel still has open (a lazy unmount leaves them), so that unlinked ones
     * are freed before the file system is closed.
     *
     * @throws IOException the first failure to close
     */
    public void releaseAll() throws IOException {
        handles.releaseAll();
    }

    /**
     * @param hook run at the end of {@link #init}, on libfuse's thread, before the INIT reply is written
     *     ({@link DirectIoMmap}); must not throw
     */
    void onInit(Runnable hook) {
        this.initHook = hook;
    }

    /**
     * Asks the kernel, at {@link #init}, for its writeback cache ({@code FUSE_CAP_WRITEBACK_CACHE}):
     * with the kernel's page cache in use (no {@code direct_io}), writes are then gathered there and
     * sent in large requests when the kernel writes back, instead of each {@code write()} going through
     * at once. Ignored where the kernel cannot.
     *
     * @param on whether to ask for it
     */
    public void writebackCache(boolean on) {
        this.writebackCache = on;
    }

    /**
     * Lets read-only opens of a direct-I/O mount use the kernel's page cache (set before mounting; see
     * {@link OpenCaching#bypasses}): read-only opens of a file with one name are then served from the
     * kernel's page cache, while every open that may write stays direct I/O. Takes effect only with
     * {@link RawPathBinding} bound ({@link #exactNames}), which sets the choice in each open's reply;
     * without it every open is direct I/O, as with {@code false}.
     *
     * @param on whether read-only opens may use the kernel's page cache
     */
    public void readCache(boolean on) {
        this.readCache = on;
    }

    /**
     * @return whether each open's caching is chosen by {@link OpenCaching#bypasses} (known after
     *     {@link #init}): the mount uses the kernel's page cache ({@code directIo} false) or lets read-only
     *     opens use it ({@link #readCache}), and {@link RawPathBinding} is bound to set it in open's reply
     */
    boolean perOpenCaching() {
        return perOpenCaching;
    }

    /**
     * @param fh the handle open or create just gave
     * @param flags the open flags
     * @return whether this open must bypass the kernel's page cache ({@link OpenCaching#bypasses}); true
     *     for an unknown handle or a file whose link count cannot be read. A file with more than one name
     *     is remembered ({@link #keepsKernelCache}).
     */
    boolean bypassesKernelCache(long fh, int flags) {
        IomapFile file = handles.find(fh);
        if (file == null) {
            return true;
        }
        int links;
        try {
            links = file.stat().linkCount();
        } catch (IOException | RuntimeException e) {
            return true;
        }
        if (links > 1) {
            linkedInodes.add(file.ino());
        }
        return OpenCaching.bypasses(flags, links, directIo);
    }

    /**
     * @param fh an open file's handle
     * @return whether a cached open of it may keep what the kernel cached before ({@code keep_cache}):
     *     the file has had one name all the time it was mounted, as far as opens and {@link #linked} saw
     */
    boolean keepsKernelCache(long fh) {
        IomapFile file = handles.find(fh);
        return file != null && !linkedInodes.contains(file.ino());
    }

    /**
     * Remembers that the file a new hard link names has more than one name ({@link #keepsKernelCache}).
     *
     * @param link the new link's path
     */
    void linked(String link) {
        try {
            linkedInodes.add(fs.lstat(checkNames(link)).ino());
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "link " + link + ": cannot read its inode number; cached opens"
                    + " of other files keep the kernel's cache as before", e);
        }
    }

    /**
     * Turns on {@code direct_io} ({@link DirectIoConfig}) if asked to, and {@code use_ino} (the kernel
     * shows the file system's inode numbers, which getattr and readdir fill in); turns off
     * {@code FUSE_CAP_HANDLE_KILLPRIV} (which libfuse 3 asks for by default), so the kernel clears
     * set-user-ID and set-group-ID on chown and truncate itself, sending the new mode with the change,
     * as it does for its local filesystems; asks for requests of up to {@link #MAX_IO_BYTES} (max_write
     * and max_readahead) and, if {@link #writebackCache} asked for it and the kernel can, for the kernel's
     * writeback cache; then runs the {@link #onInit} hook.
     *
     * <p>Where opens may use the kernel's page cache ({@link #perOpenCaching}, or no {@code direct_io}),
     * {@code FUSE_CAP_AUTO_INVAL_DATA} is turned off: with it the kernel asks getattr before every
     * cached read (attributes are not cached at all where the file system has hard links) to see whether
     * someone else changed the file. Nobody else does: every change reaches the file system through this
     * mount, and the kernel drops or updates its pages itself for each (write, truncate, fallocate,
     * copy_file_range, and direct writes, see {@link OpenCaching}). Cluster mounts, whose image
     * other nodes change, are direct I/O throughout.
     */
    @Override
    public void init(FuseConnInfo conn, FuseConfig config) {
        try {
            perOpenCaching = exactNames && (readCache || !directIo);
            if (directIo && !perOpenCaching) {
                DirectIoConfig.enable(config);
            }
            DirectIoConfig.useIno(config);
            if (fs.capabilities().contains(Capability.HARD_LINKS)) {
                DirectIoConfig.noAttributeCache(config);
            }
            // The kernel, not the file system, clears set-user-ID and set-group-ID on chown and truncate.
            int want = conn.want() & ~FuseConnInfo.FUSE_CAP_HANDLE_KILLPRIV;
            if (perOpenCaching || !directIo) {
                want &= ~FuseConnInfo.FUSE_CAP_AUTO_INVAL_DATA;
            }
            if (writebackCache && (conn.capable() & FuseConnInfo.FUSE_CAP_WRITEBACK_CACHE) != 0) {
                want |= FuseConnInfo.FUSE_CAP_WRITEBACK_CACHE;
                kernelWritebackCache = true;
            }
            conn.setWant(want);
            conn.setMaxWrite(MAX_IO_BYTES);
            conn.setMaxReadahead(MAX_IO_BYTES);
            kernelDirectIo = perOpenCaching ? directIo : config.directIo() != 0;
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "init: cannot read the FUSE configuration", t);
        }
        try {
            initHook.run();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "init: the mount's hook failed", t);
        }
    }

    @Override
    public void destroy() {
        // The mount closes the file system after the FUSE loop ends; nothing to do here.
    }

    @Override
    public int getattr(String path, Stat stat, FileInfo fi) {
        return call("getattr", path, () -> {
            inodes.fill(stat, inodes.lstat(path, fi));
            return 0;
        });
    }

    @Override
    public int readdir(String path, DirFiller filler, long offset, FileInfo fi, int flags) {
        return call("readdir", path, () -> {
            var entries = fs.readdir(checkNames(path));
            filler.fill(".");
            filler.fill("..");
            for (DirEntry entry : entries) {
                if (!exactNames && !isUtf8(entry.name())) {
                    continue;
                }
                int mode = InodeOperations.defaultMode(entry.type());
                long ino = entry.ino();
                if (filler.fill(entry.name(), stat -> {
                    stat.setMode(mode);
                    StatBlocks.setIno(stat, ino);
                }, 0, 0) != 0) {
                    throw new IOException("readdir " + path + ": the kernel's buffer is full");
                }
            }
            return 0;
        });
    }

    /** mkdir(2): with POSIX attributes, {@code mode} (umask already applied) and the caller as owner. */
    @Override
    public int mkdir(String path, int mode) {
        return call("mkdir", path, () -> {
            String checked = checkNames(path);
            if (inodes.posix()) {
                fs.mkdir(checked, inodes.newInode(checked, mode, FileType.DIRECTORY));
            } else {
                fs.mkdir(checked);
            }
            return 0;
        });
    }

    @Override
    public int create(String path, int mode, FileInfo fi) {
        return call("create", path, () -> {
            IomapFile file;
            String checked = checkNames(path);
            try {
                file = inodes.posix() ? fs.create(checked, inodes.newInode(checked, mode, FileType.REGULAR))
                        : fs.create(checked);
            } catch (FileAlreadyExistsException e) {
                if ((fi.getFlags() & O_EXCL) != 0) {
                    throw e;
                }
                file = openFile(path, fi.getFlags());
            }
            if (!file.openFlags().containsAll(openFlags(fi.getFlags()))) {
                file.close();
                file = openFile(checked, fi.getFlags() & ~O_TRUNC);
            }
            fi.setFh(handles.add(file));
            return 0;
        });
    }

    @Override
    public int open(String path, FileInfo fi) {
        return call("open", path, () -> {
            fi.setFh(handles.add(openFile(checkNames(path), fi.getFlags())));
            return 0;
        });
    }

    /**
     * Opens for {@code open(2)} or {@code creat(2)}: {@code O_DIRECT} becomes a direct open
     * ({@link OpenFlag#DIRECT}: block-aligned offsets, lengths and buffers, the page cache bypassed, as
     * the kernel's {@code iomap_dio_rw}), {@code O_DSYNC}/{@code O_SYNC} a {@link OpenFlag#DSYNC} one and
     * {@code O_APPEND} an {@link OpenFlag#APPEND} one ({@link #openFlags}).
     * An adapter without {@link dev.iomap.api.Capability#DIRECT_IO} refuses {@code O_DIRECT} with
     * EINVAL, as Linux does for a filesystem without direct I/O.
     */
    private IomapFile openFile(String path, int flags) throws IOException {
        Set<OpenFlag> wanted = openFlags(flags);
        IomapFile file;
        try {
            file = wanted.isEmpty() ? fs.open(path) : fs.open(path, wanted);
        } catch (NotSupportedException e) {
            throw new NotSupportedException("open " + path + " with " + wanted + ": " + e.getMessage(),
                    NotSupportedException.Refusal.INVALID_ARGUMENT);
        }
        try {
            if ((flags & O_TRUNC) != 0 && file.size() > 0) {
                file.truncate(0);
            }
            return file;
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /**
     * The {@link OpenFlag}s that {@code open(2)} flags ask for. {@code O_APPEND} becomes
     * {@link OpenFlag#APPEND}: the kernel sends an append at the end of the file as it cached the size,
     * which another cluster node's appends (or anything else that changed the image) made stale, so
     * the file system writes it at the end it knows, under its locks; the kernel invalidates its cached
     * size after every write, so its next stat and read ask again. Not with the kernel's writeback
     * cache: the kernel then appends into its own page cache and writes back at fixed offsets through
     * any open file of the inode, which must not move them (libfuse's passthrough drops
     * {@code O_APPEND} there too).
     */
    Set<OpenFlag> openFlags(int flags) {
        Set<OpenFlag> wanted = EnumSet.noneOf(OpenFlag.class);
        if ((flags & O_APPEND) != 0 && !kernelWritebackCache) {
            wanted.add(OpenFlag.APPEND);
        }
        if ((flags & O_DIRECT) != 0) {
            wanted.add(OpenFlag.DIRECT);
        }
        if ((flags & O_DSYNC) != 0) {
            wanted.add(OpenFlag.DSYNC);
        }
        return wanted;
    }

    @Override
    public int read(String path, ByteBuffer buf, long size, long offset, FileInfo fi) {
        return call("read", path, () -> {
            IomapFile file = handles.get(fi.getFh());
            if (file.openFlags().contains(OpenFlag.DIRECT)) {
                int n = file.read(offset, buf);   // a short direct read is EOF: the next offset may be unaligned
                return Math.max(n, 0);
            }
            int total = 0;
            while (buf.hasRemaining()) {
                int n = file.read(offset + total, buf);
                if (n <= 0) {
                    break;
                }
                total += n;
            }
            return total;
        });
    }

    /**
     * A write that runs out of space after some of its bytes were written returns their count, as the
     * kernel's {@code iomap_file_buffered_write} does (a short write): the program then writes the rest
     * and gets ENOSPC for it. {@link IomapFile#write} reports the bytes it wrote by the buffer's position.
     */
    @Override
    public int write(String path, ByteBuffer buf, long size, long offset, FileInfo fi) {
        int start = buf.position();
        return call("write", path, () -> {
            try {
                return handles.get(fi.getFh()).write(offset, buf);
            } catch (NoSpaceException e) {
                int written = buf.position() - start;
                if (written > 0) {
                    return written;
                }
                throw e;
            }
        });
    }

    @Override
    public int truncate(String path, long size, FileInfo fi) {
        return call("truncate", path, () -> {
            IomapFile open = fi == null ? null : handles.find(fi.getFh());
            if (open != null) {
                open.truncate(size);
                return 0;
            }
            try (IomapFile file = fs.open(checkNames(path))) {
                file.truncate(size);
            }
            return 0;
        });
    }

    @Override
    public int unlink(String path) {
        return call("unlink", path, () -> {
            fs.unlink(checkNames(path));
            return 0;
        });
    }

    @Override
    public int rmdir(String path) {
        return call("rmdir", path, () -> {
            fs.rmdir(checkNames(path));
            return 0;
        });
    }

    /**
     * renameat2: RENAME_NOREPLACE and RENAME_EXCHANGE become {@link RenameFlag}s (decided atomically
     * by the file system); any other bit, or both, is EINVAL; an adapter without exchange gives
     * EOPNOTSUPP.
     */
    @Override
    public int rename(String oldPath, String newPath, int flags) {
        return call("rename", oldPath, () -> {
            if ((flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) != 0
                    || flags == (RENAME_NOREPLACE | RENAME_EXCHANGE)) {
                return -LinuxErrno.EINVAL;
            }
            EnumSet<RenameFlag> renameFlags = EnumSet.noneOf(RenameFlag.class);
            if ((flags & RENAME_NOREPLACE) != 0) {
                renameFlags.add(RenameFlag.NOREPLACE);
            }
            if ((flags & RENAME_EXCHANGE) != 0) {
                renameFlags.add(RenameFlag.EXCHANGE);
            }
            fs.rename(checkNames(oldPath), checkNames(newPath), renameFlags);
            return 0;
        });
    }

    @Override
    public int statfs(String path, Statvfs statvfs) {
        return call("statfs", path, () -> {
            FsStat stat = fs.statfs();
            statvfs.setBsize(stat.blockSize());
            statvfs.setFrsize(stat.blockSize());
            statvfs.setBlocks(stat.totalBlocks());
            statvfs.setBfree(stat.freeBlocks());
            statvfs.setBavail(stat.freeBlocks());
            statvfs.setNameMax(FileNames.MAX_NAME_BYTES);
            StatvfsInodes.set(statvfs, stat.totalInodes(), stat.freeInodes());
            return 0;
        });
    }

    /** close(2) of one descriptor: nothing to make durable (as in local filesystems), only a check. */
    @Override
    public int flush(String path, FileInfo fi) {
        return call("flush", path, () -> {
            handles.get(fi.getFh());
            return 0;
        });
    }

    @Override
    public int release(String path, FileInfo fi) {
        return call("release", path, () -> {
            handles.release(fi.getFh());
            return 0;
        });
    }

    @Override
    public int fsync(String path, int datasync, FileInfo fi) {
        return call("fsync", path, () -> {
            IomapFile file = handles.get(fi.getFh());
            if (datasync != 0) {
                file.fdatasync();
            } else {
                file.fsync();
            }
            return 0;
        });
    }

    /** See {@link InodeOperations#utimens}: now, omit or explicit nanosecond times (now/omit only without POSIX attributes). */
    @Override
    public int utimens(String path, TimeSpec atime, TimeSpec mtime, FileInfo fi) {
        return inodes.utimens(path, atime, mtime, fi);
    }

    /**
     * copy_file_range(2) between two open files, which {@link RawPathBinding} binds (jfuse has no such
     * operation): see {@link RangeCopy}.
     *
     * @param pathIn the source's path (not used: the handle names the file)
     * @param fiIn the open source (EBADF if null or not open)
     * @param offsetIn where to read from
     * @param pathOut the destination's path (not used)
     * @param fiOut the open destination
     * @param offsetOut where to write to
     * @param size bytes asked for
     * @param flags must be 0 (EINVAL otherwise, as the kernel)
     * @return bytes copied (fewer at the source's EOF, 0 at or past it), or a negated errno
     */
    public long copyFileRange(String pathIn, FileInfo fiIn, long offsetIn, String pathOut, FileInfo fiOut,
            long offsetOut, long size, int flags) {
        return callForLong("copy_file_range", pathIn, () -> {
            if (fiIn == null || fiOut == null) {
                return -LinuxErrno.EBADF;
            }
            if (flags != 0) {
                return -LinuxErrno.EINVAL;
            }
            return RangeCopy.copy(fs, handles.get(fiIn.getFh()), offsetIn, handles.get(fiOut.getFh()), offsetOut,
                    size);
        });
    }

    /**
     * fallocate(2) of an open file: mode 0 allocates, {@code PUNCH_HOLE} (only with {@code KEEP_SIZE},
     * as the kernel requires) punches, {@code ZERO_RANGE} zeroes, {@code UNSHARE_RANGE} unshares; any
     * other mode is EOPNOTSUPP.
     */
    @Override
    public int fallocate(String path, int mode, long offset, long length, FileInfo fi) {
        return call("fallocate", path, () -> {
            if (offset < 0 || length <= 0) {
                return -LinuxErrno.EINVAL;
            }
            IomapFile file = handles.get(fi.getFh());
            boolean keepSize = (mode & FALLOC_FL_KEEP_SIZE) != 0;
            FallocateMode what;
            switch (mode & ~FALLOC_FL_KEEP_SIZE) {
                case 0 -> what = FallocateMode.ALLOCATE;
                case FALLOC_FL_PUNCH_HOLE -> {
                    if (!keepSize) {
                        return -LinuxErrno.EOPNOTSUPP;
                    }
                    what = FallocateMode.PUNCH_HOLE;
                }
                case FALLOC_FL_ZERO_RANGE -> what = FallocateMode.ZERO_RANGE;
                case FALLOC_FL_UNSHARE_RANGE -> {
                    file.unshare(offset, length);
                    return 0;
                }
                default -> {
                    return -LinuxErrno.EOPNOTSUPP;
                }
            }
            file.fallocate(what, offset, length, keepSize);
            return 0;
        });
    }

    /**
     * lseek(2) of an open file, which {@link RawPathBinding} binds (jfuse 0.7.3 has no such operation).
     * The kernel sends only {@code SEEK_DATA} and {@code SEEK_HOLE} (fs/fuse/file.c,
     * {@code fuse_file_llseek}); they go to {@link IomapFile#seekData} and {@link IomapFile#seekHole}
     * (ENXIO at or past EOF, and for {@code SEEK_DATA} in a hole that runs to EOF). {@code SEEK_SET}
     * answers {@code offset} (EINVAL if negative); any other {@code whence}, {@code SEEK_CUR} and
     * {@code SEEK_END} included, is EINVAL: the current position and the size are the kernel's.
     *
     * @param path the file's path (not used: the handle names the file)
     * @param offset where to start
     * @param whence {@code SEEK_SET}, {@code SEEK_DATA} or {@code SEEK_HOLE}
     * @param fi the open file (EBADF if null or not open)
     * @return the offset found, or a negated errno
     */
    public long lseek(String path, long offset, int whence, FileInfo fi) {
        return callForLong("lseek", path, () -> {
            if (fi == null) {
                return -LinuxErrno.EBADF;
            }
            IomapFile file = handles.get(fi.getFh());
            return switch (whence) {
                case SEEK_SET -> offset < 0 ? -LinuxErrno.EINVAL : offset;
                case SEEK_DATA -> file.seekData(offset);
                case SEEK_HOLE -> file.seekHole(offset);
                default -> -LinuxErrno.EINVAL;
            };
        });
    }

    /**
     * @return {@code path}, each of whose names is a valid name ({@link FileNames#check})
     * @throws UnrepresentableNameException (EILSEQ) for a name that stands for no byte string, or
     *     holding U+FFFD while names are jfuse's lossy decoding
     * @throws java.nio.file.InvalidPathException "name longer than 255 bytes" (ENAMETOOLONG)
     */
    String checkNames(String path) {
        if (!exactNames && path.indexOf('\uFFFD') >= 0) {
            throw new UnrepresentableNameException(path, "a byte that is not UTF-8 reached the bridge as U+FFFD"
                    + " (jfuse's decoding: raw names are not bound), refused so that two names never become one");
        }
        int start = 0;
        while (start < path.length()) {
            int end = path.indexOf('/', start);
            end = end < 0 ? path.length() : end;
            if (end > start) {
                FileNames.check(path.substring(start, end));
            }
            start = end + 1;
        }
        return path;
    }

    /** @return whether {@code name} is plain UTF-8 (no escaped byte, so jfuse's filler encodes it exactly) */
    private static boolean isUtf8(String name) {
        return name.codePoints().noneMatch(c -> c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE);
    }
}
