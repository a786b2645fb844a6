package dev.iomap.api;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Set;

/**
 * A mounted filesystem: an adapter's on-device format behind iomap4j's page cache.
 *
 * <p>Paths are absolute, '/'-separated ({@code "/dir/file"}). A name is a byte string, as in Linux,
 * carried in {@link FileNames}' form: UTF-8 where the bytes are valid UTF-8, every other byte as the
 * lone surrogate {@code U+DC00 + byte}; so the names of bytes {@code caf\xe9} and {@code caf\xe8}
 * are the two strings "caf" + U+DCE9 and "caf" + U+DCE8, and names compare byte for byte. Refused with
 * {@link java.nio.file.InvalidPathException} (unchecked, before anything changes): a relative path;
 * an empty name, "." or ".."; a NUL; a name longer than {@value FileNames#MAX_NAME_BYTES} bytes
 * (counted in {@link FileNames#encode}'s bytes, not in chars: the message says "name longer than 255
 * bytes"); and, as its subclass {@link UnrepresentableNameException} (EILSEQ), a name that stands for
 * no byte string (a lone surrogate that is not an escaped byte, or escaped bytes that spell valid
 * UTF-8, which would be a second spelling of another name). Errors
 * use the {@code java.nio.file} exceptions where one fits ({@link java.nio.file.NoSuchFileException},
 * {@link java.nio.file.FileAlreadyExistsException}, {@link java.nio.file.DirectoryNotEmptyException},
 * {@link java.nio.file.NotDirectoryException}), {@link NoSpaceException} when the device is full and
 * {@link NotSupportedException} for an operation the adapter does not have.
 *
 * <p><b>Symbolic links.</b> Resolving a path follows a symbolic link met in any name but the last (a
 * relative target from the link's directory, an absolute one from this filesystem's root; at most
 * {@value #MAX_SYMLINK_FOLLOWS} links, then {@link SymlinkLoopException}). The last name is followed by
 * {@link #open}, {@link #stat}, {@link #readdir} and {@link #realPath}; every other method acts on
 * the last name itself, as the kernel's {@code l}-calls do ({@code lstat}, {@code lchown},
 * {@code lsetxattr}, {@code utimensat} with {@code AT_SYMLINK_NOFOLLOW}): pass it through
 * {@link #realPath} first to act on what a link points at.
 *
 * <p><b>Defaults.</b> The methods added with links, attributes and extended attributes have defaults
 * that throw {@link NotSupportedException}, so implementations that predate them keep compiling.
 *
 * <p>Thread-safe. After {@link #close()} (unmount: everything written back and the image left clean)
 * every method fails with {@link java.nio.file.ClosedFileSystemException}.
 */
public interface IomapFileSystem extends Closeable {

    /** Symbolic links followed while resolving one path before {@link SymlinkLoopException} (ELOOP). */
    int MAX_SYMLINK_FOLLOWS = 40;

    /** @return the adapter's name */
    String adapterName();

    /** @return what the adapter can do */
    java.util.Set<Capability> capabilities();

    /**
     * Creates an empty regular file and opens it.
     *
     * @param path where, in an existing directory
     * @return the open file
     * @throws IOException if the name exists, the parent is missing, or there is no space
     */
    IomapFile create(String path) throws IOException;

    /**
     * Opens an existing regular file.
     *
     * @param path the file
     * @return the open file
     * @throws IOException if it does not exist or is a directory
     */
    IomapFile open(String path) throws IOException;

    /**
     * Opens an existing regular file with {@code open(2)} flags ({@link OpenFlag}): the entry point for
     * direct I/O ({@link OpenFlag#DIRECT}, refused with {@link NotSupportedException} unless
     * {@link Capability#DIRECT_IO} is declared) and synchronous writes ({@link OpenFlag#DSYNC}). No
     * flags is {@link #open(String)}.
     *
     * <p>This default serves implementations that know no flags: it opens when {@code flags} is empty
     * and throws {@link NotSupportedException} otherwise.
     *
     * @param path the file
     * @param flags how to open it; copied
     * @return the open file, whose {@link IomapFile#openFlags()} are {@code flags}
     * @throws IOException as {@link #open(String)}, or {@link NotSupportedException} for a flag the
     *     filesystem does not take
     */
    default IomapFile open(String path, Set<OpenFlag> flags) throws IOException {
        if (!flags.isEmpty()) {
            throw new NotSupportedException("open with " + flags + " is not supported here");
        }
        return open(path);
    }

