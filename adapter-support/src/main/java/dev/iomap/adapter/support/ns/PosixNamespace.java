package dev.iomap.adapter.support.ns;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * The POSIX rules of a namespace change, once for every adapter: which names must exist or be absent
 * ({@code ENOENT}, {@code EEXIST}), which types may meet ({@code ENOTDIR}, {@code EISDIR},
 * {@code ENOTEMPTY}), link counts (a regular file or symbolic link has one per name, a directory 2 plus
 * one per subdirectory), parent pointers, and times as Linux sets them (a new or removed name sets the
 * directory's mtime and ctime; a new inode has all four times now; a link, unlink, rename or exchange
 * sets the inode's ctime). The adapter brings its storage as a {@link Store} of one metadata change and
 * the bracket around it (its lock, journal or btree transaction, cluster locks): it opens the change,
 * calls one method here with the change's store, and commits.
 *
 * <p>Every method takes names as {@code dev.iomap.spi.InodeOps} receives them and checks new names with
 * {@link FileNames#check} again, so a direct caller of the mount cannot store a name the format cannot
 * hold. A refusal is thrown before the store is asked to change anything. Stateless.
 */
public final class PosixNamespace {

    private PosixNamespace() {
    }

    /**
     * One metadata change of an adapter's directories and inodes, as {@link PosixNamespace} uses it.
     * {@link PosixNamespace} checks everything before its first change of an operation, and makes
     * every change of it through the same store. Not thread-safe.
     *
     * @param <I> the adapter's inode record
     */
    public interface Store<I extends NamespaceInode> {

        /**
         * @param ino an inode number
         * @return its record
         * @throws IOException {@link NoSuchFileException} if there is no such inode, or a device error
         */
        I inode(long ino) throws IOException;

        /**
         * @param dir a directory
         * @param name a name
         * @return the entry {@code name} in {@code dir}, if there is one
         * @throws IOException on a device error
         */
        Optional<DirEntry> find(I dir, String name) throws IOException;

        /**
         * @param dir a directory
         * @return whether it has no entry
         * @throws IOException on a device error
         */
        boolean isEmpty(I dir) throws IOException;

        /**
         * Makes a new inode as {@code inode} describes (with a link target for a symbolic link) and
         * makes room for its entry {@code name} in {@code dir}, which {@link #addEntry} fills next.
         *
         * @param dir the directory the inode is created in
         * @param name its name there, checked and absent
         * @param inode what the inode is to be
         * @return the new record, recorded in the change
         * @throws IOException {@link dev.iomap.api.NoSpaceException} if the inode or its entry does not fit
         */
        I allocate(I dir, String name, NewInode inode) throws IOException;

        /**
         * Makes a new inode as {@link #allocate} does, for an entry {@code name} that exists in {@code dir}
         * and that {@link #replaceEntry} points at the inode next: no room is made for an entry (a store
         * that makes room in advance must not here: the room would go unused). This default calls
         * {@link #allocate}, right for a store whose allocation makes no room in advance.
         *
         * @param dir the directory the entry is in
         * @param name the existing entry's name
         * @param inode what the inode is to be
         * @return the new record, recorded in the change
         * @throws IOException {@link dev.iomap.api.NoSpaceException} if the inode does not fit
         */
        default I allocateForExistingEntry(I dir, String name, NewInode inode) throws IOException {
            return allocate(dir, name, inode);
        }

        /**
         * Adds an entry.
         *
         * @param dir the directory
         * @param name the name, absent in {@code dir}
         * @param ino the inode it names
         * @param type that inode's type
         * @throws IOException {@link dev.iomap.api.NoSpaceException} if the directory cannot grow
         */
        void addEntry(I dir, String name, long ino, FileType type) throws IOException;

        /**
         * Points an existing entry at another inode.
         *
         * @param dir the directory
         * @param name the name, present in {@code dir}
         * @param ino the inode it names from now on
         * @param type that inode's type
         * @throws IOException on a device error
         */
        void replaceEntry(I dir, String name, long ino, FileType type) throws IOException;

        /**
         * Removes an entry.
         *
         * @param dir the directory
         * @param name the name, present in {@code dir}
         * @throws IOException on a device error
         */
        void removeEntry(I dir, String name) throws IOException;

        /**
         * Records an inode whose fields {@link PosixNamespace} changed in this change.
         *
         * @param inode the record
         */
        void changed(I inode);

        /**
         * A name is about to be added to an existing inode ({@link PosixNamespace#link}): refuse
         * ({@link NoSuchFileException}) or clear an orphan mark of an inode that has no name left.
         * This default does nothing.
         *
         * @param inode the inode, at its current link count
         * @throws IOException to refuse the link
         */
        default void linking(I inode) throws IOException {
        }

        /**
         * An inode that is not a directory lost its last name (it was recorded with
         * {@link #changed}): it stays until evicted; mark it so that a mount after a crash frees it.
         * This default does nothing.
         *
         * @param inode the inode, link count 0
         */
        default void orphaned(I inode) {
        }

        /**
         * Frees a directory that lost its name (it is empty): its record and blocks. Called last in the
         * change, after every entry and record change of it.
         *
         * @param dir the directory
         * @throws IOException on a device error
         */
        void freeDirectory(I dir) throws IOException;

        /**
         * The directory {@code dir} has its name in, for refusing to move a directory into its own
         * subtree; the core refuses that by path before any adapter is asked, so a store that cannot
         * read parents cheaply and safely here answers -1 (this default) and the walk stops.
         *
         * @param dir a directory
         * @return its parent directory, or -1 for the root or to stop the walk
         */
        default long parentOf(I dir) {
            return -1;
        }
    }

    /**
     * A new inode, as {@link Store#allocate} is to make it.
     *
     * @param type what it is
     * @param mode its mode, the set-group-ID inheritance applied ({@link PosixRules#newMode})
     * @param uid its owner
     * @param gid its group ({@link PosixRules#newGid})
     * @param linkCount 2 for a directory, else 1
     * @param dirIno the directory it is created in (its parent if it is a directory)
     * @param now its four times
     * @param target a symbolic link's target bytes, else null
     * @param rdev a device node's number, else 0
     */
    public record NewInode(FileType type, int mode, int uid, int gid, int linkCount, long dirIno, Instant now,
            byte[] target, long rdev) {
    }

    /**
     * @param store the change
     * @param ino an inode number
     * @param <I> the adapter's inode record
     * @return its record, which is a directory
     * @throws IOException {@link NotDirectoryException} if it is not a directory
     */
    public static <I extends NamespaceInode> I directory(Store<I> store, long ino) throws IOException {
        I dir = store.inode(ino);
        if (dir.type() != FileType.DIRECTORY) {
            throw new NotDirectoryException("inode " + ino);
        }
        return dir;
    }

    /**
     * @param store the change
     * @param dirIno a directory
     * @param name a name in it
     * @param <I> the adapter's inode record
     * @return the inode the name points at
     * @throws IOException {@link NoSuchFileException} if absent, {@link NotDirectoryException}
     */
    public static <I extends NamespaceInode> long lookup(Store<I> store, long dirIno, String name)
            throws IOException {
        return existing(store, directory(store, dirIno), name).ino();
    }

    /**
     * Creates an empty file or directory with the given attributes: all four times now, the directory's
     * mtime and ctime now, the directory's link count up by one for a new directory.
     *
     * @param store the change
     * @param dirIno the parent directory
     * @param name the new name
     * @param type {@link FileType#REGULAR} or {@link FileType#DIRECTORY}
     * @param attributes mode, owner and group asked for
     * @param <I> the adapter's inode record
     * @return the new inode number
     * @throws IOException {@link FileAlreadyExistsException}, {@link NotDirectoryException}, no space
     */
    public static <I extends NamespaceInode> long create(Store<I> store, long dirIno, String name, FileType type,
            NewInodeAttributes attributes) throws IOException {
        if (type != FileType.REGULAR && type != FileType.DIRECTORY) {
            throw new IllegalArgumentException("a " + type + " is created by symlink or mknod");
        }
        return newInode(store, dirIno, name, type, attributes.mode(), attributes, null, 0);
    }

    /**
     * Creates a special file (a FIFO, a device node or a socket) with the given attributes: no data, all
     * four times now, the directory's mtime and ctime now.
     *
     * @param store the change
     * @param dirIno the parent directory
     * @param name the new name
     * @param type a type whose {@link FileType#isSpecial()} holds
     * @param rdev a device node's number; 0 for a FIFO or a socket
     * @param attributes mode, owner and group asked for
     * @param <I> the adapter's inode record
     * @return the new inode number
     * @throws IllegalArgumentException if {@code type} is not special, or {@code rdev} is not 0 for a type
     *     other than a device node
     * @throws IOException {@link FileAlreadyExistsException}, {@link NotDirectoryException}, no space
     */
    public static <I extends NamespaceInode> long mknod(Store<I> store, long dirIno, String name, FileType type,
            long rdev, NewInodeAttributes attributes) throws IOException {
        if (!type.isSpecial()) {
            throw new IllegalArgumentException("a " + type + " is not created by mknod");
        }
        if (rdev != 0 && !type.isDevice()) {
            throw new IllegalArgumentException("a " + type + " has no device number, not " + rdev);
        }
        return newInode(store, dirIno, name, type, attributes.mode(), attributes, null, rdev);
    }

    /**
     * Creates a symbolic link (mode 0777, size the target's length).
     *
     * @param store the change
     * @param dirIno the parent directory
     * @param name the new name
     * @param target the target's bytes, 1 to {@value FileNames#MAX_TARGET_BYTES}
     * @param attributes owner and group (mode ignored)
     * @param <I> the adapter's inode record
     * @return the new inode number
     * @throws IOException {@link FileAlreadyExistsException}, {@link NotDirectoryException}, no space
     */
    public static <I extends NamespaceInode> long symlink(Store<I> store, long dirIno, String name, byte[] target,
            NewInodeAttributes attributes) throws IOException {
        if (target.length < 1 || target.length > FileNames.MAX_TARGET_BYTES) {
            throw new IllegalArgumentException("a symbolic link's target has 1 to " + FileNames.MAX_TARGET_BYTES
                    + " bytes, not " + target.length);
        }
        return newInode(store, dirIno, name, FileType.SYMLINK, 0777, attributes, target.clone(), 0);
    }

    private static <I extends NamespaceInode> long newInode(Store<I> store, long dirIno, String name, FileType type,
            int mode, NewInodeAttributes attributes, byte[] target, long rdev) throws IOException {
        I dir = directory(store, dirIno);
        checkAbsent(store, dir, name);
        int linkCount = type == FileType.DIRECTORY ? 2 : 1;
        NewInode wanted = new NewInode(type, PosixRules.newMode(type, mode, dir.mode()), attributes.uid(),
                PosixRules.newGid(attributes, dir.mode(), dir.gid()), linkCount, dirIno, Instant.now(), target,
                rdev);
        I inode = store.allocate(dir, name, wanted);
        if (type == FileType.DIRECTORY) {
            dir.setLinkCount(dir.linkCount() + 1);
        }
        store.addEntry(dir, name, inode.ino(), type);
        dir.setMtimeAndCtime(wanted.now());
        store.changed(dir);
        return inode.ino();
    }

    /**
     * Adds a name to a file or symbolic link: its link count up, its ctime and the directory's mtime and
     * ctime now.
     *
     * @param store the change
     * @param ino the inode
     * @param dirIno the directory
     * @param name the new name
     * @param <I> the adapter's inode record
     * @throws IOException {@link FileAlreadyExistsException}, a directory or too many links refused
     *     ({@link FileSystemException}), no space
     */
    public static <I extends NamespaceInode> void link(Store<I> store, long ino, long dirIno, String name)
            throws IOException {
        I dir = directory(store, dirIno);
        I inode = store.inode(ino);
        if (inode.type() == FileType.DIRECTORY) {
            throw new FileSystemException("inode " + ino, null, "hard link to a directory");
        }
        if (inode.linkCount() == Integer.MAX_VALUE) {
            throw new FileSystemException("inode " + ino, null, "too many links");
        }
        checkAbsent(store, dir, name);
        store.linking(inode);
        Instant now = Instant.now();
        store.addEntry(dir, name, ino, inode.type());
        dir.setMtimeAndCtime(now);
        store.changed(dir);
        inode.setLinkCount(inode.linkCount() + 1);
        inode.setCtime(now);
        store.changed(inode);
    }

    /**
     * Removes a name of a file or symbolic link: its link count down (at zero {@link Store#orphaned}),
     * its ctime and the directory's mtime and ctime now.
     *
     * @param store the change
     * @param dirIno the directory
     * @param name the name
     * @param <I> the adapter's inode record
     * @throws IOException {@link NoSuchFileException}, a directory refused ({@link FileSystemException})
     */
    public static <I extends NamespaceInode> void unlink(Store<I> store, long dirIno, String name)
            throws IOException {
        I dir = directory(store, dirIno);
        DirEntry entry = existing(store, dir, name);
        if (entry.type() == FileType.DIRECTORY) {
            throw new FileSystemException(name, null, "is a directory: use rmdir");
        }
        I inode = store.inode(entry.ino());
        Instant now = Instant.now();
        store.removeEntry(dir, name);
        dir.setMtimeAndCtime(now);
        store.changed(dir);
        dropName(store, inode, now);
    }

    /**
     * Removes an empty directory and frees it: the parent's link count down, its mtime and ctime now.
     *
     * @param store the change
     * @param dirIno the parent
     * @param name the directory's name
     * @param <I> the adapter's inode record
     * @throws IOException {@link NoSuchFileException}, {@link NotDirectoryException},
     *     {@link DirectoryNotEmptyException}
     */
    public static <I extends NamespaceInode> void rmdir(Store<I> store, long dirIno, String name)
            throws IOException {
        I dir = directory(store, dirIno);
        DirEntry entry = existing(store, dir, name);
        I victim = store.inode(entry.ino());
        if (victim.type() != FileType.DIRECTORY) {
            throw new NotDirectoryException(name);
        }
        if (!store.isEmpty(victim)) {
            throw new DirectoryNotEmptyException(name);
        }
        store.removeEntry(dir, name);
        dir.setLinkCount(dir.linkCount() - 1);
        dir.setMtimeAndCtime(Instant.now());
        store.changed(dir);
        store.freeDirectory(victim);
    }

    /**
     * Moves a name, replacing a file (one name less) or an empty directory (freed) at the target: the
     * moved inode's ctime and both directories' mtime and ctime now; a directory that changes parent gets
     * the new parent, and the parents' link counts follow it.
     *
     * @param store the change
     * @param fromDir the source directory
     * @param fromName the source name
     * @param toDir the target directory
     * @param toName the target name
     * @param <I> the adapter's inode record
     * @return the replaced inode if it lost its last name (the core evicts it once closed), else -1
     * @throws IOException {@link NoSuchFileException}; replacing a directory by a file ({@code EISDIR},
     *     {@link FileSystemException}), a file by a directory ({@link NotDirectoryException}), a non-empty
     *     directory ({@link DirectoryNotEmptyException}); a directory into itself
     */
    public static <I extends NamespaceInode> long rename(Store<I> store, long fromDir, String fromName, long toDir,
            String toName) throws IOException {
        return move(store, fromDir, fromName, toDir, toName, null);
    }

    /**
     * {@link #rename}, leaving a whiteout at the old name in the same change ({@code RENAME_WHITEOUT}): a
     * character device 0:0, mode 0, owned as {@code whiteout} says (the source directory's set-group-ID
     * bit gives it the directory's group), all four times now. The whiteout is allocated after every
     * check and before the first change, so that running out of space changes nothing; the old name's
     * entry is pointed at it where it is. Two names of one inode, or a name onto itself, change nothing
     * and leave no whiteout.
     *
     * @param store the change
     * @param fromDir the source directory
     * @param fromName the source name
     * @param toDir the target directory
     * @param toName the target name
     * @param whiteout the whiteout's owner and group (mode ignored)
     * @param <I> the adapter's inode record
     * @return the replaced inode if it lost its last name, else -1
     * @throws IOException as {@link #rename}, or no space for the whiteout
     */
    public static <I extends NamespaceInode> long renameWhiteout(Store<I> store, long fromDir, String fromName,
            long toDir, String toName, NewInodeAttributes whiteout) throws IOException {
        return move(store, fromDir, fromName, toDir, toName, java.util.Objects.requireNonNull(whiteout, "whiteout"));
    }

    private static <I extends NamespaceInode> long move(Store<I> store, long fromDir, String fromName, long toDir,
            String toName, NewInodeAttributes whiteout) throws IOException {
        I from = directory(store, fromDir);
        DirEntry moving = existing(store, from, fromName);
        I to = directory(store, toDir);
        FileNames.check(toName);
        if (fromDir == toDir && fromName.equals(toName)) {
            return -1;
        }
        I moved = store.inode(moving.ino());
        refuseMoveIntoItself(store, moved, toDir, toName);
        Optional<DirEntry> replacedEntry = store.find(to, toName);
        if (replacedEntry.isPresent() && replacedEntry.get().ino() == moving.ino()) {
            return -1;
        }
        I replaced = replacedEntry.isPresent() ? store.inode(replacedEntry.get().ino()) : null;
        if (replaced != null) {
            checkReplaceable(store, replaced, moving.type(), toName);
        }
        Instant now = Instant.now();
        I left = null;
        if (whiteout != null) {
            NewInode spec = new NewInode(FileType.CHARACTER_DEVICE,
                    PosixRules.newMode(FileType.CHARACTER_DEVICE, 0, from.mode()), whiteout.uid(),
                    PosixRules.newGid(whiteout, from.mode(), from.gid()), 1, fromDir, now, null, 0);
            // The one allocation before the first change: a new target name's room is made with the
            // whiteout (addEntry below fills it), a replaced target's entry and the source's are reused.
            left = replaced == null ? store.allocate(to, toName, spec)
                    : store.allocateForExistingEntry(from, fromName, spec);
        }
        long lostLastName = -1;
        if (replaced != null) {
            store.replaceEntry(to, toName, moving.ino(), moving.type());
            if (replaced.type() == FileType.DIRECTORY) {
                to.setLinkCount(to.linkCount() - 1);
            } else {
                dropName(store, replaced, now);
                lostLastName = replaced.linkCount() == 0 ? replaced.ino() : -1;
            }
        } else {
            store.addEntry(to, toName, moving.ino(), moving.type());
        }
        if (left == null) {
            store.removeEntry(from, fromName);
        } else {
            store.replaceEntry(from, fromName, left.ino(), FileType.CHARACTER_DEVICE);
        }
        moved.setCtime(now);
        if (moved.type() == FileType.DIRECTORY && fromDir != toDir) {
            moved.setParent(toDir);
            from.setLinkCount(from.linkCount() - 1);
            to.setLinkCount(to.linkCount() + 1);
        }
        store.changed(moved);
        from.setMtimeAndCtime(now);
        to.setMtimeAndCtime(now);
        store.changed(from);
        store.changed(to);
        if (replaced != null && replaced.type() == FileType.DIRECTORY) {
            store.freeDirectory(replaced);
        }
        return lostLastName;
    }

    private static <I extends NamespaceInode> void checkReplaceable(Store<I> store, I replaced, FileType moving,
            String toName) throws IOException {
        if (replaced.type() == FileType.DIRECTORY && moving != FileType.DIRECTORY) {
            throw new FileSystemException(toName, null, "is a directory");
        }
        if (replaced.type() != FileType.DIRECTORY && moving == FileType.DIRECTORY) {
            throw new NotDirectoryException(toName);
        }
        if (replaced.type() == FileType.DIRECTORY && !store.isEmpty(replaced)) {
            throw new DirectoryNotEmptyException(toName);
        }
    }

    /**
     * Swaps two names ({@code RENAME_EXCHANGE}): each entry then names the other's inode, with its type;
     * both inodes' ctime and both directories' mtime and ctime now; a directory that changes parent gets
     * the new parent and the parents' link counts follow their subdirectories.
     *
     * @param store the change
     * @param dir1 the first name's directory
     * @param name1 the first name
     * @param dir2 the second name's directory
     * @param name2 the second name
     * @param <I> the adapter's inode record
     * @throws IOException {@link NoSuchFileException} if either name is absent; a directory into itself
     */
    public static <I extends NamespaceInode> void exchange(Store<I> store, long dir1, String name1, long dir2,
            String name2) throws IOException {
        I d1 = directory(store, dir1);
        I d2 = directory(store, dir2);
        DirEntry first = existing(store, d1, name1);
        DirEntry second = existing(store, d2, name2);
        if (dir1 == dir2 && name1.equals(name2)) {
            return;
        }
        I inode1 = store.inode(first.ino());
        I inode2 = store.inode(second.ino());
        refuseMoveIntoItself(store, inode1, dir2, name2);
        refuseMoveIntoItself(store, inode2, dir1, name1);
        store.replaceEntry(d1, name1, second.ino(), second.type());
        store.replaceEntry(d2, name2, first.ino(), first.type());
        Instant now = Instant.now();
        if (dir1 != dir2) {
            moveDirectory(inode1, d1, d2);
            moveDirectory(inode2, d2, d1);
        }
        inode1.setCtime(now);
        inode2.setCtime(now);
        store.changed(inode1);
        store.changed(inode2);
        d1.setMtimeAndCtime(now);
        d2.setMtimeAndCtime(now);
        store.changed(d1);
        store.changed(d2);
    }

    private static <I extends NamespaceInode> void moveDirectory(I inode, I from, I to) {
        if (inode.type() != FileType.DIRECTORY) {
            return;
        }
        inode.setParent(to.ino());
        from.setLinkCount(from.linkCount() - 1);
        to.setLinkCount(to.linkCount() + 1);
    }

    /** One name less; at zero a file or link is {@link Store#orphaned}, a directory has none left. */
    private static <I extends NamespaceInode> void dropName(Store<I> store, I inode, Instant now) {
        inode.setLinkCount(inode.type() == FileType.DIRECTORY ? 0 : inode.linkCount() - 1);
        inode.setCtime(now);
        store.changed(inode);
        if (inode.linkCount() == 0 && inode.type() != FileType.DIRECTORY) {
            store.orphaned(inode);
        }
    }

    /** Refuses to give {@code moved} a name in {@code dirIno} if that directory is inside it. */
    private static <I extends NamespaceInode> void refuseMoveIntoItself(Store<I> store, I moved, long dirIno,
            String name) throws IOException {
        if (moved.type() != FileType.DIRECTORY) {
            return;
        }
        Set<Long> seen = new HashSet<>();
        for (long at = dirIno; at >= 0 && seen.add(at); at = store.parentOf(store.inode(at))) {
            if (at == moved.ino()) {
                throw new FileSystemException(name, null, "cannot move a directory into itself");
            }
        }
    }

    private static <I extends NamespaceInode> void checkAbsent(Store<I> store, I dir, String name)
            throws IOException {
        FileNames.check(name);
        if (store.find(dir, name).isPresent()) {
            throw new FileAlreadyExistsException(name, null, "exists in directory inode " + dir.ino());
        }
    }

    private static <I extends NamespaceInode> DirEntry existing(Store<I> store, I dir, String name)
            throws IOException {
        return store.find(dir, name).orElseThrow(
                () -> new NoSuchFileException(name, null, "no such name in directory inode " + dir.ino()));
    }
}
