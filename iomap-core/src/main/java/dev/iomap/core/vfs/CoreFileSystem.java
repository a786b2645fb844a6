package dev.iomap.core.vfs;

import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.FsStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.XattrMode;
import dev.iomap.api.Xattrs;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.XattrOps;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.RenameFlags;
import dev.iomap.core.CachedInode;
import dev.iomap.core.IomapCache;
import java.io.IOException;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link IomapFileSystem} over an adapter's {@link MountedFileSystem} and one {@link IomapCache}.
 *
 * <p>Namespace operations are serialised by one lock; file data goes through the cache with only
 * inode and folio locks. Inodes stay cached after their files close (their pages are the cache); an
 * inode left with no name is evicted when its last open file closes.
 *
 * <p>Paths resolve through symbolic links as {@link IomapFileSystem} says, with {@link PathWalk}.
 *
 * <p>An {@link OutOfMemoryError} in any thread of the mount (a caller inside an operation, the
 * flusher, an ioend completion, background readahead) shuts the mount down ({@link #shutDown}): the
 * operation and every later one fail with {@link FileSystemShutdownException} (EIO), the device takes
 * no more writes ({@link ShutdownGate}), and {@link #close()} writes nothing, so the image is left as a
 * crash would leave it, for the adapter's journal replay or fsck at the next mount. Half of a change
 * the error interrupted never reaches the device through a later commit.
 */
final class CoreFileSystem implements IomapFileSystem {
    private final FileSystemAdapter adapter;
    private final MountedFileSystem mount;
    private final SuperOps supers;
    private final InodeOps inodes;
    private final FileOps files;
    private final XattrOps xattrs;
    /** Linux's refusals for immutable and append-only inodes. */
    private final InodeFlagRules flagRules;
    private final IomapCache cache;
    private final Set<Capability> capabilities;
    /** What atomic writes the regular files take: the adapter's limits, checked once at mount. */
    private final AtomicWriteLimits atomicWriteLimits;
    private final ReentrantLock namespace = new ReentrantLock();
    private final Map<Long, Integer> openCounts = new HashMap<>();
    private final Map<Long, Boolean> unlinked = new HashMap<>();
    private volatile boolean closed;
    private final ShutdownGate gate;
    /** Closed last by {@link #close()}, after the unmount: a cluster mount's connection; null if none. */
    private final java.io.Closeable afterUnmount;

    CoreFileSystem(FileSystemAdapter adapter, MountedFileSystem mount, ShutdownGate device, MountOptions options) {
        this(adapter, mount, device, options, null);
    }

    /** @param afterUnmount closed by {@link #close()} after the adapter unmounted (and the cache closed); may be null */
    CoreFileSystem(FileSystemAdapter adapter, MountedFileSystem mount, ShutdownGate device, MountOptions options,
            java.io.Closeable afterUnmount) {
        this.afterUnmount = afterUnmount;
        this.gate = device;
        this.adapter = adapter;
        this.mount = mount;
        this.supers = mount.superOps();
        this.inodes = mount.inodeOps();
        this.files = mount.fileOps();
        this.xattrs = mount.xattrOps();
        this.capabilities = Capability.withImplied(adapter.capabilities());
        this.flagRules = new InodeFlagRules(inodes, capabilities.contains(Capability.INODE_FLAGS));
        this.atomicWriteLimits = atomicWriteLimits(adapter, mount, capabilities);
        this.cache = new IomapCache(options.pageCache(), device);
        cache.onOutOfMemory(this::shutDown);
        if (options.backgroundWriteback()) {
            cache.startBackgroundWriteback();
        }
    }

    MountedFileSystem mount() {
        return mount;
    }

    /** @return the mount's inode operations, as asked for once at mount */
    InodeOps inodes() {
        return inodes;
    }

    /** @return the mount's file operations, as asked for once at mount */
    FileOps files() {
        return files;
    }

    IomapCache cache() {
        return cache;
    }

    @Override
    public String adapterName() {
        return adapter.name();
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    /**
     * @return the mount's {@link MountedFileSystem#atomicWriteLimits}, {@link AtomicWriteLimits#NONE}
     *     without {@link Capability#ATOMIC_WRITES}
     * @throws IllegalStateException if an adapter declaring the capability reports limits that direct I/O
     *     cannot take: none, without {@link Capability#DIRECT_IO}, or a unit min not a multiple of the block
     *     size
     */
    private static AtomicWriteLimits atomicWriteLimits(FileSystemAdapter adapter, MountedFileSystem mount,
            Set<Capability> capabilities) {
        if (!capabilities.contains(Capability.ATOMIC_WRITES)) {
            return AtomicWriteLimits.NONE;
        }
        AtomicWriteLimits limits = mount.atomicWriteLimits();
        if (!limits.supported() || !capabilities.contains(Capability.DIRECT_IO)
                || limits.unitMin() % mount.blockSize() != 0) {
            throw new IllegalStateException(adapter.name() + " declares ATOMIC_WRITES but reports " + limits
                    + " for block size " + mount.blockSize() + (capabilities.contains(Capability.DIRECT_IO) ? ""
                            : " without DIRECT_IO") + ": atomic writes are direct writes of whole blocks");
        }
        return limits;
    }

    /** @return what atomic writes the mount's regular files take */
    AtomicWriteLimits atomicWriteLimits() {
        return atomicWriteLimits;
    }

    void require(Capability capability, String operation) throws NotSupportedException {
        if (!capabilities.contains(capability)) {
            throw new NotSupportedException(operation + " is not supported by " + adapter.name()
                    + " (it does not declare " + capability + ")");
        }
    }

    /**
     * @throws ClosedFileSystemException if the filesystem was closed
     * @throws FileSystemShutdownException if it was shut down
     */
    void ensureOpen() throws FileSystemShutdownException {
        if (closed) {
            throw new ClosedFileSystemException();
        }
        gate.check();
    }

    /**
     * Shuts the mount down after an {@link OutOfMemoryError} in one of its threads (see the class
     * comment); the first call logs one line, later ones only return the shutdown's exception.
     *
     * @param error the error
     * @return what the operation that met the error throws instead
     */
    FileSystemShutdownException shutDown(OutOfMemoryError error) {
        boolean first = !gate.isShutDown();
        FileSystemShutdownException e = gate.shutDown(adapter.name() + " mount shut down: out of memory in thread "
                + Thread.currentThread().getName() + " (" + error.getMessage() + "); nothing more is written:"
                + " unmount, and the next mount recovers the image (give Java more memory, -Xmx)", error);
        if (first) {
            System.getLogger(CoreFileSystem.class.getName()).log(System.Logger.Level.ERROR, e.getMessage());
        }
        return e;
    }

    /**
     * Shuts the mount down on request ({@link IomapFileSystem#shutDown()}): first the log force, a
     * {@link #sync} (every file written back, then the adapter's commit: what was changed before the call
     * is durable, and no committed metadata points at blocks whose data was not written), unless the mount
     * is shut down already; then the gate closes, so that no write submitted later reaches the device, and
     * the device is flushed. A log force that fails is logged, and the mount is shut down all the same.
     */
    @Override
    public void shutDown() throws IOException {
        if (closed) {
            throw new ClosedFileSystemException();
        }
        boolean first = !gate.isShutDown();
        if (first) {
            try {
                sync();
            } catch (IOException | RuntimeException e) {
                System.getLogger(CoreFileSystem.class.getName()).log(System.Logger.Level.WARNING, adapter.name()
                        + ": the log force before the shutdown on request failed (" + e.getMessage() + "); what it"
                        + " had not made durable is lost");
            }
        }
        FileSystemShutdownException e = gate.shutDown(adapter.name() + " mount shut down on request: nothing more"
                + " is written; unmount, and the next mount recovers the image (what was fsync'd is kept)", null);
        if (first) {
            System.getLogger(CoreFileSystem.class.getName()).log(System.Logger.Level.INFO, e.getMessage());
        }
        gate.flushBelow();
    }

    @Override
    public IomapFile create(String path) throws IOException {
        return create(path, NewInodeAttributes.defaults(FileType.REGULAR));
    }

    @Override
    public IomapFile create(String path, NewInodeAttributes attributes) throws IOException {
        if (hasTrailingSlash(path)) {
            throw new FileSystemException(path, null, "Is a directory");
        }
        return locked(() -> {
            Parent parent = parent(path);
            flagRules.mayCreateIn(parent.dir(), path);
            long ino = inodes.create(parent.dir(), parent.name(), FileType.REGULAR, attributes);
            return openInode(ino);
        });
    }

    @Override
    public IomapFile open(String path) throws IOException {
        return open(path, Set.of());
    }

    @Override
    public IomapFile open(String path, Set<OpenFlag> flags) throws IOException {
        Set<OpenFlag> openFlags = flags.isEmpty() ? Set.of() : Set.copyOf(flags);
        if (openFlags.contains(OpenFlag.DIRECT)) {
            require(Capability.DIRECT_IO, "direct I/O (open of " + path + " with DIRECT)");
        }
        return locked(() -> {
            long ino = resolve(path, true);
            FileType type = inodes.getattr(ino).type();
            if (type != FileType.REGULAR) {
                throw new FileSystemException(path, null, type == FileType.DIRECTORY ? "Is a directory"
                        : "not a regular file: " + type);
            }
            Set<FileFlag> inodeFlags = flagRules.of(ino);
            InodeFlagRules.mayOpen(inodeFlags, openFlags, path);
            return openInode(ino, openFlags, inodeFlags);
        });
    }

    /**
     * {@link IomapFile#reopen}: a new open of an inode that is open (so cached), named or not, with the
     * checks of {@link #open(String, Set)}.
     */
    IomapFile reopen(long ino, Set<OpenFlag> flags) throws IOException {
        Set<OpenFlag> openFlags = flags.isEmpty() ? Set.of() : Set.copyOf(flags);
        if (openFlags.contains(OpenFlag.DIRECT)) {
            require(Capability.DIRECT_IO, "direct I/O (open of inode " + ino + " with DIRECT)");
        }
        return locked(() -> {
            Set<FileFlag> inodeFlags = flagRules.of(ino);
            InodeFlagRules.mayOpen(inodeFlags, openFlags, "inode " + ino);
            return openInode(ino, openFlags, inodeFlags);
        });
    }

    @Override
    public void mkdir(String path) throws IOException {
        mkdir(path, NewInodeAttributes.defaults(FileType.DIRECTORY));
    }

    @Override
    public void mkdir(String path, NewInodeAttributes attributes) throws IOException {
        require(Capability.DIRECTORIES, "mkdir");
        locked(() -> {
            Parent parent = parent(path);
            flagRules.mayCreateIn(parent.dir(), path);
            return inodes.create(parent.dir(), parent.name(), FileType.DIRECTORY, attributes);
        });
    }

    @Override
    public String realPath(String path) throws IOException {
        return locked(() -> {
            PathWalk walk = new PathWalk(mount.rootIno(), inodes, path);
            walk.names(Paths.names(path), true);
            return walk.path();
        });
    }

    @Override
    public void createSymbolicLink(String link, String target, NewInodeAttributes attributes) throws IOException {
        require(Capability.SYMLINKS, "symbolic link");
        byte[] bytes = FileNames.checkTarget(target);
        locked(() -> {
            Parent parent = parent(link);
            flagRules.mayCreateIn(parent.dir(), link);
            return inodes.symlink(parent.dir(), parent.name(), bytes, attributes);
        });
    }

    @Override
    public void createSpecialFile(String path, FileType type, long rdev, NewInodeAttributes attributes)
            throws IOException {
        if (!type.isSpecial()) {
            throw new IllegalArgumentException(path + ": " + type + " is not a special file's type");
        }
        if (rdev != 0 && !type.isDevice()) {
            throw new IllegalArgumentException(path + ": a " + type + " has no device number, not " + rdev);
        }
        require(Capability.SPECIAL_FILES, "special file");
        locked(() -> {
            Parent parent = parent(path);
            flagRules.mayCreateIn(parent.dir(), path);
            return inodes.mknod(parent.dir(), parent.name(), type, rdev, attributes);
        });
    }

    @Override
    public String readSymbolicLink(String link) throws IOException {
        require(Capability.SYMLINKS, "symbolic link");
        return locked(() -> {
            long ino = resolve(link, false);
            if (inodes.getattr(ino).type() != FileType.SYMLINK) {
                throw new NotLinkException(link, null, "not a symbolic link");
            }
            return FileNames.decode(inodes.readlink(ino));
        });
    }

    @Override
    public void createLink(String link, String existing) throws IOException {
        require(Capability.HARD_LINKS, "hard link");
        locked(() -> {
            long ino = resolve(existing, false);
            if (inodes.getattr(ino).type() == FileType.DIRECTORY) {
                throw new OperationNotPermittedException(existing, "hard link to a directory");
            }
            flagRules.mayLink(ino, existing);
            Parent parent = parent(link);
            flagRules.mayCreateIn(parent.dir(), link);
            inodes.link(ino, parent.dir(), parent.name());
            return null;
        });
    }

    @Override
    public FileStat setAttributes(String path, AttributeChange change) throws IOException {
        require(Capability.POSIX_ATTRIBUTES, "attribute change");
        return locked(() -> {
            long ino = resolve(path, false);
            if (change.mode().isPresent() && inodes.getattr(ino).type() == FileType.SYMLINK) {
                throw new NotSupportedException("mode of symbolic link '" + path + "': links have no mode of"
                        + " their own");
            }
            if (change.access() && flagRules.skipsAccessTime(ino)) {
                return stat(ino);
            }
            flagRules.maySetattr(ino, change, path);
            if (!change.isEmpty()) {
                CachedInode cached = cache.inode(ino);
                if (cached != null) {
                    cached.forgetTimesSet();
                }
                inodes.setattr(ino, change);
            }
            return stat(ino);
        });
    }

    @Override
    public byte[] getXattr(String path, String name) throws IOException {
        require(Capability.XATTRS, "extended attributes");
        Xattrs.checkName(name);
        return locked(() -> xattrs.getxattr(resolve(path, false), name));
    }

    @Override
    public List<String> listXattrs(String path) throws IOException {
        require(Capability.XATTRS, "extended attributes");
        return locked(() -> xattrs.listxattr(resolve(path, false)));
    }

    @Override
    public void setXattr(String path, String name, byte[] value, XattrMode mode) throws IOException {
        require(Capability.XATTRS, "extended attributes");
        Xattrs.checkName(name);
        Xattrs.checkValue(name, value);
        byte[] copy = value.clone();
        locked(() -> {
            long ino = resolve(path, false);
            refuseUserXattrOnLink(path, ino, name);
            flagRules.mayChangeXattrs(ino, path);
            xattrs.setxattr(ino, name, copy, mode);
            return null;
        });
    }

    @Override
    public void removeXattr(String path, String name) throws IOException {
        require(Capability.XATTRS, "extended attributes");
        Xattrs.checkName(name);
        locked(() -> {
            long ino = resolve(path, false);
            refuseUserXattrOnLink(path, ino, name);
            flagRules.mayChangeXattrs(ino, path);
            xattrs.removexattr(ino, name);
            return null;
        });
    }

    @Override
    public Set<FileFlag> getFileFlags(String path) throws IOException {
        return locked(() -> inodes.getflags(resolve(path, true)));
    }

    @Override
    public void setFileFlags(String path, Set<FileFlag> flags) throws IOException {
        Set<FileFlag> copy = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
        if (copy.contains(FileFlag.JOURNAL_DATA)) {
            require(Capability.JOURNALED_DATA, "journaled data");
        }
        for (FileFlag flag : copy) {
            if (flag != FileFlag.JOURNAL_DATA) {
                require(Capability.INODE_FLAGS, "the inode flag " + flag);
            }
        }
        locked(() -> {
            long ino = resolve(path, true);
            FileType type = copy.contains(FileFlag.DAX) ? inodes.getattr(ino).type() : FileType.REGULAR;
            if (type != FileType.REGULAR && type != FileType.DIRECTORY) {
                throw new IllegalArgumentException(path + ": the DAX flag is for regular files and directories");
            }
            CachedInode cached = cache.inode(ino);
            inodes.setflags(ino, Optional.ofNullable(cached), copy);
            if (cached != null) {
                cached.fileFlags(copy);
            }
            return null;
        });
    }

    /** Linux keeps {@code user.} attributes off symbolic links and special files: EPERM. */
    private void refuseUserXattrOnLink(String path, long ino, String name) throws IOException {
        FileType type = Xattrs.isUser(name) ? inodes.getattr(ino).type() : FileType.REGULAR;
        if (type == FileType.SYMLINK || type.isSpecial()) {
            throw new OperationNotPermittedException(path, "user." + " extended attribute on a " + type);
        }
    }

    /**
     * A write or mapped store is starting on {@code inode}: set its mtime and ctime, at most once a
     * millisecond (the kernel's coarse timestamps do the same with its clock tick); an explicit
     * {@link #setAttributes} resets the interval.
     */
    void touch(CachedInode inode) throws IOException {
        if (capabilities.contains(Capability.POSIX_ATTRIBUTES)
                && inode.timesDue(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(1))) {
            inodes.updateTimes(inode, Instant.now());
        }
    }

    @Override
    public List<DirEntry> readdir(String path) throws IOException {
        return locked(() -> {
            long ino = resolve(path, true);
            if (inodes.getattr(ino).type() != FileType.DIRECTORY) {
                throw new NotDirectoryException(path);
            }
            return inodes.readdir(ino);
        });
    }

    @Override
    public void unlink(String path) throws IOException {
        locked(() -> {
            Parent parent = parent(path);
            long ino = inodes.lookup(parent.dir(), parent.name());
            if (hasTrailingSlash(path) && inodes.getattr(ino).type() != FileType.DIRECTORY) {
                throw new NotDirectoryException(path);
            }
            flagRules.mayDelete(parent.dir(), ino, path);
            inodes.unlink(parent.dir(), parent.name());
            forgetIfUnlinked(ino);
            return null;
        });
    }

    @Override
    public void rmdir(String path) throws IOException {
        locked(() -> {
            Parent parent = parent(path);
            flagRules.mayDelete(parent.dir(), inodes.lookup(parent.dir(), parent.name()), path);
            inodes.rmdir(parent.dir(), parent.name());
            return null;
        });
    }

    @Override
    public void rename(String from, String to) throws IOException {
        require(Capability.RENAME, "rename");
        move(from, to, false, null);
    }

    /**
     * NOREPLACE looks the target up under the namespace lock that serialises every namespace change,
     * so nothing can create it between the check and the rename. EXCHANGE refuses a directory and a
     * name in its own subtree by path (directories have exactly one name) before the adapter sees it.
     */
    @Override
    public void rename(String from, String to, Set<RenameFlag> flags, NewInodeAttributes whiteout)
            throws IOException {
        RenameFlags.check(flags);
        if (flags.contains(RenameFlag.EXCHANGE)) {
            require(Capability.RENAME_EXCHANGE, "rename with EXCHANGE");
            exchange(from, to);
            return;
        }
        require(Capability.RENAME, "rename");
        if (flags.contains(RenameFlag.WHITEOUT)) {
            require(Capability.SPECIAL_FILES, "rename with WHITEOUT");
        }
        move(from, to, flags.contains(RenameFlag.NOREPLACE), flags.contains(RenameFlag.WHITEOUT) ? whiteout : null);
    }

    @Override
    public void rename(String from, String to, Set<RenameFlag> flags) throws IOException {
        rename(from, to, flags, NewInodeAttributes.defaults(FileType.CHARACTER_DEVICE));
    }

    /**
     * A rename other than an exchange, under the namespace lock: two names of one inode change nothing
     * (and leave no whiteout), as rename(2).
     *
     * @param noReplace refuse an existing target ({@link RenameFlag#NOREPLACE})
     * @param whiteout the owner of the whiteout left at the old name, or null for none
     */
    private void move(String from, String to, boolean noReplace, NewInodeAttributes whiteout) throws IOException {
        locked(() -> {
            Parent source = parent(from);
            Parent target = parent(to);
            long sourceIno = inodes.lookup(source.dir(), source.name());
            long targetIno = lookupIfPresent(target);
            if (noReplace && targetIno >= 0) {
                throw new FileAlreadyExistsException(to, null, "exists, and rename was asked not to replace it");
            }
            if (targetIno == sourceIno) {
                return null;
            }
            refuseAncestors(source, sourceIno, target, targetIno, to);
            flagRules.mayDelete(source.dir(), sourceIno, from);
            flagRules.mayCreateIn(target.dir(), to);
            if (targetIno >= 0) {
                flagRules.mayDelete(target.dir(), targetIno, to);
            }
            long orphan = whiteout == null
                    ? inodes.rename(source.dir(), source.name(), target.dir(), target.name())
                    : inodes.renameWhiteout(source.dir(), source.name(), target.dir(), target.name(), whiteout);
            if (orphan >= 0) {
                forgetIfUnlinked(orphan);
            }
            return null;
        });
    }

    private void exchange(String from, String to) throws IOException {
        List<String> fromNames = Paths.names(from);
        List<String> toNames = Paths.names(to);
        if (!fromNames.equals(toNames) && (isPrefix(fromNames, toNames) || isPrefix(toNames, fromNames))) {
            throw new IllegalArgumentException("cannot exchange '" + from + "' and '" + to
                    + "': one is inside the other");
        }
        locked(() -> {
            Parent first = parent(from);
            Parent second = parent(to);
            long firstIno = inodes.lookup(first.dir(), first.name());
            long secondIno = inodes.lookup(second.dir(), second.name());
            if (first.dir() == second.dir() && first.name().equals(second.name())) {
                return null;
            }
            flagRules.mayDelete(first.dir(), firstIno, from);
            flagRules.mayDelete(second.dir(), secondIno, to);
            inodes.exchange(first.dir(), first.name(), second.dir(), second.name());
            return null;
        });
    }

    /**
     * {@code rename(2)}'s two ancestor refusals, decided on the inode chains the walks saw: a source
     * directory above the target would move into its own subtree (EINVAL, an
     * {@link IllegalArgumentException}); a target directory above the source is not empty, the source
     * being in it (ENOTEMPTY).
     *
     * @param targetIno the target's inode, or -1 if the name is free
     */
    private static void refuseAncestors(Parent source, long sourceIno, Parent target, long targetIno, String to)
            throws IOException {
        if (target.ancestors().contains(sourceIno)) {
            throw new IllegalArgumentException("cannot move '" + source.name() + "' into its own subtree ('"
                    + to + "')");
        }
        if (targetIno >= 0 && source.ancestors().contains(targetIno)) {
            throw new DirectoryNotEmptyException(to);
        }
    }

    /** @return the inode a name points at, or -1 if it is free */
    private long lookupIfPresent(Parent parent) throws IOException {
        try {
            return inodes.lookup(parent.dir(), parent.name());
        } catch (NoSuchFileException e) {
            return -1;
        }
    }

    private static boolean isPrefix(List<String> prefix, List<String> names) {
        return prefix.size() <= names.size() && names.subList(0, prefix.size()).equals(prefix);
    }

    @Override
    public FileStat stat(String path) throws IOException {
        return locked(() -> stat(resolve(path, true)));
    }

    @Override
    public FileStat lstat(String path) throws IOException {
        return locked(() -> stat(resolve(path, false)));
    }

    FileStat stat(long ino) throws IOException {
        CachedInode cached = cache.inode(ino);
        FileStat info;
        long size;
        FileOps.FileUse use = cached != null ? files.use(cached, false) : FileOps.FileUse.NONE;
        try (FileOps.FileUse _ = use) {
            info = inodes.getattr(ino);
            size = cached != null ? cached.size() : info.size();
        }
        return new FileStat(ino, info.type(), size, info.allocatedBytes(), info.linkCount(), info.mode(), info.uid(),
                info.gid(), info.atime(), info.mtime(), info.ctime(), info.btime(),
                info.type() == FileType.REGULAR ? atomicWriteLimits : AtomicWriteLimits.NONE, info.rdev());
    }

    @Override
    public FsStat statfs() throws IOException {
        ensureOpen();
        return supers.statfs();
    }

    @Override
    public java.util.Optional<java.util.UUID> uuid() throws IOException {
        ensureOpen();
        return supers.uuid();
    }

    @Override
    public String label() throws IOException {
        ensureOpen();
        return supers.label();
    }

    @Override
    public void setLabel(String label) throws IOException {
        ensureOpen();
        if (label.indexOf('\0') >= 0) {
            throw new InvalidRangeException(adapter.name() + ": a label cannot hold a NUL");
        }
        supers.setLabel(label);
    }

    @Override
    public long trim(long start, long length, long minLength) throws IOException {
        ensureOpen();
        if (start < 0 || length < 0 || minLength < 0) {
            throw new InvalidRangeException(adapter.name() + ": trim of " + length + " bytes at " + start
                    + ", extents of at least " + minLength + ": negative");
        }
        return supers.trim(start, length, minLength);
    }

    @Override
    public long maxFileSize() {
        return mount.maxFileSize();
    }

    @Override
    public void sync() throws IOException {
        ensureOpen();
        try {
            cache.syncAll();
            supers.sync();
        } catch (OutOfMemoryError e) {
            throw shutDown(e);
        }
    }

    @Override
    public long dropCleanCache() {
        if (closed) {
            throw new ClosedFileSystemException();
        }
        return cache.dropCleanCache();
    }

    @Override
    public IoStats stats() {
        return cache.stats().withAdapterCounters(supers.counters());
    }

    @Override
    public dev.iomap.api.CacheStatus cacheStatus() {
        return cache.cacheStatus();
    }

    @Override
    public void close() throws IOException {
        namespace.lock();
        try {
            if (closed) {
                return;
            }
            // Order: no background writeback or readahead may call the adapter once it has unmounted,
            // so the flusher and the readahead threads stop first; then the final sync; then the
            // adapter's unmount. Unmounting
            // releases the mount whatever happens: a failed final sync (a dead device) is reported,
            // but must not leave the cache running. A shut-down mount writes nothing more.
            closed = true;
            try {
                cache.stopBackgroundWriteback();
                cache.stopReadahead();
                gate.check();
                cache.syncAll();
                supers.unmount();
            } catch (OutOfMemoryError e) {
                throw shutDown(e);
            } finally {
                try {
                    cache.close();
                } finally {
                    if (afterUnmount != null) {
                        afterUnmount.close();
                    }
                }
            }
        } finally {
            namespace.unlock();
        }
    }

    /** Opens an inode: caches it on first use and counts the open file. Caller holds the namespace lock. */
    private IomapFile openInode(long ino) throws IOException {
        return openInode(ino, Set.of(), flagRules.of(ino));
    }

    /**
     * {@link #openInode(long)} with open flags, checked by the caller.
     *
     * @param inodeFlags the inode's flags as the caller read them for its checks (read once per open)
     */
    private IomapFile openInode(long ino, Set<OpenFlag> flags, Set<FileFlag> inodeFlags) throws IOException {
        CachedInode inode = cache.inode(ino);
        if (inode == null) {
            FileStat info = inodes.getattr(ino);
            inode = cache.addInode(ino, mount.blockSize(), info.size(), mount.maxFileSize(), mount.iomapOps(),
                    mount.writebackOps());
        }
        inode.fileFlags(inodeFlags);
        if (!openCounts.containsKey(ino)) {
            files.open(inode);
        }
        openCounts.merge(ino, 1, Integer::sum);
        return new CoreFile(this, inode, flags);
    }

    /**
     * The last close of a file: evict it if it has no name left, as this mount unlinked it or as the
     * adapter's {@link SuperOps#dropInode} says (another node of a cluster may have unlinked
     * it); else let the adapter release it.
     */
    void released(long ino) throws IOException {
        namespace.lock();
        try {
            if (openCounts.merge(ino, -1, Integer::sum) == 0) {
                openCounts.remove(ino);
                if (closed || gate.isShutDown()) {
                    unlinked.remove(ino);
                } else if (unlinked.remove(ino) != null) {
                    evict(ino);
                } else {
                    CachedInode inode = cache.inode(ino);
                    if (inode != null && supers.dropInode(inode)) {
                        evict(ino);
                    } else if (inode != null) {
                        inode.withExclusiveLock(() -> files.release(inode));
                    }
                }
            }
        } finally {
            namespace.unlock();
        }
    }

    private void forgetIfUnlinked(long ino) throws IOException {
        if (inodes.getattr(ino).linkCount() > 0) {
            return;
        }
        if (openCounts.containsKey(ino)) {
            unlinked.put(ino, Boolean.TRUE);
        } else {
            evict(ino);
        }
    }

    private void evict(long ino) throws IOException {
        cache.removeInode(ino);
        supers.evict(ino);
    }

    /**
     * @param path an absolute path
     * @param followLast whether a symbolic link as the last name is followed
     * @return the inode the path names
     */
    private long resolve(String path, boolean followLast) throws IOException {
        PathWalk walk = new PathWalk(mount.rootIno(), inodes, path);
        boolean slash = hasTrailingSlash(path);
        walk.names(Paths.names(path), followLast || slash);
        if (slash) {
            walk.requireDirectory();
        }
        return walk.top();
    }

    /**
     * A trailing '/' says the path names a directory: resolution then follows a last link and refuses
     * anything else with ENOTDIR, as the kernel's {@code LOOKUP_DIRECTORY} does.
     */
    private static boolean hasTrailingSlash(String path) {
        return path.length() > 1 && path.endsWith("/");
    }

    /** The directory of a path's last name (every link before it followed), and that name. */
    private Parent parent(String path) throws IOException {
        List<String> names = Paths.names(path);
        if (names.isEmpty()) {
            throw new FileSystemException(path, null, "the root has no parent");
        }
        PathWalk walk = new PathWalk(mount.rootIno(), inodes, path);
        walk.names(names.subList(0, names.size() - 1), true);
        walk.requireDirectory();
        return new Parent(walk.top(), names.getLast(), walk.inodes());
    }

    /**
     * @param dir the directory holding {@code name}
     * @param name the last name of the path
     * @param ancestors the inodes from the root down to {@code dir}
     */
    private record Parent(long dir, String name, List<Long> ancestors) {
    }

    private <T> T locked(NamespaceAction<T> action) throws IOException {
        namespace.lock();
        try {
            ensureOpen();
            return action.run();
        } catch (OutOfMemoryError e) {
            throw shutDown(e);
        } finally {
            namespace.unlock();
        }
    }

    @FunctionalInterface
    private interface NamespaceAction<T> {
        T run() throws IOException;
    }
}