    /**
     * Creates a directory.
     *
     * @param path where, in an existing directory
     * @throws IOException if the name exists or the parent is missing
     */
    void mkdir(String path) throws IOException;

    /**
     * Lists a directory.
     *
     * @param path the directory
     * @return its entries, their names in {@link FileNames}' form, sorted by
     *     {@link FileNames#BYTE_ORDER} (the bytes, unsigned)
     * @throws IOException if it does not exist or is not a directory
     */
    List<DirEntry> readdir(String path) throws IOException;

    /**
     * Removes a file's name. An open file stays readable and writable until closed.
     *
     * @param path the file
     * @throws IOException if it does not exist or is a directory
     */
    void unlink(String path) throws IOException;

    /**
     * Removes an empty directory.
     *
     * @param path the directory
     * @throws IOException if it does not exist, is not a directory, or is not empty
     */
    void rmdir(String path) throws IOException;

    /**
     * Renames, replacing an existing regular file at the target.
     *
     * @param from the existing name
     * @param to the new name
     * @throws IOException if {@code from} is missing, or {@code to} is a non-empty directory
     */
    void rename(String from, String to) throws IOException;

    /**
     * Renames with {@code renameat2} flags. No flags is {@link #rename(String, String)}.
     * {@link RenameFlag#NOREPLACE}: refused with {@link java.nio.file.FileAlreadyExistsException} if
     * {@code to} exists, decided atomically with the rename (no other namespace change in between).
     * {@link RenameFlag#EXCHANGE}: both names must exist ({@link java.nio.file.NoSuchFileException}
     * otherwise) and are swapped atomically, for files and directories, across directories (a moved
     * directory's parent follows); exchanging a directory with a name inside its own subtree is an
     * {@link IllegalArgumentException} (EINVAL); exchanging a name with itself changes nothing.
     * Without {@link Capability#RENAME_EXCHANGE}, EXCHANGE is a {@link NotSupportedException}.
     *
     * <p>This default serves implementations that know no flags: it renames when {@code flags} is
     * empty and throws {@link NotSupportedException} otherwise.
     *
     * @param from the existing name
     * @param to the new name, or the other existing name for EXCHANGE
     * @param flags at most one flag
     * @throws IllegalArgumentException if {@code flags} holds both flags
     * @throws IOException as {@link #rename(String, String)}, and as the flags say
     */
    default void rename(String from, String to, Set<RenameFlag> flags) throws IOException {
        RenameFlags.check(flags);
        if (!flags.isEmpty()) {
            throw new NotSupportedException("rename with " + flags + " is not supported here");
        }
        rename(from, to);
    }

    /**
     * {@link #rename(String, String, Set)}, with the owner and group of the whiteout
     * {@link RenameFlag#WHITEOUT} leaves (its mode is always 0; the directory's set-group-ID bit gives it
     * the directory's group, as for any new inode). Without WHITEOUT, {@code whiteout} is ignored. This
     * default refuses WHITEOUT with {@link NotSupportedException}.
     *
     * @param from the existing name
     * @param to the new name
     * @param flags as {@link #rename(String, String, Set)} takes them, or WHITEOUT, alone or with NOREPLACE
     * @param whiteout the whiteout's owner and group (its mode is ignored)
     * @throws IOException as {@link #rename(String, String, Set)}; {@link NotSupportedException} for
     *     WHITEOUT without {@link Capability#SPECIAL_FILES}
     */
    default void rename(String from, String to, Set<RenameFlag> flags, NewInodeAttributes whiteout)
            throws IOException {
        if (flags.contains(RenameFlag.WHITEOUT)) {
            RenameFlags.check(flags);
            throw new NotSupportedException("rename with WHITEOUT is not supported here");
        }
        rename(from, to, flags);
    }

    /**
     * @param path a file or directory
     * @return what it is
     * @throws IOException if it does not exist
     */
    FileStat stat(String path) throws IOException;

    /**
     * Creates an empty regular file with the given attributes and opens it.
     *
     * @param path where, in an existing directory
     * @param attributes mode, owner and group (kept where {@link Capability#POSIX_ATTRIBUTES} is
     *     declared, ignored otherwise)
     * @return the open file
     * @throws IOException as {@link #create(String)}
     */
    default IomapFile create(String path, NewInodeAttributes attributes) throws IOException {
        throw new NotSupportedException("create with attributes is not supported here");
    }

