package dev.iomap.api;

import java.util.EnumSet;
import java.util.Set;

/**
 * What an adapter can do beyond reading and writing files, declared once in
 * {@link dev.iomap.spi.FileSystemAdapter#capabilities()}. An operation whose capability is absent fails with
 * {@link NotSupportedException}.
 */
public enum Capability {
    /** Directories other than the root (mkdir, rmdir, nested paths). Implies {@link #RENAME}. */
    DIRECTORIES,
    /**
     * {@link IomapFileSystem#rename}, also with {@link RenameFlag#NOREPLACE}: a name moves (replacing
     * a file at the target) in one atomic metadata change. A flat namespace can declare it without
     * {@link #DIRECTORIES}.
     */
    RENAME,
    /** {@link FallocateMode#ALLOCATE}. */
    FALLOCATE,
    /**
     * {@link FallocateMode#ALLOCATE} reserves blocks as unwritten extents (XFS, ext4): they read as
     * zeros and seek data skips them until they are written. Without it, an adapter with
     * {@link #FALLOCATE} allocates and zeroes the blocks (GFS2, which has no unwritten state), so the
     * preallocated range is data.
     */
    UNWRITTEN_EXTENTS,
    /** {@link FallocateMode#PUNCH_HOLE}. */
    PUNCH_HOLE,
    /** {@link FallocateMode#ZERO_RANGE}. */
    ZERO_RANGE,
    /** Writes to shared blocks go elsewhere (a copy-on-write fork); unshare works. */
    COPY_ON_WRITE,
    /** {@code cloneRange} shares blocks between files (reflink). Implies {@link #COPY_ON_WRITE}. */
    CLONE,
    /** Truncate to any size. */
    TRUNCATE,
    /** Writes at any offset, not only at EOF. */
    RANDOM_WRITE,
    /** Data and metadata survive a power cut once fsync returned. */
    DURABLE_FSYNC,
    /**
     * {@link RenameFlag#EXCHANGE}: two names swapped in one atomic metadata change, so a power cut
     * leaves either both old names or both new ones. Implies {@link #RENAME}.
     */
    RENAME_EXCHANGE,
    /** Symbolic links: created, read back, followed by path resolution. */
    SYMLINKS,
    /** Hard links: several names of one regular file, counted; the inode lives until the last goes. */
    HARD_LINKS,
    /**
     * Special files ({@code mknod}, {@code mkfifo}, a socket's {@code bind}): FIFOs, character and block
     * device nodes (with their device number) and sockets, kept with their attributes and names like any
     * inode, holding no data ({@link IomapFileSystem#createSpecialFile}).
     */
    SPECIAL_FILES,
    /**
     * Mode bits, owner and group, and access, modification, change and birth times with nanoseconds,
     * kept on the device and changed by {@link IomapFileSystem#setAttributes}.
     */
    POSIX_ATTRIBUTES,
    /** Extended attributes in the {@code user.}, {@code trusted.} and {@code security.} namespaces. */
    XATTRS,
    /**
     * {@link FileFlag#JOURNAL_DATA}: per-file journaled data, set and read with
     * {@link IomapFileSystem#setFileFlags} and {@link IomapFileSystem#getFileFlags}, inherited from a
     * directory carrying the flag.
     */
    JOURNALED_DATA,
    /**
     * The inode flags {@link FileFlag#SYNC}, {@link FileFlag#IMMUTABLE}, {@link FileFlag#APPEND},
     * {@link FileFlag#NO_DUMP}, {@link FileFlag#NO_ATIME} and {@link FileFlag#DAX}: kept on the device
     * (durable with the inode's next commit, as any attribute change), set and read with
     * {@link IomapFileSystem#setFileFlags} and {@link IomapFileSystem#getFileFlags}, the inherited ones
     * passed to new files and directories, and IMMUTABLE, APPEND, SYNC and NO_ATIME enforced as Linux
     * enforces them.
     */
    INODE_FLAGS,
    /**
     * Every data extent carries a checksum that a read verifies before any of its bytes is returned (a
     * mismatch is an I/O error, never wrong bytes), and {@code fsck} can scrub: read and verify every
     * extent ({@link FsckOptions#scrub()}).
     */
    DATA_CHECKSUMS,
    /**
     * Direct I/O: a file opened with {@link OpenFlag#DIRECT} reads and writes block-aligned ranges
     * straight between the caller's buffer and the device (the kernel's {@code iomap_dio_rw}). The
     * adapter answers {@link dev.iomap.spi.IomapOps#begin} with
     * {@link dev.iomap.spi.IomapRequest#DIRECT} (see there: real blocks, never delayed allocation) and
     * completes direct writes in {@link dev.iomap.spi.WritebackOps#ioendCompleted} as it completes
     * writeback. Without it, a direct open fails with {@link NotSupportedException}.
     */
    DIRECT_IO,
    /**
     * Files without holes: every block below EOF is allocated and holds data, zeroes where nothing else
     * was written, as in a format whose allocation map is each file's chain of blocks (FAT). A write past
     * EOF and a truncate up allocate and zero the gap; seek hole finds only EOF, seek data finds every
     * offset below it, and the extent report covers the whole file with written extents. Not declared
     * together with {@link #UNWRITTEN_EXTENTS} (whose blocks are holes to seek) or {@link #PUNCH_HOLE}.
     *
     * <p>Unlike the other capabilities this one names no operation: nothing is refused without it, and
     * declaring it tells tools and the test kit not to expect holes (the kit then checks that there are
     * none).
     */
    DENSE_FILES,
    /**
     * Atomic writes ({@link IomapFile#writeAtomic}, Linux's {@code RWF_ATOMIC}): a direct write of a
     * power-of-two length within the mount's {@link dev.iomap.spi.MountedFileSystem#atomicWriteLimits},
     * at an offset aligned to it, that a power cut leaves all old or all new. The adapter opts in by
     * declaring it (with {@link #DIRECT_IO}) and keeps the promise: for a direct write whose request
     * holds {@link dev.iomap.spi.IomapRequest#ATOMIC} it maps blocks out of place (copy on write, or
     * new blocks of a log-structured format) and makes every mapping change of the write, and the size,
     * durable together in {@link dev.iomap.spi.WritebackOps#atomicWriteCompleted} (one journal
     * transaction). Without it, an atomic write fails with {@link NotSupportedException} (the kernel's
     * EOPNOTSUPP for a file without {@code FMODE_CAN_ATOMIC_WRITE}) and files report
     * {@link AtomicWriteLimits#NONE}.
     */
    ATOMIC_WRITES;

    /**
     * Adds what the declared capabilities imply.
     *
     * @param declared what an adapter declares
     * @return a new set with the implied capabilities added
     */
    public static Set<Capability> withImplied(Set<Capability> declared) {
        EnumSet<Capability> all = declared.isEmpty() ? EnumSet.noneOf(Capability.class) : EnumSet.copyOf(declared);
        if (all.contains(CLONE)) {
            all.add(COPY_ON_WRITE);
        }
        if (all.contains(DIRECTORIES) || all.contains(RENAME_EXCHANGE)) {
            all.add(RENAME);
        }
        return all;
    }
}
