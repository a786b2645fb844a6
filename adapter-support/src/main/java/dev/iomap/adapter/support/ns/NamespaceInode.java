package dev.iomap.adapter.support.ns;

import dev.iomap.api.FileType;
import java.time.Instant;

/**
 * What {@link PosixNamespace} reads and changes of an adapter's in-memory inode record: its number,
 * type, owner bits, link count, parent and times. The adapter's record implements it over its own
 * fields; a change made through it reaches the device only once the adapter's store records the inode
 * ({@link PosixNamespace.Store#changed}). Not thread-safe: used under the adapter's metadata lock.
 */
public interface NamespaceInode {

    /** @return the inode number */
    long ino();

    /** @return what the inode is */
    FileType type();

    /** @return the mode (permission bits and set-ID bits) */
    int mode();

    /** @return the owning group */
    int gid();

    /** @return the number of names (a directory: 2 plus one per subdirectory) */
    int linkCount();

    /** @param count the new number of names, at least 0 */
    void setLinkCount(int count);

    /** @param dirIno the directory a directory now has its name in */
    void setParent(long dirIno);

    /** @param now the inode's new ctime */
    void setCtime(Instant now);

    /** @param now the inode's new mtime and ctime (a directory whose entries changed) */
    void setMtimeAndCtime(Instant now);
}