    /**
     * Creates a directory with the given attributes.
     *
     * @param path where, in an existing directory
     * @param attributes as for {@link #create(String, NewInodeAttributes)}
     * @throws IOException as {@link #mkdir(String)}
     */
    default void mkdir(String path, NewInodeAttributes attributes) throws IOException {
        throw new NotSupportedException("mkdir with attributes is not supported here");
    }

    /**
     * Stats a name without following it if it is a symbolic link ({@code lstat}).
     *
     * @param path a file, directory or symbolic link
     * @return what it is
     * @throws IOException if it does not exist
     */
    default FileStat lstat(String path) throws IOException {
        throw new NotSupportedException("lstat is not supported here");
    }

    /**
     * Resolves every symbolic link in a path ({@code realpath(3)}).
     *
     * @param path an existing path
     * @return the absolute path of the same file with no symbolic link in it
     * @throws IOException {@link java.nio.file.NoSuchFileException} if it or a link's target is missing,
     *     {@link SymlinkLoopException} on a loop
     */
    default String realPath(String path) throws IOException {
        throw new NotSupportedException("realPath is not supported here");
    }

    /**
     * Creates a symbolic link. Its mode is {@code 0777}; its size is the target's length in bytes.
     * Needs {@link Capability#SYMLINKS}.
     *
     * @param link the new name, in an existing directory
     * @param target what it points at, kept as given (need not exist): in {@link FileNames}' form,
     *     at most {@value FileNames#MAX_TARGET_BYTES} bytes, not empty
     * @param attributes owner and group (the mode is ignored)
     * @throws IOException {@link java.nio.file.FileAlreadyExistsException} if {@code link} exists
     */
    default void createSymbolicLink(String link, String target, NewInodeAttributes attributes) throws IOException {
        throw new NotSupportedException("symbolic links are not supported here");
    }

    /**
     * Creates a special file, as {@code mknod(2)} does: a FIFO, a character or block device node, or a
     * socket's name. It holds no data: {@link #open} of it is refused (the kernel, not the file system,
     * joins a FIFO's readers and writers and opens a device). Needs {@link Capability#SPECIAL_FILES}.
     *
     * @param path the new name, in an existing directory
     * @param type {@link FileType#FIFO}, {@link FileType#CHARACTER_DEVICE}, {@link FileType#BLOCK_DEVICE}
     *     or {@link FileType#SOCKET}
     * @param rdev a device node's number ({@link DeviceNumber}); 0 for a FIFO or a socket
     * @param attributes mode, owner and group
     * @throws IllegalArgumentException if {@code type} is not a special file's, or {@code rdev} is not 0
     *     for one that is not a device node
     * @throws IOException {@link java.nio.file.FileAlreadyExistsException} if {@code path} exists,
     *     {@link NotSupportedException} without {@link Capability#SPECIAL_FILES}
     */
    default void createSpecialFile(String path, FileType type, long rdev, NewInodeAttributes attributes)
            throws IOException {
        throw new NotSupportedException("special files are not supported here");
    }

    /**
     * Reads a symbolic link's target.
     *
     * @param link the link
     * @return the target, exactly as created, in {@link FileNames}' form
     * @throws IOException {@link java.nio.file.NotLinkException} if {@code link} is not a symbolic link
     */
    default String readSymbolicLink(String link) throws IOException {
        throw new NotSupportedException("symbolic links are not supported here");
    }

    /**
     * Adds a name to an existing regular file or symbolic link (a hard link; the last name of
     * {@code existing} is not followed, as {@code link(2)} does). Raises its link count and ctime.
     * Needs {@link Capability#HARD_LINKS}.
     *
     * @param link the new name, in an existing directory
     * @param existing the file
     * @throws IOException {@link java.nio.file.FileAlreadyExistsException} if {@code link} exists,
     *     {@link OperationNotPermittedException} (EPERM) if {@code existing} is a directory
     */
    default void createLink(String link, String existing) throws IOException {
        throw new NotSupportedException("hard links are not supported here");
    }

