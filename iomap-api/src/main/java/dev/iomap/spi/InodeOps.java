package dev.iomap.spi;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The mount's namespace and attributes, the kernel's {@code inode_operations} ({@code lookup},
 * {@code create}, {@code mkdir}, {@code symlink}, {@code get_link}, {@code link}, {@code unlink},
 * {@code rmdir}, {@code rename}, {@code getattr}, {@code setattr}, {@code fileattr_get/set},
 * {@code update_time}) plus a directory's {@code iterate_shared} ({@link #readdir}), which the kernel
 * keeps in the directory's {@code file_operations} and which the core calls here by inode number.
 * Reached through {@link MountedFileSystem#inodeOps()}. {@code adapter-support}'s
 * {@code dev.iomap.adapter.support.ns.PosixNamespace} implements the POSIX rules of the namespace
 * changes here over a store of the adapter's directories and inodes.
 *
 * <p>Locking the core guarantees: namespace changes ({@link #create}, {@link #unlink},
 * {@link #rename}...) are serialised.
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
 * <p><b>Links and attributes.</b> The methods for them have defaults that throw
 * {@link NotSupportedException}; an adapter overrides those of the capabilities it declares
 * ({@link dev.iomap.api.Capability#SYMLINKS}, {@link dev.iomap.api.Capability#HARD_LINKS},
 * {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES}); the core calls them only then. Times: the adapter
 * sets {@code ctime} (and, for contents, {@code mtime}) of the inodes a namespace or attribute change
 * touches to the current time, as Linux does: a new name changes the directory's mtime and ctime, a
 * link or unlink the file's ctime, {@link FileOps#setSize} mtime and ctime. Writes through the cache
 * are the core's: it calls {@link #updateTimes} when a write or a mapped write starts (never at
 * writeback, so a later {@code utimensat} is not overwritten by I/O completion).
 *
 * <p>Errors: {@link java.nio.file.NoSuchFileException}, {@link java.nio.file.FileAlreadyExistsException},
 * {@link java.nio.file.DirectoryNotEmptyException}, {@link java.nio.file.NotDirectoryException},
 * {@link dev.iomap.api.NoSpaceException}, {@link NotSupportedException},
 * {@link dev.iomap.api.CorruptFileSystemException}.
 */
public interface InodeOps {

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
     * Creates a special file (a FIFO, a device node or a socket) with the given attributes: no data,
     * size 0, all four times now. Adapters with {@link dev.iomap.api.Capability#SPECIAL_FILES} implement
     * it; {@link #getattr} then reports the type and, for a device node, {@code rdev}.
     *
     * @param dirIno the parent directory
     * @param name the new name, checked (see the class comment)
     * @param type a type whose {@link FileType#isSpecial()} holds
     * @param rdev a device node's number ({@link dev.iomap.api.DeviceNumber}); 0 for a FIFO or socket
     * @param attributes mode, owner and group
     * @return the new inode number
     * @throws IOException if the name exists or there is no space
     */
    default long mknod(long dirIno, String name, FileType type, long rdev, NewInodeAttributes attributes)
            throws IOException {
        throw new NotSupportedException("special files are not supported");
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
     * mode change of a symbolic link. Durable with the next {@link FileOps#fsync} or {@link SuperOps#sync}.
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
     * A write or mapped write is starting: set mtime and ctime to {@code now} (the kernel's
     * {@code update_time}). Called often (the core skips calls within a millisecond of the last one for
     * the inode), without the inode lock and possibly from several threads for one inode: the adapter
     * serialises as its metadata needs. Cheap: no device I/O; durable with the next
     * {@link FileOps#fsync} or {@link SuperOps#sync}. This default does nothing.
     *
     * @param inode the file
     * @param now the time to set
     * @throws IOException on a shut-down filesystem
     */
    default void updateTimes(IomapInode inode, Instant now) throws IOException {
    }

    /**
     * @param dirIno a directory
     * @return its entries, names in {@link FileNames}' form, sorted by {@link FileNames#BYTE_ORDER}
     *     (unsigned bytes, not UTF-16 chars: U+FF61 sorts before U+1F600)
     * @throws IOException on a device error
     */
    List<DirEntry> readdir(long dirIno) throws IOException;

    /**
     * Removes a name of a regular file; the inode is freed by {@link SuperOps#evict} once no name and
     * no open file refer to it.
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
     * <p>The core never calls it with a directory and a target inside that directory's own subtree,
     * with a target directory above the source, or with two names of one inode (it refuses or skips
     * those itself).
     *
     * @param fromDir source directory
     * @param fromName source name, checked (see the class comment)
     * @param toDir target directory
     * @param toName target name, checked (see the class comment)
     * @return the inode number that lost its last name, or -1
     * @throws IOException if the source is absent or the target is a non-empty directory
     */
    long rename(long fromDir, String fromName, long toDir, String toName) throws IOException;

    /**
     * {@link #rename}, leaving a whiteout at the old name in the same metadata change
     * ({@code RENAME_WHITEOUT}): a character device 0:0, mode 0, owned as {@code whiteout} says (the
     * directory's set-group-ID bit applies). Adapters with {@link dev.iomap.api.Capability#SPECIAL_FILES}
     * implement it ({@code PosixNamespace.renameWhiteout}); the core calls it under the same conditions as
     * {@link #rename}.
     *
     * @param fromDir source directory
     * @param fromName source name, checked (see the class comment)
     * @param toDir target directory
     * @param toName target name, checked (see the class comment)
     * @param whiteout the whiteout's owner and group (mode ignored)
     * @return the inode number that lost its last name, or -1
     * @throws IOException as {@link #rename}, or if there is no space for the whiteout (nothing changed)
     */
    default long renameWhiteout(long fromDir, String fromName, long toDir, String toName,
            NewInodeAttributes whiteout) throws IOException {
        throw new NotSupportedException("rename with a whiteout is not supported");
    }

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
}
