package dev.iomap.core.vfs;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileFlag;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.spi.InodeOps;
import java.io.IOException;
import java.util.Set;

/**
 * What Linux's VFS refuses on inodes with {@link FileFlag#IMMUTABLE} or {@link FileFlag#APPEND}
 * ({@code IS_IMMUTABLE}, {@code IS_APPEND}), every refusal EPERM ({@link OperationNotPermittedException}):
 * {@code may_open}, {@code may_delete}, {@code may_create} (through {@code inode_permission}'s
 * {@code MAY_WRITE}), {@code vfs_link}, {@code notify_change} and {@code xattr_permission}. Namespace checks
 * run under the core's namespace lock, as the change they guard. An adapter without
 * {@link dev.iomap.api.Capability#INODE_FLAGS} keeps neither flag, and nothing is asked of it.
 */
final class InodeFlagRules {
    private final InodeOps inodes;
    private final boolean kept;

    /**
     * @param inodes the adapter's inode operations
     * @param kept whether the adapter keeps the flags ({@link dev.iomap.api.Capability#INODE_FLAGS})
     */
    InodeFlagRules(InodeOps inodes, boolean kept) {
        this.inodes = inodes;
        this.kept = kept;
    }

    /**
     * @param ino an inode
     * @return its flags, none where the adapter keeps none
     */
    Set<FileFlag> of(long ino) throws IOException {
        return kept ? inodes.getflags(ino) : Set.of();
    }

    /**
     * {@code may_open}: an immutable file opens read-only, an append-only one read-only or to append.
     *
     * @param flags the inode's flags ({@link #of})
     */
    static void mayOpen(Set<FileFlag> flags, Set<OpenFlag> open, String path) throws IOException {
        if (open.contains(OpenFlag.READ_ONLY)) {
            return;
        }
        if (flags.contains(FileFlag.IMMUTABLE)) {
            throw refused(path, "open for writing of an immutable file");
        }
        if (flags.contains(FileFlag.APPEND) && !open.contains(OpenFlag.APPEND)) {
            throw refused(path, "open for writing, not appending, of an append-only file");
        }
    }

    /** {@code may_create}: nothing is added to an immutable directory. */
    void mayCreateIn(long dir, String path) throws IOException {
        if (kept && of(dir).contains(FileFlag.IMMUTABLE)) {
            throw refused(path, "a new name in an immutable directory");
        }
    }

    /**
     * {@code may_delete}: no name leaves an immutable or append-only directory, and no immutable or
     * append-only inode loses a name.
     */
    void mayDelete(long dir, long ino, String path) throws IOException {
        if (!kept) {
            return;
        }
        if (restricted(of(dir))) {
            throw refused(path, "removing a name from an immutable or append-only directory");
        }
        if (restricted(of(ino))) {
            throw refused(path, "removing a name of an immutable or append-only file");
        }
    }

    /** {@code vfs_link}: an immutable or append-only inode gets no new name. */
    void mayLink(long ino, String path) throws IOException {
        if (kept && restricted(of(ino))) {
            throw refused(path, "a hard link to an immutable or append-only file");
        }
    }

    /**
     * {@code notify_change}: mode, owner and explicit times change on neither kind; times set to now
     * ({@link AttributeChange#touch()}) not on an immutable file. A read's access-time update is not
     * asked here (see {@link #skipsAccessTime}).
     */
    void maySetattr(long ino, AttributeChange change, String path) throws IOException {
        if (!kept || change.access() || change.isEmpty()) {
            return;
        }
        Set<FileFlag> flags = of(ino);
        boolean owned = change.mode().isPresent() || change.uid().isPresent() || change.gid().isPresent();
        boolean timesSet = !change.touch() && (change.atime().isPresent() || change.mtime().isPresent());
        if ((owned || timesSet) && restricted(flags)) {
            throw refused(path, "mode, owner or times of an immutable or append-only file");
        }
        if (change.touch() && flags.contains(FileFlag.IMMUTABLE)) {
            throw refused(path, "times of an immutable file");
        }
    }

    /** @return whether a read leaves the access time of this inode as it is ({@link FileFlag#NO_ATIME}) */
    boolean skipsAccessTime(long ino) throws IOException {
        return kept && of(ino).contains(FileFlag.NO_ATIME);
    }

    /** {@code xattr_permission}: no extended attribute of either kind changes. */
    void mayChangeXattrs(long ino, String path) throws IOException {
        if (kept && restricted(of(ino))) {
            throw refused(path, "extended attributes of an immutable or append-only file");
        }
    }

    /** @return whether the flags make an inode immutable or append-only */
    static boolean restricted(Set<FileFlag> flags) {
        return flags.contains(FileFlag.IMMUTABLE) || flags.contains(FileFlag.APPEND);
    }

    static OperationNotPermittedException refused(String path, String what) {
        return new OperationNotPermittedException(path, what);
    }
}