    /**
     * Changes mode, owner, group and times ({@code chmod}, {@code chown}, {@code utimensat}); sets
     * {@code ctime} to now unless the change is empty. Needs {@link Capability#POSIX_ATTRIBUTES}. The
     * last name is not followed. No permission is checked: the caller (the kernel, over FUSE) decides
     * who may.
     *
     * @param path the file, directory or symbolic link
     * @param change what to change
     * @return the attributes afterwards
     * @throws IOException {@link NotSupportedException} for a mode change of a symbolic link (Linux's
     *     {@code EOPNOTSUPP} from {@code fchmodat} with {@code AT_SYMLINK_NOFOLLOW})
     */
    default FileStat setAttributes(String path, AttributeChange change) throws IOException {
        throw new NotSupportedException("attribute changes are not supported here");
    }

    /**
     * Reads an extended attribute. Needs {@link Capability#XATTRS}. Names are checked by
     * {@link Xattrs#checkName}.
     *
     * @param path the file (not followed)
     * @param name the attribute's full name, e.g. {@code user.mime_type}
     * @return its value (a new array)
     * @throws IOException {@link NoSuchAttributeException} (ENODATA) if absent
     */
    default byte[] getXattr(String path, String name) throws IOException {
        throw new NotSupportedException("extended attributes are not supported here");
    }

    /**
     * Lists extended attributes.
     *
     * @param path the file (not followed)
     * @return the names, sorted by {@link FileNames#BYTE_ORDER}
     * @throws IOException if the file does not exist
     */
    default List<String> listXattrs(String path) throws IOException {
        throw new NotSupportedException("extended attributes are not supported here");
    }

    /**
     * Creates or replaces an extended attribute; sets ctime. A {@code user.} attribute can be set only
     * on regular files and directories ({@link OperationNotPermittedException}, EPERM, on a symbolic
     * link, as Linux).
     *
     * @param path the file (not followed)
     * @param name the attribute's full name
     * @param value at most {@value Xattrs#MAX_VALUE_BYTES} bytes (else {@link XattrLimitException}, E2BIG)
     * @param mode whether it must be new, or must exist
     * @throws IOException {@link java.nio.file.FileAlreadyExistsException} for {@link XattrMode#CREATE}
     *     of an existing one, {@link NoSuchAttributeException} for {@link XattrMode#REPLACE} of a
     *     missing one, {@link NoSpaceException} if the adapter cannot hold it
     */
    default void setXattr(String path, String name, byte[] value, XattrMode mode) throws IOException {
        throw new NotSupportedException("extended attributes are not supported here");
    }

    /**
     * Removes an extended attribute; sets ctime.
     *
     * @param path the file (not followed)
     * @param name the attribute's full name
     * @throws IOException {@link NoSuchAttributeException} (ENODATA) if absent
     */
    default void removeXattr(String path, String name) throws IOException {
        throw new NotSupportedException("extended attributes are not supported here");
    }

    /**
     * The inode flags of the file at {@code path} ({@code lsattr}); symbolic links are followed.
     *
     * @param path an absolute path
     * @return its flags, empty where the adapter keeps none
     * @throws IOException e.g. {@link java.nio.file.NoSuchFileException}
     */
    default Set<FileFlag> getFileFlags(String path) throws IOException {
        throw new NotSupportedException("journaled data and other inode flags are not supported here");
    }

    /**
     * Sets the inode flags of the file at {@code path} to exactly {@code flags} ({@code chattr});
     * symbolic links are followed. Setting {@link FileFlag#JOURNAL_DATA} needs
     * {@link Capability#JOURNALED_DATA}.
     *
     * @param path an absolute path
     * @param flags the complete new set
     * @throws NotSupportedException for a flag the adapter does not support
     * @throws IOException e.g. {@link java.nio.file.NoSuchFileException}
     */
    default void setFileFlags(String path, Set<FileFlag> flags) throws IOException {
        throw new NotSupportedException("journaled data and other inode flags are not supported here");
    }

    /**
     * @return space and inode counts
     * @throws IOException on a device error
     */
    FsStat statfs() throws IOException;

    /**
     * @return the filesystem's UUID ({@code blkid}'s UUID), or empty if its format has none; this
     *     default: empty
     * @throws IOException if the device fails while the adapter derives it (see the adapter)
     */
    default java.util.Optional<java.util.UUID> uuid() throws IOException {
        return java.util.Optional.empty();
    }

