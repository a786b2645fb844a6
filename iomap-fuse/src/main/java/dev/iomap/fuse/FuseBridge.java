package dev.iomap.fuse;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.UnrepresentableNameException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.time.Instant;
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
 * <p>Only what is implemented is declared in {@link #supportedOperations()} (declaring an operation
 * jfuse then calls with nothing behind it crashed the JVM). Not declared, so the kernel answers
 * ENOSYS or its default: opendir/releasedir (libfuse's defaults suffice), access, chmod, chown,
 * links, symlinks, xattrs, locks. {@link #fallocate} and {@link #lseek} are not operations jfuse
 * 0.7.3 can bind; {@link RawPathBinding} binds them.
 *
 * <p>Thread-safe: libfuse calls from several threads at once.
 */
public final class FuseBridge implements FuseOperations {
    private static final System.Logger LOG = System.getLogger(FuseBridge.class.getName());
    private static final int DIRECTORY_MODE = Stat.S_IFDIR | 0755;
    private static final int FILE_MODE = Stat.S_IFREG | 0644;
    /** fcntl.h open flags (the same on every Linux architecture jfuse supports). */
    static final int O_EXCL = 0200;
    static final int O_TRUNC = 01000;
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
    private final int uid;
    private final int gid;
    private final boolean directIo;
    private final FileHandles handles = new FileHandles();
    private volatile boolean kernelDirectIo;
    private volatile boolean exactNames;

    /**
     * @param fs the mounted file system; the bridge never closes it
     * @param errno jfuse's errno values of this platform ({@code FuseBuilder.errno()})
     * @param uid the owner every file is reported with
     * @param gid the group every file is reported with
     * @param directIo whether to have every open bypass the kernel page cache (set at {@link #init})
     */
    public FuseBridge(IomapFileSystem fs, Errno errno, int uid, int gid, boolean directIo) {
        this.fs = fs;
        this.errno = errno;
        this.uid = uid;
        this.gid = gid;
        this.directIo = directIo;
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

    /** @return whether libfuse's configuration, after init, has every open bypass the kernel page cache */
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

    @FunctionalInterface
    private interface Body {
        long run() throws Exception;
    }

    private static int call(String op, String path, Body body) {
        return Math.toIntExact(callForLong(op, path, body));
    }

    /** As {@link #call}, for an operation whose answer is an offset ({@code off_t}). */
    private static long callForLong(String op, String path, Body body) {
        try {
            return body.run();
        } catch (Throwable t) {
            int errno = ErrnoMapping.errno(t);
            if (errno == LinuxErrno.EIO || errno == LinuxErrno.EUCLEAN) {
                LOG.log(System.Logger.Level.WARNING, op + " " + path + " failed: " + LinuxErrno.name(errno), t);
            }
            return -errno;
        }
    }

    /** Turns on {@code direct_io} ({@link DirectIoConfig}) if asked to. */
    @Override
    public void init(FuseConnInfo conn, FuseConfig config) {
        try {
            if (directIo) {
                DirectIoConfig.enable(config);
            }
            kernelDirectIo = config.directIo() != 0;
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "init: cannot read the FUSE configuration", t);
        }
    }

    @Override
    public void destroy() {
        // The mount closes the file system after the FUSE loop ends; nothing to do here.
    }

    @Override
    public int getattr(String path, Stat stat, FileInfo fi) {
        return call("getattr", path, () -> {
            IomapFile open = fi == null ? null : handles.find(fi.getFh());
            fill(stat, open != null ? open.stat() : fs.stat(checkNames(path)));
            return 0;
        });
    }

    private void fill(Stat stat, FileStat file) {
        boolean dir = file.isDirectory();
        stat.setMode(dir ? DIRECTORY_MODE : FILE_MODE);
        // A directory reports 1 link ("unknown"), so no tool counts subdirectories from it.
        stat.setNLink((short) (dir ? 1 : Math.min(file.linkCount(), Short.MAX_VALUE)));
        stat.setSize(file.size());
        StatBlocks.set(stat, file.allocatedBytes());
        stat.setUid(uid);
        stat.setGid(gid);
        Instant modified = Instant.ofEpochMilli(file.modifiedMillis());
        stat.mTime().set(modified);
        stat.cTime().set(modified);
        stat.aTime().set(modified);
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
                int mode = entry.type() == FileType.DIRECTORY ? DIRECTORY_MODE : FILE_MODE;
                if (filler.fill(entry.name(), stat -> stat.setMode(mode), 0, 0) != 0) {
                    throw new IOException("readdir " + path + ": the kernel's buffer is full");
                }
            }
            return 0;
        });
    }

    @Override
    public int mkdir(String path, int mode) {
        return call("mkdir", path, () -> {
            fs.mkdir(checkNames(path));
            return 0;
        });
    }

    @Override
    public int create(String path, int mode, FileInfo fi) {
        return call("create", path, () -> {
            IomapFile file;
            try {
                file = fs.create(checkNames(path));
            } catch (FileAlreadyExistsException e) {
                if ((fi.getFlags() & O_EXCL) != 0) {
                    throw e;
                }
                file = openFile(path, fi.getFlags());
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

    private IomapFile openFile(String path, int flags) throws IOException {
        IomapFile file = fs.open(path);
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

    @Override
    public int read(String path, ByteBuffer buf, long size, long offset, FileInfo fi) {
        return call("read", path, () -> {
            IomapFile file = handles.get(fi.getFh());
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

    @Override
    public int write(String path, ByteBuffer buf, long size, long offset, FileInfo fi) {
        return call("write", path, () -> handles.get(fi.getFh()).write(offset, buf));
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

    /**
     * Accepts only "set to now" and "leave": the file systems keep their own modification time, and
     * this is what {@code touch} asks for. Explicit times get EOPNOTSUPP.
     */
    @Override
    public int utimens(String path, TimeSpec atime, TimeSpec mtime, FileInfo fi) {
        return call("utimens", path, () -> {
            if (!nowOrOmit(atime) || !nowOrOmit(mtime)) {
                return -LinuxErrno.EOPNOTSUPP;
            }
            IomapFile open = fi == null ? null : handles.find(fi.getFh());
            if (open == null) {
                fs.stat(checkNames(path));
            }
            return 0;
        });
    }

    private static boolean nowOrOmit(TimeSpec time) {
        return time == null || time.isUtimeNow() || time.isUtimeOmit();
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
    private String checkNames(String path) {
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
