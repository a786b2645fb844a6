package dev.iomap.fuse;

import dev.iomap.api.Capability;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.RenameFlag;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * The operations of libfuse's low-level API over an {@link IomapFileSystem}, by node id ({@link Nodes}:
 * a node id is the file system's inode number) and file handle ({@link FileHandles}). {@link LowLevelOps}
 * decodes libfuse's arguments, calls these, and turns what they return into libfuse's replies and what
 * they throw into an errno ({@link ErrnoMapping}); nothing here touches native memory, so every operation
 * can be called from a test.
 *
 * <p>File names are byte strings, in {@link FileNames}' form end to end: the kernel's bytes decoded
 * one-to-one, and readdir's names go back as the bytes they stand for. Every name is at most
 * {@value FileNames#MAX_NAME_BYTES} bytes (ENAMETOOLONG).
 *
 * <p>A hard link is one inode: {@link #lookup} of any of its names gives the same node id, so the
 * kernel keeps one inode, one link count and one page cache for it. {@link #unlink} of an open file
 * removes the name at once (the file system keeps the inode until the last {@link #release}); no hidden
 * rename is needed.
 *
 * <p>Thread-safe: libfuse calls from several threads at once.
 */
public final class FuseBridge {
    /** fcntl.h open flags (the same on x86-64 and AArch64). */
    static final int O_ACCMODE = 03;
    static final int O_RDONLY = 0;
    static final int O_EXCL = 0200;
    static final int O_TRUNC = 01000;
    static final int O_APPEND = 02000;
    /** {@code O_DIRECT} as the kernel passes it to FUSE on x86-64 (AArch64: 0200000, see {@link #oDirect}). */
    static final int O_DIRECT = 040000;
    /** {@code O_DSYNC}; {@code O_SYNC} includes it. */
    static final int O_DSYNC = 010000;
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
    static final int RENAME_WHITEOUT = 4;
    /** sys/stat.h file type bits. */
    static final int S_IFMT = 0170000;
    static final int S_IFREG = 0100000;

    /** Largest write and readahead the kernel is asked to send in one request: 1 MiB (libfuse's own limit). */
    static final int MAX_IO_BYTES = 1 << 20;

    /**
     * An inode handed to the kernel.
     *
     * @param nodeid its node id
     * @param generation its generation
     * @param attributes what the kernel is told of it
     */
    record Entry(long nodeid, int generation, Attributes attributes) {
    }

    /**
     * An open file handed to the kernel.
     *
     * @param fh its handle
     * @param directIo whether this open bypasses the kernel's page cache ({@code FOPEN_DIRECT_IO})
     * @param keepCache whether the kernel keeps what it cached of the file before ({@code FOPEN_KEEP_CACHE})
     */
    record Opened(long fh, boolean directIo, boolean keepCache) {
    }

    /**
     * What create answers: the new inode and its open file.
     *
     * @param entry the inode
     * @param opened the open file
     */
    record Created(Entry entry, Opened opened) {
    }

    /**
     * What statfs answers.
     *
     * @param blockSize bytes per block
     * @param blocks blocks in all
     * @param freeBlocks blocks free
     * @param files inodes in all
     * @param freeFiles inodes free
     * @param availableBlocks free blocks that file data can have (f_bavail, df's available)
     */
    record Statfs(long blockSize, long blocks, long freeBlocks, long files, long freeFiles, long availableBlocks) {
    }

    private final IomapFileSystem fs;
    private final Nodes nodes;
    private final FileHandles handles = new FileHandles();
    private final Directories directories = new Directories();
    private final InodeOperations inodes;
    /** Finds an inode the kernel forgot by its number, for {@code FUSE_EXPORT_SUPPORT}'s lookups. */
    private final ExportLookups exports;
    private final CacheMode cache;
    private final AtimePolicy atime;
    private volatile BooleanSupplier readOnlyMount = () -> false;
    /** {@link #cacheWriter}s by handle. */
    private final ConcurrentHashMap<Long, IomapFile> cacheWriters = new ConcurrentHashMap<>();
    private final int oDirect;
    /** Whether the kernel granted its writeback cache at INIT: it then does {@code O_APPEND} itself. */
    private volatile boolean kernelWritebackCache;
    /** Handles of opens for writing of files with capabilities: the first write removes them. */
    private final Set<Long> capabilityHolders = ConcurrentHashMap.newKeySet();
    private volatile LongConsumer attributesChanged = nodeid -> { };
    /** Set once by {@link #shutDown}: every operation then fails with EIO. */
    private volatile boolean shutDown;
    private volatile Runnable onShutDown = () -> { };

    /**
     * @param fs the mounted file system; the bridge never closes it
     * @param owner the mounting user: the owner every file is reported with where the file system keeps no
     *     POSIX attributes
     * @param cache how the kernel's caches are used
     * @throws IOException if the root cannot be stat'ed
     */
    public FuseBridge(IomapFileSystem fs, InodeOperations.Caller owner, CacheMode cache) throws IOException {
        this(fs, owner, cache, AtimePolicy.DEFAULT);
    }

    /**
     * @param fs the mounted file system; the bridge never closes it
     * @param owner the mounting user: the owner every file is reported with where the file system keeps no
     *     POSIX attributes
     * @param cache how the kernel's caches are used
     * @param atime when reads and directory listings update access times (file systems with POSIX
     *     attributes only)
     * @throws IOException if the root cannot be stat'ed
     */
    public FuseBridge(IomapFileSystem fs, InodeOperations.Caller owner, CacheMode cache, AtimePolicy atime)
            throws IOException {
        this.fs = fs;
        this.cache = cache;
        this.atime = atime;
        this.oDirect = oDirect(System.getProperty("os.arch"));
        FileStat root = fs.stat("/");
        this.nodes = new Nodes(root.ino());
        this.inodes = new InodeOperations(fs, owner, fs.statfs().blockSize());
        this.exports = new ExportLookups(fs, nodes, inodes);
    }

    /**
     * @param arch {@code os.arch}
     * @return {@code O_DIRECT} of that architecture as the kernel passes open flags (asm-generic's
     *     0200000 on AArch64, 040000 on x86-64)
     */
    static int oDirect(String arch) {
        return FuseStructs.AARCH64.equals(arch) ? 0200000 : O_DIRECT;
    }

    /** @return the node table */
    Nodes nodes() {
        return nodes;
    }

    /** @return the attribute and extended-attribute operations */
    InodeOperations inodes() {
        return inodes;
    }

    /** @return how the kernel's caches are used */
    public CacheMode cache() {
        return cache;
    }

    /** @return how many files the kernel has open */
    public int openFiles() {
        return handles.size();
    }

    /**
     * @param hook told the node id of an inode whose attributes changed without the kernel knowing (a
     *     write that cleared set-user-ID), so that it drops what it cached ({@code notify_inval_inode})
     */
    void onAttributesChanged(LongConsumer hook) {
        this.attributesChanged = hook;
    }

    /**
     * @param hook run once the mount is shut down ({@link #shutDown}), after the reply's errno is known:
     *     drops what the kernel cached, so that reads it would serve from its own cache fail too
     */
    void onShutDown(Runnable hook) {
        this.onShutDown = hook;
    }

    /** @return whether the mount was shut down on request ({@link #shutDown}) */
    public boolean isShutDown() {
        return shutDown;
    }

    /** @throws FileSystemShutdownException (EIO) once the mount was shut down */
    private void live() throws FileSystemShutdownException {
        if (shutDown) {
            throw new FileSystemShutdownException(fs.adapterName() + " mount was shut down: unmount it");
        }
    }

    /**
     * The shutdown ioctl ({@code XFS_IOC_GOINGDOWN}, {@link InodeOperations#XFS_IOC_GOINGDOWN}), as XFS
     * answers it with {@code XFS_FSOP_GOING_FLAGS_LOGFLUSH}: root only; the log force makes every change
     * made before it durable, then nothing more is written ({@link IomapFileSystem#shutDown()}); from then on every
     * operation fails with EIO (reads too, as on XFS), and unmounting writes nothing back. Through FUSE
     * the ioctl is a restricted one whose argument is output only ({@code _IOR}), so godown's flag never
     * reaches the file system: every shutdown is the log-flushing one. A second shutdown succeeds and does
     * nothing more.
     *
     * @param caller who asks
     * @throws IOException EPERM for a caller other than root; EOPNOTSUPP where the file system cannot shut
     *     down; or the device flush's failure (the mount is shut down all the same)
     */
    void shutDown(InodeOperations.Caller caller) throws IOException {
        if (caller.uid() != 0) {
            throw new ErrnoException(LinuxErrno.EPERM, "shutdown of the mount by uid " + caller.uid() + ": root only");
        }
        if (shutDown) {
            return;
        }
        try {
            fs.shutDown();
        } catch (NotSupportedException refused) {
            throw refused;
        } catch (IOException | RuntimeException flushFailed) {
            shutDown = true;   // the file system is shut down; only its last flush failed
            onShutDown.run();
            throw flushFailed;
        }
        shutDown = true;
        onShutDown.run();
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
     * Names a node for a log line: its path where it has one, else its node id.
     *
     * @param nodeid a node id from the kernel
     * @return the node's path, or {@code "node N"} if it has no name left or is not known
     */
    String describe(long nodeid) {
        try {
            return onPath(nodeid, path -> path);
        } catch (IOException | RuntimeException e) {
            return "node " + nodeid;
        }
    }

    @FunctionalInterface
    private interface PathBody<T> {
        T run(String path) throws IOException;
    }

    /** Runs {@code body} on the node's path with the namespace read lock held (see {@link Nodes}). */
    private <T> T onPath(long nodeid, PathBody<T> body) throws IOException {
        live();
        return locked(nodes.namespace().readLock(), () -> body.run(nodes.path(nodeid)));
    }

    @FunctionalInterface
    private interface Body<T> {
        T run() throws IOException;
    }

    private static <T> T locked(Lock lock, Body<T> body) throws IOException {
        lock.lock();
        try {
            return body.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * @param name a name from the kernel
     * @return it, checked ({@link FileNames#check}: at most 255 bytes, ENAMETOOLONG)
     */
    private static String checked(String name) {
        FileNames.check(name);
        return name;
    }

    private Entry entry(FileStat stat) {
        return new Entry(nodes.nodeid(stat.ino()), inodes.generation(stat), inodes.attributes(stat));
    }

    /** Hands {@code path}'s inode to the kernel under {@code name}: one lookup counted. Namespace lock held. */
    private Entry handOut(String path, Nodes.Name name) throws IOException {
        Entry entry = entry(inodes.lstat(path));
        nodes.lookedUp(entry.nodeid(), entry.generation(), name);
        return entry;
    }

    /**
     * lookup: the inode of {@code name} in {@code parent}, one lookup counted.
     *
     * @param parent the directory's node id
     * @param name a name in it
     * @return the inode
     * @throws IOException ENOENT if there is no such name
     */
    Entry lookup(long parent, String name) throws IOException {
        if (name.equals(".") || name.equals("..")) {
            return exported(parent, name.equals("."));
        }
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        return onPath(parent, directory -> handOut(join(directory, name), at));
    }

    /**
     * The lookups of {@code FUSE_EXPORT_SUPPORT}, with which the kernel turns a file handle
     * ({@code open_by_handle_at}, an NFS export) back into an inode it no longer caches: "{@code .}" of a
     * node id asks for that inode itself, "{@code ..}" of a directory's for its parent. A node the table
     * no longer holds is looked for by its inode number, walking the tree from the root (there are no
     * parent pointers for files: the cost is one listing per directory walked, paid only by a handle
     * whose inode the kernel forgot); the directories on the way are remembered without a lookup count so
     * that the inode has a path. The kernel compares the generation it gets with the handle's, so an inode
     * number reused for a new file answers ESTALE, as a removed one (ENOENT here) does.
     *
     * @param nodeid the node id of the handle, or of the directory whose parent is asked for
     * @param self "{@code .}" rather than "{@code ..}"
     * @return the inode, one lookup counted
     * @throws IOException ENOENT if no name in the tree has the inode
     */
    private Entry exported(long nodeid, boolean self) throws IOException {
        live();
        return locked(nodes.namespace().readLock(), () -> {
            String path = nodes.hasPath(nodeid) ? nodes.path(nodeid) : null;
            if (path == null && self && exports.findByNumber(nodes.ino(nodeid))) {
                path = nodes.path(nodeid);
            }
            if (path == null) {
                throw new NoSuchFileException("node " + nodeid, null, "no name in the file system has its inode");
            }
            if (!self && !path.equals("/")) {
                path = path.substring(0, Math.max(1, path.lastIndexOf('/')));
            }
            Entry entry = handOut(path, null);
            if (self && entry.nodeid() != nodeid) {
                throw new NoSuchFileException(path, null, "names another inode now");
            }
            return entry;
        });
    }

    private static String join(String directory, String name) {
        return directory.equals("/") ? "/" + name : directory + "/" + name;
    }

    /**
     * forget and batch_forget.
     *
     * @param nodeid a node
     * @param count lookups the kernel gives back
     */
    void forget(long nodeid, long count) {
        nodes.forget(nodeid, count);
    }

    /**
     * getattr.
     *
     * @param nodeid a node
     * @param fh an open handle of it, or 0 for none
     * @return its attributes: the open file's, else its path's, else (an unlinked inode) any open file's,
     *     else (a removed directory) an open handle's, with no links ({@link Directories#removed})
     * @throws IOException ENOENT for a node that has neither a name nor an open file or directory
     */
    Attributes getattr(long nodeid, long fh) throws IOException {
        live();
        IomapFile open = fh == 0 ? null : handles.find(fh);
        if (open != null) {
            return inodes.attributes(open.stat());
        }
        return inodes.attributes(stat(nodeid));
    }

    private FileStat stat(long nodeid) throws IOException {
        try {
            return onPath(nodeid, path -> current(nodeid, inodes.lstat(path)));
        } catch (NoSuchFileException e) {
            IomapFile open = nodes.openFile(nodeid);
            if (open != null) {
                return open.stat();
            }
            FileStat directory = directories.removed(nodeid);
            if (directory == null) {
                throw e;
            }
            return directory;
        }
    }

    /**
     * @param nodeid the node a path was built for
     * @param stat what the path names now
     * @return {@code stat}, if it is the node's inode
     * @throws ErrnoException ESTALE if the name now names another inode (another node of a shared image
     *     replaced it; the kernel then looks the path up again)
     */
    private FileStat current(long nodeid, FileStat stat) throws ErrnoException {
        if (nodes.nodeid(stat.ino()) != nodeid) {
            throw new ErrnoException(LinuxErrno.ESTALE, "node " + nodeid + ": its name now names inode " + stat.ino());
        }
        return stat;
    }

    /**
     * setattr: truncate (through the open file if given), then chmod, chown and times; with
     * {@code killPrivileges} (the truncating process lacks {@code CAP_FSETID}) set-user-ID and
     * set-group-ID are cleared as Linux clears them.
     *
     * @param nodeid a node
     * @param change what to change
     * @param fh an open handle of it, or 0
     * @return the attributes afterwards
     * @throws IOException as the file system
     */
    Attributes setattr(long nodeid, SetAttributes change, long fh) throws IOException {
        live();
        if (change.size() != null) {
            truncate(nodeid, change.size(), fh);
            afterTruncate(nodeid, change.killPrivileges());
        }
        if (change.changesAttributes()) {
            onPath(nodeid, path -> {
                inodes.setAttributes(path, change);
                return null;
            });
        }
        return getattr(nodeid, fh);
    }

    /**
     * What a truncate removes: the file's capabilities, and with {@code killPrivileges} its set-user-ID and
     * set-group-ID bits; nothing for an unlinked file (nobody can exec it by name).
     */
    private void afterTruncate(long nodeid, boolean killPrivileges) throws IOException {
        try {
            onPath(nodeid, path -> {
                inodes.killCapabilities(path);
                if (killPrivileges) {
                    inodes.killPrivileges(path);
                }
                return null;
            });
        } catch (NoSuchFileException unlinked) {
            // its mode and capabilities die with it
        }
    }

    private void truncate(long nodeid, long size, long fh) throws IOException {
        IomapFile open = fh == 0 ? null : handles.find(fh);
        if (open == null || open.openFlags().contains(OpenFlag.READ_ONLY)) {
            open = nodes.writableFile(nodeid);
        }
        if (open != null) {
            open.truncate(size);
            return;
        }
        onPath(nodeid, path -> {
            try (IomapFile file = fs.open(path)) {
                file.truncate(size);
            }
            return null;
        });
    }

    /**
     * readlink.
     *
     * @param nodeid a symbolic link
     * @return its target's bytes
     * @throws IOException EINVAL if it is not a symbolic link
     */
    byte[] readlink(long nodeid) throws IOException {
        return onPath(nodeid, inodes::readlink);
    }

    /**
     * mknod: a regular file (created empty, as {@code mknod(2)} with {@code S_IFREG} does), or a FIFO, a
     * device node or a socket where the file system keeps special files
     * ({@link Capability#SPECIAL_FILES}); a special file elsewhere is EPERM, as Linux answers for a
     * filesystem without them.
     *
     * @param parent the directory
     * @param name the new name
     * @param mode type and permission bits
     * @param rdev a device node's number (the kernel's encoding), else ignored
     * @param caller who creates it
     * @return the new inode
     * @throws IOException EPERM, EINVAL for an unknown type, EEXIST, or as the file system
     */
    Entry mknod(long parent, String name, int mode, long rdev, InodeOperations.Caller caller) throws IOException {
        FileType type;
        try {
            type = (mode & S_IFMT) == 0 ? FileType.REGULAR : FileType.ofModeBits(mode);
        } catch (IllegalArgumentException e) {
            throw new ErrnoException(LinuxErrno.EINVAL, "mknod " + name + ": " + e.getMessage());
        }
        if (type == FileType.DIRECTORY || type == FileType.SYMLINK) {
            throw new ErrnoException(LinuxErrno.EINVAL, "mknod " + name + ": a " + type + " is not made by mknod");
        }
        if (type != FileType.REGULAR && (!inodes.has(Capability.SPECIAL_FILES) || !inodes.posix())) {
            throw new ErrnoException(LinuxErrno.EPERM, "mknod " + name + ": no special files (" + type + ") here");
        }
        long device = type.isDevice() ? rdev : 0;
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        return onPath(parent, directory -> {
            String path = join(directory, name);
            if (!inodes.posix()) {
                fs.create(path).close();
                return handOut(path, at);
            }
            InodeOperations.NewNode node = inodes.newNode(directory, mode, type, caller);
            if (type == FileType.REGULAR) {
                fs.create(path, node.attributes()).close();
            } else {
                fs.createSpecialFile(path, type, device, node.attributes());
            }
            inodes.inherit(path, node);
            return handOut(path, at);
        });
    }

    /**
     * mkdir(2): with POSIX attributes, {@code mode} (limited by the umask or the directory's default ACL:
     * {@link InodeOperations#newNode}) and the caller as owner.
     *
     * @param parent the directory
     * @param name the new name
     * @param mode permission bits
     * @param caller who creates it
     * @return the new directory
     * @throws IOException EEXIST, or as the file system
     */
    Entry mkdir(long parent, String name, int mode, InodeOperations.Caller caller) throws IOException {
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        return onPath(parent, directory -> {
            String path = join(directory, name);
            if (inodes.posix()) {
                InodeOperations.NewNode node = inodes.newNode(directory, mode, FileType.DIRECTORY, caller);
                fs.mkdir(path, node.attributes());
                inodes.inherit(path, node);
            } else {
                fs.mkdir(path);
            }
            return handOut(path, at);
        });
    }

    /**
     * symlink(2).
     *
     * @param target what the link points at
     * @param parent the directory
     * @param name the new name
     * @param caller its owner
     * @return the new link
     * @throws IOException EPERM without symbolic links, EEXIST, or as the file system
     */
    Entry symlink(String target, long parent, String name, InodeOperations.Caller caller) throws IOException {
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        return onPath(parent, directory -> {
            String path = join(directory, name);
            inodes.symlink(directory, path, target, caller);
            return handOut(path, at);
        });
    }

    /**
     * link(2): another name of the same inode (the same node id, one more lookup counted).
     *
     * @param nodeid the file
     * @param parent the new name's directory
     * @param name the new name
     * @return the inode, with its new link count
     * @throws IOException EPERM without hard links, EEXIST, ENOENT for an unlinked file
     */
    Entry link(long nodeid, long parent, String name) throws IOException {
        live();
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        return locked(nodes.namespace().readLock(), () -> {
            String path = nodes.path(parent, name);
            inodes.link(nodes.path(nodeid), path);
            return handOut(path, at);
        });
    }

    /**
     * unlink(2). An open file stays readable and writable through its handles until released.
     *
     * @param parent the directory
     * @param name the name
     * @throws IOException ENOENT, EISDIR, or as the file system
     */
    void unlink(long parent, String name) throws IOException {
        live();
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        locked(nodes.namespace().writeLock(), () -> {
            fs.unlink(nodes.path(parent, name));
            nodes.removed(at);
            return null;
        });
    }

    /**
     * rmdir(2).
     *
     * @param parent the directory
     * @param name the name of an empty directory in it
     * @throws IOException ENOENT, ENOTDIR, ENOTEMPTY
     */
    void rmdir(long parent, String name) throws IOException {
        live();
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        locked(nodes.namespace().writeLock(), () -> {
            fs.rmdir(nodes.path(parent, name));
            nodes.removed(at);
            return null;
        });
    }

    /**
     * renameat2 by the mount's own user ({@link #rename(long, String, long, String, int,
     * InodeOperations.Caller)}).
     *
     * @param parent the old name's directory
     * @param name the old name
     * @param newParent the new name's directory
     * @param newName the new name
     * @param flags renameat2's flags
     * @throws IOException as the file system
     */
    void rename(long parent, String name, long newParent, String newName, int flags) throws IOException {
        rename(parent, name, newParent, newName, flags, inodes.owner());
    }

    /**
     * renameat2: RENAME_NOREPLACE, RENAME_EXCHANGE and RENAME_WHITEOUT become {@link RenameFlag}s (decided
     * atomically by the file system; the whiteout is the caller's); any other bit, or EXCHANGE with
     * another, is EINVAL, and so is WHITEOUT where the file system keeps no special files (what xfstests
     * and overlayfs take for "not supported"); an adapter without exchange gives EOPNOTSUPP.
     *
     * @param parent the old name's directory
     * @param name the old name
     * @param newParent the new name's directory
     * @param newName the new name
     * @param flags renameat2's flags
     * @param renamer who renames: the whiteout's owner
     * @throws IOException as the file system
     */
    void rename(long parent, String name, long newParent, String newName, int flags,
            InodeOperations.Caller renamer) throws IOException {
        live();
        int known = RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT;
        boolean whiteoutRefused = (flags & RENAME_WHITEOUT) != 0
                && !(inodes.has(Capability.SPECIAL_FILES) && inodes.posix());
        if ((flags & ~known) != 0 || ((flags & RENAME_EXCHANGE) != 0 && flags != RENAME_EXCHANGE) || whiteoutRefused) {
            throw new ErrnoException(LinuxErrno.EINVAL, "rename " + name + ": flags " + flags);
        }
        EnumSet<RenameFlag> renameFlags = EnumSet.noneOf(RenameFlag.class);
        if ((flags & RENAME_NOREPLACE) != 0) {
            renameFlags.add(RenameFlag.NOREPLACE);
        }
        if ((flags & RENAME_EXCHANGE) != 0) {
            renameFlags.add(RenameFlag.EXCHANGE);
        }
        if ((flags & RENAME_WHITEOUT) != 0) {
            renameFlags.add(RenameFlag.WHITEOUT);
        }
        Nodes.Name from = new Nodes.Name(parent, checked(name));
        Nodes.Name to = new Nodes.Name(newParent, checked(newName));
        locked(nodes.namespace().writeLock(), () -> {
            fs.rename(nodes.path(parent, name), nodes.path(newParent, newName), renameFlags,
                    new NewInodeAttributes(0, renamer.uid(), renamer.gid()));
            nodes.renamed(from, to, renameFlags.contains(RenameFlag.EXCHANGE));
            return null;
        });
    }

    /**
     * open(2) of an existing file. An inode unlinked while open has no path: it is opened again through one
     * of its open files ({@link IomapFile#reopen}), as {@code /proc/PID/fd/N} and {@code open_by_handle_at}
     * of an unlinked open file ask.
     *
     * @param nodeid the file
     * @param flags the open flags ({@code O_TRUNC} empties it; {@code O_DIRECT} and {@code O_DSYNC} as in
     *     {@link #openFlags})
     * @param caller who opens it: a truncating caller other than root clears set-user-ID (libfuse 3.14 does
     *     not pass the kernel's {@code FUSE_OPEN_KILL_SUIDGID}; root stands for {@code CAP_FSETID})
     * @return the open file and how the kernel caches it ({@link CacheMode#bypasses})
     * @throws IOException as the file system
     */
    Opened open(long nodeid, int flags, InodeOperations.Caller caller) throws IOException {
        IomapFile unnamed = nodes.hasPath(nodeid) ? null : nodes.openFile(nodeid);
        if (unnamed != null) {
            live();
            IomapFile file = unnamed.reopen(openFlags(flags));
            truncateOnOpen(file, flags);
            return opened(nodeid, file, flags);
        }
        return onPath(nodeid, path -> {
            IomapFile file = openFile(path, flags & ~O_TRUNC);
            if (nodes.nodeid(file.ino()) != nodeid) {
                file.close();
                throw new ErrnoException(LinuxErrno.ESTALE, "open of node " + nodeid + ": its name now names inode "
                        + file.ino());
            }
            truncateOnOpen(file, flags);
            if ((flags & O_TRUNC) != 0 && caller.uid() != 0 && inodes.killPrivileges(path)) {
                attributesChanged.accept(nodeid);
            }
            Opened opened = opened(nodeid, file, flags);
            if ((flags & O_ACCMODE) != O_RDONLY && inodes.hasCapabilities(path)) {
                capabilityHolders.add(opened.fh());
            }
            return opened;
        });
    }

    private Opened opened(long nodeid, IomapFile file, int flags) {
        long fh = handles.add(nodeid, file, openFlags(flags));
        nodes.opened(nodeid, file);
        boolean direct = cache.bypasses(flags, oDirect);
        return new Opened(fh, direct, !direct && cache.keepsKernelCache());
    }

    /**
     * create: a new regular file, opened, in one request. An existing name (a race with another creator)
     * is opened instead unless {@code O_EXCL} (EEXIST).
     *
     * @param parent the directory
     * @param name the new name
     * @param mode permission bits
     * @param flags the open flags
     * @param caller who creates it
     * @return the new inode and its open file
     * @throws IOException as the file system
     */
    Created create(long parent, String name, int mode, int flags, InodeOperations.Caller caller) throws IOException {
        Nodes.Name at = new Nodes.Name(parent, checked(name));
        return onPath(parent, directory -> {
            String path = join(directory, name);
            IomapFile file;
            try {
                if (inodes.posix()) {
                    InodeOperations.NewNode node = inodes.newNode(directory, mode, FileType.REGULAR, caller);
                    file = fs.create(path, node.attributes());
                    inheritOrClose(file, path, node);
                } else {
                    file = fs.create(path);
                }
            } catch (FileAlreadyExistsException e) {
                if ((flags & O_EXCL) != 0) {
                    throw e;
                }
                file = openFile(path, flags);
            }
            if (!file.openFlags().containsAll(openFlags(flags))) {
                file.close();
                file = openFile(path, flags & ~O_TRUNC);
            }
            try {
                Entry entry = handOut(path, at);
                return new Created(entry, opened(entry.nodeid(), file, flags));
            } catch (IOException | RuntimeException e) {
                file.close();
                throw e;
            }
        });
    }

    /** Stores the ACLs a file just created inherits; closes it if that fails. */
    private void inheritOrClose(IomapFile file, String path, InodeOperations.NewNode node) throws IOException {
        try {
            inodes.inherit(path, node);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /**
     * Opens for {@code open(2)} or {@code creat(2)}: {@code O_DIRECT} becomes a direct open
     * ({@link OpenFlag#DIRECT}: block-aligned offsets, lengths and buffers, the page cache bypassed, as
     * the kernel's {@code iomap_dio_rw}) and {@code O_DSYNC}/{@code O_SYNC} a {@link OpenFlag#DSYNC} one.
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
        truncateOnOpen(file, flags);
        return file;
    }

    /** {@code O_TRUNC}: empties the file just opened (closed if that fails). */
    private static void truncateOnOpen(IomapFile file, int flags) throws IOException {
        try {
            if ((flags & O_TRUNC) != 0 && file.size() > 0) {
                file.truncate(0);
            }
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
     * {@code O_APPEND} there too), so there an append-only file ({@link dev.iomap.api.FileFlag#APPEND})
     * cannot be opened for writing (EPERM). {@code O_RDONLY} without {@code O_TRUNC} becomes
     * {@link OpenFlag#READ_ONLY}, the one open an immutable file allows.
     *
     * @param flags {@code open(2)} flags as the kernel passes them on this architecture
     * @return the {@link OpenFlag}s they ask for
     */
    Set<OpenFlag> openFlags(int flags) {
        Set<OpenFlag> wanted = EnumSet.noneOf(OpenFlag.class);
        if ((flags & O_ACCMODE) == O_RDONLY && (flags & O_TRUNC) == 0) {
            wanted.add(OpenFlag.READ_ONLY);
        }
        if ((flags & O_APPEND) != 0 && !kernelWritebackCache) {
            wanted.add(OpenFlag.APPEND);
        }
        if ((flags & oDirect) != 0) {
            wanted.add(OpenFlag.DIRECT);
        }
        if ((flags & O_DSYNC) != 0) {
            wanted.add(OpenFlag.DSYNC);
        }
        return wanted;
    }

    /**
     * read.
     *
     * @param fh an open file
     * @param offset where
     * @param buf where the bytes go (its remaining bytes are the size asked for)
     * @return bytes read: fewer only at EOF (a direct open's one read, whose short count is EOF)
     * @throws IOException EBADF for an unknown handle, or as the file system
     */
    int read(long fh, long offset, ByteBuffer buf) throws IOException {
        live();
        FileHandles.Handle handle = handles.handle(fh);
        IomapFile file = handle.file();
        int total;
        if (file.openFlags().contains(OpenFlag.DIRECT)) {
            total = Math.max(file.read(offset, buf), 0);
        } else {
            total = 0;
            while (buf.hasRemaining()) {
                int n = file.read(offset + total, buf);
                if (n <= 0) {
                    break;
                }
                total += n;
            }
        }
        accessed(handle.nodeid(), file.stat(), false);
        return total;
    }

    /**
     * Tells the bridge how to learn whether its mount is read-only now ({@code ro}, or remounted
     * {@code ro} since: the kernel sends no request for a remount). A read-only mount updates no access
     * time, as Linux's {@code touch_atime} skips a read-only mount. Until this is called, the mount is
     * taken as writable.
     *
     * @param readOnly asked when an access would update an access time, and by {@code FITRIM}; it may cache
     *     its answer briefly
     */
    void readOnlyWhen(BooleanSupplier readOnly) {
        this.readOnlyMount = Objects.requireNonNull(readOnly, "readOnly");
    }

    /**
     * The access time after a read or a directory listing, as the mount's {@link AtimePolicy} says (the
     * kernel's {@code touch_atime}: the change time stays). Best effort, as in Linux: a file unlinked
     * meanwhile, or a file system that refuses the change (read-only), keeps its access time.
     *
     * @param nodeid the file or directory read
     * @param stat its attributes now
     * @param directory whether it is a directory listing
     */
    private void accessed(long nodeid, FileStat stat, boolean directory) {
        Instant now = Instant.now();
        if (!inodes.posix() || !atime.needsUpdate(stat, directory, now) || readOnlyMount.getAsBoolean()) {
            return;
        }
        try {
            onPath(nodeid, path -> fs.setAttributes(path, AttributeChange.accessed(now)));
        } catch (IOException | RuntimeException e) {
            System.getLogger(FuseBridge.class.getName()).log(System.Logger.Level.DEBUG,
                    "access time of node " + nodeid + " not updated", e);
        }
    }

    /**
     * write. With {@code killPrivileges} (the kernel's {@code FUSE_WRITE_KILL_SUIDGID}: the writer lacks
     * {@code CAP_FSETID}, see {@link KernelAbi#killsPrivileges}) set-user-ID, and set-group-ID where
     * group execute is set, are cleared first, as Linux's {@code file_remove_privs}; the kernel is told to
     * drop the attributes it cached. The first write through an open of a file with capabilities
     * ({@code security.capability}, looked for at open) removes them, whoever writes.
     *
     * @param fh an open file
     * @param offset where
     * @param buf the bytes
     * @param killPrivileges whether the write clears set-user-ID and set-group-ID
     * @return bytes written: fewer than asked when the file system ran out of space after writing some
     *     (a short write, as the kernel's {@code iomap_file_buffered_write}; the program then writes the
     *     rest and gets ENOSPC for it)
     * @throws IOException EBADF for an unknown handle, or as the file system
     */
    int write(long fh, long offset, ByteBuffer buf, boolean killPrivileges) throws IOException {
        return write(fh, offset, buf, killPrivileges, false);
    }

    /**
     * write, as {@link #write(long, long, ByteBuffer, boolean)}; with {@code fromPageCache} (the kernel's
     * {@code FUSE_WRITE_CACHE}: pages of its cache written back, a shared mapping's or the writeback
     * cache's) a positional buffered write whatever the handle was opened with, since the kernel sends it
     * through any writable handle of the inode: through an {@code O_DIRECT} handle it is not aligned (a
     * mapping's last page ends at EOF; msync failed EINVAL, xfstests generic/263), through an
     * {@code O_APPEND} handle it belongs at its offset, not at the end.
     *
     * @param fh an open file
     * @param offset where
     * @param buf the bytes
     * @param killPrivileges whether the write clears set-user-ID and set-group-ID
     * @param fromPageCache whether the kernel is writing back its page cache
     * @return bytes written, as {@link #write(long, long, ByteBuffer, boolean)}
     * @throws IOException EBADF for an unknown handle, or as the file system
     */
    int write(long fh, long offset, ByteBuffer buf, boolean killPrivileges, boolean fromPageCache)
            throws IOException {
        live();
        FileHandles.Handle handle = handles.handle(fh);
        if (killPrivileges && hasPrivileges(handle.file())) {
            killPrivileges(handle.nodeid());
        }
        if (!capabilityHolders.isEmpty() && capabilityHolders.remove(fh)) {
            onPath(handle.nodeid(), path -> {
                inodes.killCapabilities(path);
                return null;
            });
        }
        int start = buf.position();
        try {
            if (fromPageCache && (handle.flags().contains(OpenFlag.DIRECT) || handle.flags().contains(OpenFlag.APPEND))) {
                return cacheWriter(fh, handle).write(offset, buf);
            }
            return handle.file().write(offset, buf);
        } catch (NoSpaceException e) {
            int written = buf.position() - start;   // IomapFile.write reports what it wrote by the position
            if (written > 0) {
                return written;
            }
            throw e;
        }
    }

    /**
     * Records whether the kernel granted its writeback cache (INIT): {@link #openFlags} then leaves
     * {@code O_APPEND} to the kernel.
     *
     * @param granted whether {@code FUSE_CAP_WRITEBACK_CACHE} is in the connection's wants
     */
    void kernelWritebackCache(boolean granted) {
        kernelWritebackCache = granted;
    }

    private static boolean hasPrivileges(IomapFile file) throws IOException {
        return (file.stat().mode() & (InodeOperations.S_ISUID | InodeOperations.S_ISGID)) != 0;
    }

    private void killPrivileges(long nodeid) throws IOException {
        killPrivileges(nodeid, inodes::killPrivileges);
    }

    /** Clears the node's privileges as {@code kill} does on its path, and tells the kernel if they changed. */
    private void killPrivileges(long nodeid, PathBody<Boolean> kill) throws IOException {
        boolean changed;
        try {
            changed = onPath(nodeid, kill);
        } catch (NoSuchFileException unlinked) {
            return; // nobody can exec an unlinked file by name, and its mode dies with it
        }
        if (changed) {
            attributesChanged.accept(nodeid);
        }
    }

    /**
     * flush: close(2) of one descriptor; nothing to make durable (as in local filesystems), only a check.
     *
     * @param fh an open file
     * @throws IOException EBADF for an unknown handle
     */
    void flush(long fh) throws IOException {
        live();
        handles.get(fh);
    }

    /**
     * release: the last descriptor of an open closed; an unlinked file's last release frees it.
     *
     * @param fh an open file (unknown handles are ignored)
     * @throws IOException as closing the file
     */
    void release(long fh) throws IOException {
        FileHandles.Handle handle = handles.remove(fh);
        capabilityHolders.remove(fh);
        IomapFile writer = cacheWriters.remove(fh);
        if (handle != null) {
            nodes.closed(handle.nodeid(), handle.file());
            try (IomapFile _ = writer) {
                handle.file().close();
            }
        } else if (writer != null) {
            writer.close();
        }
    }

    /**
     * The plain (positional, buffered) open of a handle's file that the kernel's page-cache writes through
     * an {@code O_DIRECT} or {@code O_APPEND} handle go to: opened at the first such write, closed with the
     * handle.
     *
     * @throws IOException ESTALE if the handle's node now names another inode, or as the file system
     */
    private IomapFile cacheWriter(long fh, FileHandles.Handle handle) throws IOException {
        IomapFile writer = cacheWriters.get(fh);
        if (writer != null) {
            return writer;
        }
        IomapFile opened = onPath(handle.nodeid(), path -> fs.open(path));
        if (opened.ino() != handle.file().ino()) {
            opened.close();
            throw new ErrnoException(LinuxErrno.ESTALE, "page-cache write through handle " + fh + ": its name now"
                    + " names inode " + opened.ino());
        }
        IomapFile raced = cacheWriters.putIfAbsent(fh, opened);
        if (raced != null) {
            opened.close();
            return raced;
        }
        return opened;
    }

    /**
     * fsync and fdatasync.
     *
     * @param fh an open file
     * @param datasync whether only the data (and what reading it back needs)
     * @throws IOException a writeback error, or as the file system
     */
    void fsync(long fh, boolean datasync) throws IOException {
        live();
        IomapFile file = handles.get(fh);
        if (datasync) {
            file.fdatasync();
        } else {
            file.fsync();
        }
    }

    /**
     * opendir: lists the directory; readdir and readdirplus page through that listing, and list it again
     * when they start over from offset 0 ({@code rewinddir}).
     *
     * @param nodeid a directory
     * @return its handle
     * @throws IOException ENOTDIR, or as the file system
     */
    long opendir(long nodeid) throws IOException {
        live();
        FileStat opened = stat(nodeid);
        List<DirEntry> entries = onPath(nodeid, fs::readdir);
        return directories.add(nodeid, entries, opened);
    }

    /**
     * @param dh a directory handle
     * @return its listing: {@code .} and {@code ..} are not in it (entry {@code i} of a readdir is
     *     {@code .}, {@code ..}, then this list's, at offset {@code i + 1})
     * @throws IOException EBADF for an unknown handle
     */
    Directories.Listing listing(long dh) throws IOException {
        return directories.get(dh);
    }

    /**
     * @param dh a directory handle
     * @param offset where readdir starts: 0 lists the directory again ({@code rewinddir}: POSIX wants the
     *     names added since opendir), unless this is the first read of the listing opendir took and the
     *     directory has not changed since (its mtime, ctime, size and links are those of opendir: every
     *     name added or removed advances its mtime and ctime)
     * @return the listing to page through
     * @throws IOException EBADF for an unknown handle, or as the file system
     */
    Directories.Listing listing(long dh, long offset) throws IOException {
        live();
        Directories.Listing listing = directories.get(dh);
        if (offset != 0) {
            return listing;
        }
        FileStat now = stat(listing.nodeid());
        if (inodes.posix() && atime.mode() != AtimePolicy.Mode.NONE) {
            accessed(listing.nodeid(), now, true);
        }
        if (directories.firstRead(dh) && unchanged(listing.opened(), now)) {
            return listing;
        }
        return directories.replace(dh, onPath(listing.nodeid(), fs::readdir));
    }

    /** Whether a directory's names can have changed between two of its stats. */
    private static boolean unchanged(FileStat before, FileStat after) {
        return before.mtime().equals(after.mtime()) && before.ctime().equals(after.ctime())
                && before.size() == after.size() && before.linkCount() == after.linkCount();
    }

    /**
     * What readdirplus says of one entry, without counting a lookup ({@link #handedOut} counts it once
     * the entry is in the reply).
     *
     * @param parent the directory
     * @param entry an entry of its listing
     * @return the inode, or null where it is gone since the listing (then the entry goes without one)
     */
    Entry describe(long parent, DirEntry entry) {
        try {
            return onPath(parent, directory -> entry(inodes.lstat(join(directory, entry.name()))));
        } catch (IOException | RuntimeException gone) {
            return null;
        }
    }

    /**
     * Counts the lookup of an entry readdirplus put in its reply.
     *
     * @param parent the directory
     * @param name the entry's name
     * @param entry what {@link #describe} said of it
     */
    void handedOut(long parent, String name, Entry entry) {
        nodes.lookedUp(entry.nodeid(), entry.generation(), new Nodes.Name(parent, name));
    }

    /** @param dh a directory handle to forget */
    void releasedir(long dh) {
        directories.remove(dh);
    }

    /**
     * statfs.
     *
     * @return space and inode counts
     * @throws IOException on a device error
     */
    Statfs statfs() throws IOException {
        live();
        FsStat stat = fs.statfs();
        return new Statfs(stat.blockSize(), stat.totalBlocks(), stat.freeBlocks(), stat.totalInodes(),
                stat.freeInodes(), stat.availableBlocks());
    }

    /**
     * getxattr.
     *
     * @param nodeid the file
     * @param name the attribute
     * @return its value
     * @throws IOException ENODATA, ENOSYS without extended attributes
     */
    byte[] getxattr(long nodeid, String name) throws IOException {
        return onPath(nodeid, path -> inodes.getxattr(path, name));
    }

    /**
     * listxattr.
     *
     * @param nodeid the file
     * @return the names, each NUL-terminated
     * @throws IOException ENOSYS without extended attributes
     */
    byte[] listxattr(long nodeid) throws IOException {
        return onPath(nodeid, inodes::listxattr);
    }

    /**
     * setxattr.
     *
     * @param nodeid the file
     * @param name the attribute
     * @param value its value
     * @param flags {@code XATTR_CREATE}, {@code XATTR_REPLACE} or 0
     * @throws IOException see {@link InodeOperations#setxattr}
     */
    void setxattr(long nodeid, String name, byte[] value, int flags) throws IOException {
        setxattr(nodeid, name, value, flags, new InodeOperations.Caller(0, 0));
    }

    /**
     * setxattr by a caller: where the kernel enforces POSIX ACLs, an access ACL set by a caller outside
     * the file's group (and not root) clears set-group-ID ({@link AclOperations#set}).
     *
     * @param nodeid the file
     * @param name the attribute
     * @param value its value
     * @param flags {@code XATTR_CREATE}, {@code XATTR_REPLACE} or 0
     * @param caller who sets it
     * @throws IOException see {@link InodeOperations#setxattr}
     */
    void setxattr(long nodeid, String name, byte[] value, int flags, InodeOperations.Caller caller)
            throws IOException {
        onPath(nodeid, path -> {
            inodes.setxattr(path, name, value, flags, caller);
            return null;
        });
    }

    /**
     * Whether the kernel enforces POSIX ACLs on this mount ({@code FUSE_CAP_POSIX_ACL}, INIT): the bridge
     * then keeps ACLs and modes consistent ({@link AclOperations}).
     *
     * @param granted whether the kernel granted it
     */
    void posixAcls(boolean granted) {
        inodes.acls().enable(granted);
    }

    /** @return whether the file system can keep POSIX ACLs (so the mount asks the kernel to enforce them) */
    boolean supportsPosixAcls() {
        return inodes.acls().supported();
    }

    /**
     * removexattr.
     *
     * @param nodeid the file
     * @param name the attribute
     * @throws IOException ENODATA, ENOSYS without extended attributes
     */
    void removexattr(long nodeid, String name) throws IOException {
        onPath(nodeid, path -> {
            inodes.removexattr(path, name);
            return null;
        });
    }

    /**
     * ioctl: the inode flags' commands ({@link InodeOperations#ioctl}).
     *
     * @param nodeid the file or directory
     * @param command the command
     * @param data its buffer
     * @throws IOException ENOTTY for other commands, or as the file system
     */
    void ioctl(long nodeid, int command, ByteBuffer data) throws IOException {
        ioctl(nodeid, command, data, new InodeOperations.Caller(0, 0));
    }

    /**
     * ioctl by a caller: the shutdown command ({@link #shutDown}), the label commands ({@link #label}),
     * {@code FITRIM} ({@link #trim}) and the inode flags' commands; after a set of the flags the kernel is
     * told to drop the attributes it cached (the set changed the change time: generic/277).
     *
     * @param nodeid the file or directory
     * @param command the command
     * @param data its buffer
     * @param caller who asks
     * @throws IOException ENOTTY for other commands, EPERM for a shutdown by another user than root, or as
     *     the file system
     */
    void ioctl(long nodeid, int command, ByteBuffer data, InodeOperations.Caller caller) throws IOException {
        if (command == InodeOperations.XFS_IOC_GOINGDOWN) {
            shutDown(caller);
            return;
        }
        if (command == InodeOperations.FITRIM) {
            live();
            trim(data, caller);
            return;
        }
        if (command == InodeOperations.FS_IOC_GETFSLABEL || command == InodeOperations.FS_IOC_SETFSLABEL) {
            live();
            label(command == InodeOperations.FS_IOC_SETFSLABEL, data, caller);
            return;
        }
        onPath(nodeid, path -> {
            inodes.ioctl(path, command, data);
            return null;
        });
        if (command == InodeOperations.FS_IOC_SETFLAGS || command == InodeOperations.FS_IOC_FSSETXATTR) {
            attributesChanged.accept(nodeid);   // the set changed the change time the kernel caches
        }
    }

    /**
     * {@code FITRIM} ({@code fstrim}), as XFS's {@code xfs_ioc_trim} contracts it: root only
     * ({@code CAP_SYS_ADMIN}: EPERM); the {@code struct fstrim_range} names the byte range and the smallest
     * free extent worth discarding; on return its {@code len} holds the bytes discarded. EINVAL for a
     * range that starts past the file system or covers less than a block, EOPNOTSUPP where the adapter
     * cannot trim, EROFS on a read-only mount ({@code ro}, or remounted so) or device.
     *
     * @param data the {@link InodeOperations#FSTRIM_RANGE_BYTES}-byte range: read, and {@code len} written
     * @param caller who asks
     * @throws IOException as above, or as the file system
     */
    void trim(ByteBuffer data, InodeOperations.Caller caller) throws IOException {
        if (data.capacity() < InodeOperations.FSTRIM_RANGE_BYTES) {
            throw new ErrnoException(LinuxErrno.EINVAL, "FITRIM: short buffer");
        }
        if (caller.uid() != 0) {
            throw new ErrnoException(LinuxErrno.EPERM, "FITRIM by uid " + caller.uid() + ": root only");
        }
        if (readOnlyMount.getAsBoolean()) {
            // Nothing reaches the image of a read-only mount (and under ro,norecovery XFS refuses it too).
            throw new ErrnoException(LinuxErrno.EROFS, "FITRIM on a read-only mount");
        }
        ByteBuffer range = data.duplicate().order(java.nio.ByteOrder.nativeOrder());
        long start = range.getLong(0);
        long length = range.getLong(8);
        long minLength = range.getLong(16);
        if (start < 0 || minLength < 0) {
            throw new ErrnoException(LinuxErrno.EINVAL, "FITRIM from " + Long.toUnsignedString(start)
                    + ", extents of at least " + Long.toUnsignedString(minLength) + " bytes: out of range");
        }
        long trimmed = fs.trim(start, length < 0 ? Long.MAX_VALUE - start : length, minLength);
        range.putLong(8, trimmed);
    }

    /**
     * The label ioctls, as fs/ioctl.c's {@code ioctl_getfslabel}/{@code ioctl_setfslabel} contract
     * them: a get answers the label NUL-padded to {@link InodeOperations#FSLABEL_MAX} bytes; a set takes
     * the bytes up to the first NUL (EINVAL if there is none), root only ({@code CAP_SYS_ADMIN}). A file
     * system that keeps no label answers ENOTTY, as a kernel file system without the ioctl does; one that
     * sets it only at mkfs answers EOPNOTSUPP to a set; a label too long for the format is EINVAL.
     *
     * @param set whether {@code FS_IOC_SETFSLABEL} (else {@code FS_IOC_GETFSLABEL})
     * @param data the {@link InodeOperations#FSLABEL_MAX}-byte buffer: written by a get, read by a set
     * @param caller who asks
     * @throws IOException as above, EROFS on a read-only device, or as the file system
     */
    void label(boolean set, ByteBuffer data, InodeOperations.Caller caller) throws IOException {
        int max = InodeOperations.FSLABEL_MAX;
        if (data.capacity() < max) {
            throw new ErrnoException(LinuxErrno.EINVAL, "label ioctl: short buffer");
        }
        if (!set) {
            String label;
            try {
                label = fs.label();
            } catch (NotSupportedException none) {
                throw new ErrnoException(LinuxErrno.ENOTTY, fs.adapterName() + " keeps no label");
            }
            byte[] bytes = label.getBytes(StandardCharsets.UTF_8);
            if (bytes.length >= max) {
                throw new ErrnoException(LinuxErrno.EFBIG, "label of " + bytes.length + " bytes does not fit");
            }
            data.put(0, bytes).put(bytes.length, new byte[max - bytes.length]);
            return;
        }
        if (caller.uid() != 0) {
            throw new ErrnoException(LinuxErrno.EPERM, "setting the label by uid " + caller.uid() + ": root only");
        }
        byte[] bytes = new byte[max];
        data.get(0, bytes);
        int length = 0;
        while (length < max && bytes[length] != 0) {
            length++;
        }
        if (length == max) {
            throw new ErrnoException(LinuxErrno.EINVAL, "label ioctl: no NUL in " + max + " bytes");
        }
        try {
            fs.setLabel(new String(bytes, 0, length, StandardCharsets.UTF_8));
        } catch (NotSupportedException refused) {
            try {
                fs.label();
            } catch (NotSupportedException none) {
                throw new ErrnoException(LinuxErrno.ENOTTY, fs.adapterName() + " keeps no label");
            }
            throw refused;
        }
    }

    /**
     * copy_file_range(2) between two open files: see {@link RangeCopy}.
     *
     * @param fhIn the source
     * @param offsetIn where to read from
     * @param fhOut the destination
     * @param offsetOut where to write to
     * @param size bytes asked for
     * @param flags must be 0 (EINVAL otherwise, as the kernel)
     * @return bytes copied (fewer at the source's EOF, 0 at or past it)
     * @throws IOException EBADF, EINVAL, or as the file system
     */
    long copyFileRange(long fhIn, long offsetIn, long fhOut, long offsetOut, long size, int flags)
            throws IOException {
        live();
        if (flags != 0) {
            throw new ErrnoException(LinuxErrno.EINVAL, "copy_file_range: flags " + flags);
        }
        long copied = RangeCopy.copy(fs, handles.get(fhIn), offsetIn, handles.get(fhOut), offsetOut, size);
        if (copied < 0) {
            throw new ErrnoException((int) -copied, "copy_file_range");
        }
        return copied;
    }

    /**
     * fallocate(2) of an open file: mode 0 allocates, {@code PUNCH_HOLE} (only with {@code KEEP_SIZE},
     * as the kernel requires) punches, {@code ZERO_RANGE} zeroes, {@code UNSHARE_RANGE} unshares; any
     * other mode is EOPNOTSUPP. When the caller is not root (no {@code CAP_FSETID}) it clears set-user-ID,
     * and set-group-ID where group execute is set or the caller is not in the file's group, as XFS's and
     * ext4's {@code file_modified} does ({@link InodeOperations#privilegesKilled(FileStat, int)}); FUSE's
     * {@code fallocate} request carries no flag asking for it (xfstests generic/683-685).
     *
     * @param fh an open file
     * @param mode fallocate's mode
     * @param offset first byte
     * @param length bytes
     * @param caller who asks
     * @throws IOException EINVAL, EOPNOTSUPP, or as the file system
     */
    void fallocate(long fh, int mode, long offset, long length, InodeOperations.Caller caller) throws IOException {
        live();
        if (offset < 0 || length <= 0) {
            throw new ErrnoException(LinuxErrno.EINVAL, "fallocate at " + offset + " of " + length + " bytes");
        }
        FileHandles.Handle handle = handles.handle(fh);
        IomapFile file = handle.file();
        boolean keepSize = (mode & FALLOC_FL_KEEP_SIZE) != 0;
        FallocateMode what = switch (mode & ~FALLOC_FL_KEEP_SIZE) {
            case 0 -> FallocateMode.ALLOCATE;
            case FALLOC_FL_PUNCH_HOLE -> keepSize ? FallocateMode.PUNCH_HOLE : null;
            case FALLOC_FL_ZERO_RANGE -> FallocateMode.ZERO_RANGE;
            case FALLOC_FL_UNSHARE_RANGE -> {
                file.unshare(offset, length);
                yield FallocateMode.ALLOCATE;
            }
            default -> null;
        };
        if (what == null) {
            throw new ErrnoException(LinuxErrno.EOPNOTSUPP, "fallocate mode " + Integer.toHexString(mode));
        }
        if (caller.uid() != 0 && hasPrivileges(file)) {
            killPrivileges(handle.nodeid(), path -> inodes.killPrivileges(path, caller.gid()));
        }
        if ((mode & ~FALLOC_FL_KEEP_SIZE) != FALLOC_FL_UNSHARE_RANGE) {
            file.fallocate(what, offset, length, keepSize);
        }
    }

    /**
     * lseek(2) of an open file. The kernel sends only {@code SEEK_DATA} and {@code SEEK_HOLE}
     * (fs/fuse/file.c, {@code fuse_file_llseek}); they go to {@link IomapFile#seekData} and
     * {@link IomapFile#seekHole} (ENXIO before 0 and at or past EOF, as the kernel's
     * {@code iomap_seek_hole} answers, and for {@code SEEK_DATA} in a hole that runs to EOF).
     * {@code SEEK_SET} answers {@code offset} (EINVAL if negative); any other {@code whence} is
     * EINVAL: the current position and the size are the kernel's.
     *
     * @param fh an open file
     * @param offset where to start
     * @param whence {@code SEEK_SET}, {@code SEEK_DATA} or {@code SEEK_HOLE}
     * @return the offset found
     * @throws IOException EBADF, EINVAL, ENXIO
     */
    long lseek(long fh, long offset, int whence) throws IOException {
        live();
        IomapFile file = handles.get(fh);
        return switch (whence) {
            case SEEK_SET -> {
                if (offset < 0) {
                    throw new ErrnoException(LinuxErrno.EINVAL, "lseek to " + offset);
                }
                yield offset;
            }
            case SEEK_DATA, SEEK_HOLE -> {
                if (offset < 0) {
                    // the kernel's iomap_seek_data and iomap_seek_hole: nothing before the start either
                    String what = whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE";
                    throw new ErrnoException(LinuxErrno.ENXIO, "lseek " + what + " from " + offset
                            + ": before the start of the file");
                }
                yield whence == SEEK_DATA ? file.seekData(offset) : file.seekHole(offset);
            }
            default -> throw new ErrnoException(LinuxErrno.EINVAL, "lseek whence " + whence);
        };
    }
}