    /**
     * @return the filesystem's label ({@code blkid}'s LABEL), empty if none was given
     * @throws NotSupportedException if the adapter's format keeps no label (this default)
     * @throws IOException on a device error
     */
    default String label() throws IOException {
        throw new NotSupportedException(adapterName() + " keeps no label");
    }

    /**
     * Sets the filesystem's label durably (written and flushed when this returns), as
     * {@code FS_IOC_SETFSLABEL} does.
     *
     * @param label UTF-8 text without NUL, at most what the format holds; empty clears it
     * @throws InvalidRangeException if it is too long for the format or holds a NUL
     * @throws NotSupportedException if the format keeps no label or sets it only at mkfs (this default)
     * @throws IOException on a device error, e.g. {@link dev.iomap.device.ReadOnlyDeviceException}
     */
    default void setLabel(String label) throws IOException {
        throw new NotSupportedException(adapterName() + " keeps no label");
    }

    /**
     * Discards the free space in a byte range ({@code FITRIM}, {@code fstrim}): see the adapter's
     * {@link dev.iomap.spi.SuperOps#trim}.
     *
     * @param start first byte, at least 0, below the file system's size
     * @param length bytes, at least one block
     * @param minLength smallest free extent worth discarding, in bytes
     * @return bytes discarded
     * @throws InvalidRangeException for a range as above
     * @throws NotSupportedException if the adapter cannot (this default)
     * @throws IOException on a device error
     */
    default long trim(long start, long length, long minLength) throws IOException {
        throw new NotSupportedException(adapterName() + " does not trim its free space");
    }

    /**
     * The largest size a regular file can reach, in bytes: a write, truncate or fallocate past it fails
     * with {@link InvalidRangeException} (the kernel's {@code s_maxbytes}; EFBIG). An adapter's mapping
     * model sets it (direct and indirect pointers, an extent format's offset field), and it may be far
     * below the device's capacity or far above it.
     *
     * @return the limit, positive
     */
    long maxFileSize();

    /**
     * Writes back every file and makes all metadata durable (the kernel's {@code syncfs}).
     *
     * @throws IOException on a device error
     */
    void sync() throws IOException;

    /**
     * Shuts the mount down on request, as XFS's {@code XFS_IOC_GOINGDOWN} with
     * {@code XFS_FSOP_GOING_FLAGS_LOGFLUSH} ({@code godown -f}, {@code xfs_io -c "shutdown -f"}): first the
     * log force, so that every change made before the call is durable (a file created before it is there
     * after the next mount); since committed metadata must never point at blocks whose data was not
     * written (stale data), the log force is a {@link #sync}: files are written back, then the metadata
     * committed and the device flushed (if that fails, the mount is shut down all the same with what had
     * reached the device). From then on every operation of the mount fails
     * with {@link FileSystemShutdownException} (EIO), no write reaches the device, and {@link #close()}
     * writes nothing and throws that exception; the next mount recovers the image as after a crash
     * (journal replay), with every fsync'd change in it. Idempotent. This default refuses.
     *
     * @throws NotSupportedException if the implementation cannot shut down (this default)
     * @throws IOException if the device flush fails (the mount is shut down all the same)
     */
    default void shutDown() throws IOException {
        throw new NotSupportedException("shutting down on request is not supported by " + adapterName());
    }

    /**
     * Drops every clean cached folio of the mount (the kernel's {@code drop_caches}); dirty data and
     * data under writeback stay. Later reads come from the device.
     *
     * @return bytes of cache freed
     */
    long dropCleanCache();

    /** @return what the page cache and device did since mount */
    IoStats stats();

    /**
     * Where the mount's page cache stands (cached, dirty and writeback bytes) and how its reads fared,
     * for monitoring ({@code iomap top}, the metrics). This default serves implementations without a
     * page cache of their own: {@link CacheStatus#NONE}.
     *
     * @return a snapshot
     */
    default CacheStatus cacheStatus() {
        return CacheStatus.NONE;
    }

    /**
     * Unmounts: syncs, leaves a clean image and releases the cache. Idempotent. Open files become
     * unusable. The mount is released even when the final sync fails (then the image may not be
     * clean, and the error is thrown).
     *
     * @throws IOException if the final sync fails
     */
    @Override
    void close() throws IOException;
}
