package dev.iomap.spi;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.XattrMode;
import java.time.Instant;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The adapter's side of one mount: namespace, attributes, mappings and the hooks the core calls
 * around its page cache. The core resolves paths, holds the page cache and the inode locks, and
 * calls these methods; the adapter never sees the cache except through {@link IomapInode}.
 *
 * <p>Locking the core guarantees: namespace changes ({@link #create}, {@link #unlink},
 * {@link #rename}...) are serialised; {@link #setSize}, {@link #fallocate} and {@link #cloneRange}
 * run with the inode lock(s) held exclusively and with the affected cache already written back or
 * dropped as the method says. {@link #iomapOps()} and {@link #writebackOps()} are called from many
 * threads at once (writeback runs without the inode lock).
 *
 * <p>Names: every {@code name} argument of {@link #lookup}, {@link #create}, {@link #unlink},
 * {@link #rmdir} and {@link #rename} arrives already checked by the core with
 * {@link FileNames#check}: one path component in {@link FileNames}' form (a byte string: UTF-8 where
 * valid, every other byte as the lone surrogate {@code U+DC00 + byte}), not empty, "." or "..", no
 * {@code '/'} or NUL, at most {@value FileNames#MAX_NAME_BYTES} bytes. Two names are the same name
 * exactly when their strings are equal (the mapping is one-to-one), which is when their bytes are. An
 * adapter that stores names stores {@link FileNames#encode}'s bytes (or something it can turn back
 * into exactly them); one that cannot hold some byte strings refuses those names with
 * {@link dev.iomap.api.UnrepresentableNameException} (EILSEQ) and never maps two names to one. Names
 * it hands back ({@link #readdir}) are in the same form.
 *
 * <p><b>Links, attributes, extended attributes.</b> The methods for them have defaults that throw
 * {@link NotSupportedException}; an adapter overrides those of the capabilities it declares
 * ({@link dev.iomap.api.Capability#SYMLINKS}, {@link dev.iomap.api.Capability#HARD_LINKS},
 * {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES}, {@link dev.iomap.api.Capability#XATTRS}); the core
 * calls them only then. Times: the adapter sets {@code ctime} (and, for contents, {@code mtime}) of the
 * inodes a namespace or attribute change touches to the current time, as Linux does: a new name changes
 * the directory's mtime and ctime, a link or unlink the file's ctime, {@link #setSize} mtime and ctime.
 * Writes through the cache are the core's: it calls {@link #updateTimes} when a write or a mapped write
 * starts (never at writeback, so a later {@code utimensat} is not overwritten by I/O completion).
 * Names of extended attributes arrive checked by {@link dev.iomap.api.Xattrs#checkName} and values by
 * {@link dev.iomap.api.Xattrs#checkValue}.
 *
 * <p>Errors: {@link java.nio.file.NoSuchFileException}, {@link java.nio.file.FileAlreadyExistsException},
 * {@link java.nio.file.DirectoryNotEmptyException}, {@link java.nio.file.NotDirectoryException},
 * {@link NoSpaceException}, {@link NotSupportedException}, {@link CorruptFileSystemException}.
 */
public interface MountedFileSystem {

    /** @return the filesystem block size */
    int blockSize();

    /** @return the root directory's inode number */
    long rootIno();

    /** @return the largest file size the format allows */
    long maxFileSize();

    /**
     * What atomic writes the mount's regular files take (the kernel's per-inode
     * {@code xfs_get_atomic_write_min/max}, reported by {@code statx}), read once at mount. Asked only
     * of an adapter declaring {@link dev.iomap.api.Capability#ATOMIC_WRITES}; the unit min must be a
     * multiple of {@link #blockSize()} (atomic writes are direct I/O). This default: none.
     *
     * @return the limits, {@link dev.iomap.api.AtomicWriteLimits#NONE} if there are none
     */
    default dev.iomap.api.AtomicWriteLimits atomicWriteLimits() {
        return dev.iomap.api.AtomicWriteLimits.NONE;
    }

    /**
     * The filesystem's UUID, as its superblock records it (or as the adapter derives a stable one for
     * an image made before it recorded one), for tools ({@code iomap stat}) and for naming the
     * filesystem to a cluster. This default: none.
     *
     * @return the UUID, or empty if the format has none
     * @throws IOException if the device fails while the adapter derives it
     */
    default Optional<java.util.UUID> uuid() throws IOException {
        return Optional.empty();
    }

    /**
     * @param ino an inode number
     * @return its attributes; {@code size} is the size on the device (what survives a crash), which the
     *     core replaces with the cached size where it has the inode cached
     * @throws IOException if there is no such inode
     */
    FileStat getattr(long ino) throws IOException;

    /**
     * @param dirIno a directory
     * @param name a name in it, checked (see the class comment)
     * @return the inode the name points at
     * @throws IOException {@link java.nio.file.NoSuchFileException} if the name is absent
     */
    long lookup(long dirIno, String name) throws IOException;

    /**
     * Creates an empty file or directory.
     *
     * @param dirIno the parent directory
     * @param name the new name, checked (see the class comment)
     * @param type what to create
     * @return the new inode number
     * @throws IOException if the name exists or there is no space
     */
    long create(long dirIno, String name, FileType type) throws IOException;

    /**
     * Creates an empty file or directory with the given attributes; its four times are now. The core
     * calls this form; this default calls {@link #create(long, String, FileType)} and drops the
     * attributes, which is right only for an adapter without
     * {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES}.
     *
     * @param dirIno the parent directory
     * @param name the new name, checked (see the class comment)
     * @param type {@link FileType#REGULAR} or {@link FileType#DIRECTORY}
     * @param attributes mode, owner and group
     * @return the new inode number
     * @throws IOException if the name exists or there is no space
     */
    default long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        return create(dirIno, name, type);
    }

    /**
     * Creates a symbolic link (mode {@code 0777}, size the target's length).
     *
     * @param dirIno the parent directory
     * @param name the new name, checked (see the class comment)
     * @param target the target's bytes, 1 to {@value FileNames#MAX_TARGET_BYTES}, no NUL
     * @param attributes owner and group (mode ignored)
     * @return the new inode number
     * @throws IOException if the name exists or there is no space
     */
    default long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        throw new NotSupportedException("symbolic links are not supported");
    }

    /**
     * @param ino a symbolic link
     * @return its target's bytes, exactly as created
     * @throws IOException on a device error, {@link java.nio.file.NotLinkException} if not a link
     */
    default byte[] readlink(long ino) throws IOException {
        throw new NotSupportedException("symbolic links are not supported");
    }

    /**
     * Adds a name to an inode (a regular file or symbolic link; the core refuses directories): link
     * count up by one, the inode's ctime and the directory's mtime and ctime now.
     *
     * @param ino the inode
     * @param dirIno the directory
     * @param name the new name, checked (see the class comment)
     * @throws IOException if the name exists or there is no space
     */
    default void link(long ino, long dirIno, String name) throws IOException {
        throw new NotSupportedException("hard links are not supported");
    }

    /**
     * Changes attributes and sets ctime to now (when the change is not empty). The core has refused a
     * mode change of a symbolic link. Durable with the next {@link #fsync} or {@link #sync}.
     *
     * @param ino the inode
     * @param change what to change
     * @return the attributes afterwards
     * @throws IOException on a device error
     */
    default FileStat setattr(long ino, AttributeChange change) throws IOException {
        throw new NotSupportedException("attribute changes are not supported");
    }

    /**
     * @param ino the inode
     * @return its flags ({@code lsattr}); this default: none
     * @throws IOException on a device error
     */
    default Set<FileFlag> getflags(long ino) throws IOException {
        return Set.of();
    }

    /**
     * Sets the inode's flags to exactly {@code flags} ({@code chattr}) and its ctime to now. Called under
     * the core's namespace lock. Changing {@link FileFlag#JOURNAL_DATA} of a regular file with cached data
     * changes how that data reaches the device: the adapter writes the file back (through {@code cached})
     * under the old mode before switching, as GFS2's {@code gfs2_set_inode_flags} does.
     *
     * @param ino the inode
     * @param cached the core's inode if the file is cached (open, or with cached folios), else empty
     * @param flags the complete new set
     * @throws NotSupportedException for a flag this adapter does not support (this default: any flag)
     * @throws IOException on a device error
     */
    default void setflags(long ino, Optional<IomapInode> cached, Set<FileFlag> flags) throws IOException {
        if (!flags.isEmpty()) {
            throw new NotSupportedException("inode flags " + flags + " are not supported");
        }
    }

    /**
     * The adapter's own counters, for {@link dev.iomap.api.IoStats#adapterCounters()}: names such as
     * {@code "glock.acquisitions"} or {@code "journal.commits"} mapped to totals since mount. Cheap and
     * thread-safe; a snapshot. This default: none.
     *
     * @return the counters by name
     */
    default Map<String, Long> counters() {
        return Map.of();
    }

    /**
     * A write or mapped write is starting: set mtime and ctime to {@code now}. Called often (the core
     * skips calls within a millisecond of the last one for the inode), without the inode lock and
     * possibly from several threads for one inode: the adapter serialises as its metadata needs. Cheap:
     * no device I/O; durable with the next {@link #fsync} or {@link #sync}. This default does nothing.
     *
     * @param inode the file
     * @param now the time to set
     * @throws IOException on a shut-down filesystem
     */
    default void updateTimes(IomapInode inode, Instant now) throws IOException {
    }

    /**
     * @param ino the inode
     * @param name the attribute's full name, checked
     * @return its value
     * @throws IOException {@link dev.iomap.api.NoSuchAttributeException} if absent
     */
    default byte[] getxattr(long ino, String name) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * @param ino the inode
     * @return its attribute names in {@link FileNames#BYTE_ORDER}
     * @throws IOException on a device error
     */
    default List<String> listxattr(long ino) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * Creates or replaces an attribute as {@code mode} says and sets ctime. Atomic: after a power cut
     * the old or the new value is there, never a mix.
     *
     * @param ino the inode
     * @param name the attribute's full name, checked
     * @param value the value, checked
     * @param mode create, replace or either
     * @throws IOException {@link java.nio.file.FileAlreadyExistsException},
     *     {@link dev.iomap.api.NoSuchAttributeException}, {@link NoSpaceException} if it does not fit
     */
    default void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * Removes an attribute and sets ctime.
     *
     * @param ino the inode
     * @param name the attribute's full name, checked
     * @throws IOException {@link dev.iomap.api.NoSuchAttributeException} if absent
     */
    default void removexattr(long ino, String name) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * @param dirIno a directory
     * @return its entries, names in {@link FileNames}' form, sorted by {@link FileNames#BYTE_ORDER}
     *     (unsigned bytes, not UTF-16 chars: U+FF61 sorts before U+1F600)
     * @throws IOException on a device error
     */
    List<DirEntry> readdir(long dirIno) throws IOException;

    /**
     * Removes a name of a regular file; the inode is freed by {@link #evict} once no name and no open
     * file refer to it.
     *
     * @param dirIno the directory
     * @param name the name, checked (see the class comment)
     * @throws IOException if absent or a directory
     */
    void unlink(long dirIno, String name) throws IOException;

    /**
     * Removes an empty directory.
     *
     * @param dirIno the parent
     * @param name the directory's name, checked (see the class comment)
     * @throws IOException if absent, not a directory or not empty
     */
    void rmdir(long dirIno, String name) throws IOException;

    /**
     * Moves a name, replacing a regular file or empty directory at the target (whose inode then goes
     * the way of {@link #unlink}).
     *
     * @param fromDir source directory
     * @param fromName source name, checked (see the class comment)
     * @param toDir target directory
     * @param toName target name, checked (see the class comment)
     * <p>The core never calls it with a directory and a target inside that directory's own subtree,
     * with a target directory above the source, or with two names of one inode (it refuses or skips
     * those itself).
     *
     * @return the inode number that lost its last name, or -1
     * @throws IOException if the source is absent or the target is a non-empty directory
     */
    long rename(long fromDir, String fromName, long toDir, String toName) throws IOException;

    /**
     * Swaps two existing names atomically ({@code RENAME_EXCHANGE}): {@code name1} in {@code dir1}
     * then points at what {@code name2} pointed at and the other way round, with the entries' types;
     * a directory that changes parent gets its parent pointer and both parents their link counts
     * adjusted. All of it is one metadata change: after a power cut the device holds either the old
     * or the new state. No inode loses a name. The core calls it only when the adapter declares
     * {@link dev.iomap.api.Capability#RENAME_EXCHANGE}, with two different names, and never with a
     * directory and a name inside that directory's own subtree (it refuses those itself).
     *
     * <p>This default throws {@link NotSupportedException}: an adapter that does not exchange
     * keeps compiling and does not declare the capability.
     *
     * @param dir1 the first name's directory
     * @param name1 the first name, checked (see the class comment)
     * @param dir2 the second name's directory
     * @param name2 the second name, checked (see the class comment)
     * @throws IOException {@link java.nio.file.NoSuchFileException} if either name is absent
     */
    default void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        throw new NotSupportedException("exchange of '" + name1 + "' and '" + name2 + "' is not supported");
    }

    /**
     * @return space and inode counts
     * @throws IOException on a device error
     */
    FsStat statfs() throws IOException;

    /** @return how the core maps file ranges of this mount's inodes */
    IomapOps iomapOps();

    /** @return how this mount takes part in writeback */
    WritebackOps writebackOps();

    /**
     * Refuses a size the file cannot take, before anything changes. The core calls it for a truncate
     * under the inode lock and before it touches the page cache, so a refusal leaves cache and file as
     * they were; {@link #setSize} comes later and does the work. A zone file, which takes only 0 or its
     * capacity, needs it: a refusal from {@code setSize} would come after the cache past the new size
     * was dropped. Default: every size is accepted.
     *
     * @param inode the file, at its current size
     * @param newSize the size asked for, at least 0
     * @throws IOException to refuse ({@link NotSupportedException} for a size the file cannot take)
     */
    default void checkSetSize(IomapInode inode, long newSize) throws IOException {
    }

    /**
     * Changes a file's size on the device. Called after the core truncated its cache, under the
     * inode lock: free blocks past a smaller size (the partial last block was already zeroed through
     * the cache).
     *
     * @param inode the file (its {@link IomapInode#size()} is already {@code newSize})
     * @param newSize the new size
     * @throws IOException on a device error, or {@link NotSupportedException}
     */
    void setSize(IomapInode inode, long newSize) throws IOException;

    /**
     * Allocates, punches or zeroes whole blocks. For punch and zero the core has already written back
     * and dropped the cache over the range and zeroed the partial blocks at its edges through the
     * cache; {@code offset} and {@code length} here are block aligned.
     *
     * @param inode the file
     * @param mode what to do
     * @param offset first byte, block aligned
     * @param length bytes, block aligned
     * @throws IOException no space, or {@link NotSupportedException}
     */
    void fallocate(IomapInode inode, FallocateMode mode, long offset, long length) throws IOException;

    /**
     * Shares blocks of {@code source} with {@code target} (reflink). The core has written back the
     * source range and dropped the target range from the cache. Default: not supported.
     *
     * @param source the file to share from
     * @param srcOffset block-aligned offset in the source
     * @param target the file to share into
     * @param dstOffset block-aligned offset in the target
     * @param length bytes (block aligned, or ending at the source's EOF)
     * @throws IOException no space, or {@link NotSupportedException}
     */
    default void cloneRange(IomapInode source, long srcOffset, IomapInode target, long dstOffset, long length)
            throws IOException {
        throw new NotSupportedException("clone is not supported by this filesystem");
    }

    /**
     * Makes a file's metadata durable after its data has been written back (journal commit and
     * device flush).
     *
     * @param inode the file
     * @param dataOnly true for fdatasync: only what is needed to read the data back (size, extents)
     * @throws IOException on a device error
     */
    void fsync(IomapInode inode, boolean dataOnly) throws IOException;

    /**
     * The first open file of an inode on this mount is being opened (its open count goes from 0 to 1;
     * the core's namespace lock is held). Paired with exactly one later {@link #release} or
     * {@link #evict} of the inode, at its last close here, if this returns normally. A cluster adapter
     * records here that this node has the inode open, so that no other node frees it while it is
     * (GFS2 holds the inode's iopen glock shared). This default does nothing.
     *
     * @param inode the file
     * @throws java.nio.file.NoSuchFileException if the inode lost its last name since the path was
     *     resolved (another node unlinked it); the open fails
     * @throws IOException on a device or lock error; the open fails
     */
    default void open(IomapInode inode) throws IOException {
    }

    /**
     * Whether the last close of an inode on this mount should evict it ({@link #evict}) rather than
     * release it ({@link #release}), although this mount did not unlink it: the kernel's
     * {@code drop_inode}, which looks at the link count the filesystem keeps up to date. A cluster adapter
     * answers true for an inode another node unlinked while it was open here. The core evicts the inodes
     * it unlinked itself without asking. Called under the core's namespace lock; must not wait for other
     * nodes. This default: false.
     *
     * @param inode the file whose last open file here is closing
     * @return whether it has no name left and is to be evicted
     */
    default boolean dropInode(IomapInode inode) {
        return false;
    }

    /**
     * The last open file of an inode that still has a name closed: drop what only an open writer
     * needs, such as speculative preallocation past EOF ({@code xfs_release} frees those blocks, so a
     * closed file holds only its data). Called with the inode lock held exclusively. This default does
     * nothing.
     *
     * @param inode the file, at its in-memory size
     * @throws IOException on a device error
     */
    default void release(IomapInode inode) throws IOException {
    }

    /**
     * Called by the core around a read, write, seek, truncate or fallocate of an open file (and before
     * a stat consults its in-memory size), without the inode lock; the returned use is closed when the
     * operation ended. A cluster adapter holds the file's glock across the whole operation, so another
     * node sees a write whole or not at all (GFS2 holds the glock across {@code read_iter} and
     * {@code write_iter}), and, if a demotion dropped the cache since, first sets the size another node
     * left with {@link IomapInode#refreshSize}. This default holds nothing.
     *
     * @param inode the file
     * @param write whether the operation changes the file (a write, truncate or fallocate)
     * @return the use, closed once by the core
     * @throws IOException if the glock cannot be had or the device fails
     */
    default FileUse use(IomapInode inode, boolean write) throws IOException {
        return FileUse.NONE;
    }

    /** One core operation's use of a file ({@link #use}): closing it ends what the adapter held for it. */
    @FunctionalInterface
    interface FileUse extends AutoCloseable {
        /** A use that holds nothing. */
        FileUse NONE = () -> { };

        /** Ends the use; never throws. */
        @Override
        void close();
    }

    /**
     * The inode has no name and no open file left on this mount: free it and its blocks (a cluster
     * adapter frees them only once no other node has the inode open either). An inode another node
     * unlinked while it was open here comes here too if {@link #dropInode} said so.
     *
     * @param ino the inode
     * @throws IOException on a device error
     */
    void evict(long ino) throws IOException;

    /**
     * Makes everything durable (after the core wrote back every file).
     *
     * @throws IOException on a device error
     */
    void sync() throws IOException;

    /**
     * Makes everything durable and marks the image clean. The mount is unusable afterwards.
     *
     * @throws IOException on a device error
     */
    void unmount() throws IOException;
}
