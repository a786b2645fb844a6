package dev.iomap.api;

import java.util.EnumSet;
import java.util.Set;

/**
 * A per-inode flag, as Linux's inode flags ({@code FS_IOC_GETFLAGS}/{@code FS_IOC_SETFLAGS}, shown by
 * {@code lsattr} and set by {@code chattr}; most also as an {@code FS_XFLAG_*} bit of
 * {@code FS_IOC_FSGETXATTR}/{@code FS_IOC_FSSETXATTR}, set by {@code xfs_io -c chattr}). An adapter
 * supports the flags its capabilities name ({@link Capability#INODE_FLAGS},
 * {@link Capability#JOURNALED_DATA}) and refuses the others with {@link NotSupportedException}.
 *
 * <p>The file system enforces what Linux's VFS enforces for {@link #IMMUTABLE} and {@link #APPEND}
 * ({@code IS_IMMUTABLE}, {@code IS_APPEND}); that only a caller with {@code CAP_LINUX_IMMUTABLE} may
 * change those two is the caller's to check (the kernel does, before a FUSE file system sees the set).
 */
public enum FileFlag {
    /**
     * {@code FS_SYNC_FL} ({@code chattr +S}): every write to the file is synchronous, as if it were
     * opened with {@link OpenFlag#DSYNC}. Inherited by new files and directories.
     */
    SYNC(0x0000_0008, 0x0000_0020, true),
    /**
     * {@code FS_IMMUTABLE_FL} ({@code chattr +i}): the file cannot be written, truncated, renamed,
     * unlinked or linked to, its attributes and extended attributes cannot change, and a directory's
     * entries cannot change; only its flags can (EPERM, {@link OperationNotPermittedException}).
     */
    IMMUTABLE(0x0000_0010, 0x0000_0008, false),
    /**
     * {@code FS_APPEND_FL} ({@code chattr +a}): the file is opened for writing only with
     * {@link OpenFlag#APPEND}; it cannot be truncated, renamed, unlinked or linked to, and its mode,
     * owner, explicit times and extended attributes cannot change; a directory's entries can be added,
     * not removed (EPERM).
     */
    APPEND(0x0000_0020, 0x0000_0010, false),
    /** {@code FS_NODUMP_FL} ({@code chattr +d}): backup programs skip the file. Inherited. */
    NO_DUMP(0x0000_0040, 0x0000_0080, true),
    /** {@code FS_NOATIME_FL} ({@code chattr +A}): reads never update the access time. Inherited. */
    NO_ATIME(0x0000_0080, 0x0000_0040, true),
    /**
     * {@code FS_JOURNAL_DATA_FL} ({@code chattr +j}): on a regular file, its data goes through the
     * filesystem's journal before it reaches its home blocks, so a power cut after a successful fsync
     * never shows a mix of old and new blocks of that file's journaled writes (GFS2's
     * {@code GFS2_DIF_JDATA}); on a directory, files and directories created in it inherit the flag
     * (GFS2's {@code GFS2_DIF_INHERIT_JDATA}). Supported by adapters with
     * {@link Capability#JOURNALED_DATA}.
     */
    JOURNAL_DATA(0x0000_4000, 0, false),
    /**
     * {@code FS_DAX_FL} / {@code FS_XFLAG_DAX} ({@code xfs_io -c 'chattr +x'}): the file asks for direct
     * access to persistent memory. Kept and inherited as Linux keeps it, on regular files and directories
     * only; it changes no I/O here (no device of this framework is memory).
     */
    DAX(0x0200_0000, 0x0000_8000, true);

    private final int linuxBit;
    private final int xflag;
    private final boolean inherited;

    FileFlag(int linuxBit, int xflag, boolean inherited) {
        this.linuxBit = linuxBit;
        this.xflag = xflag;
        this.inherited = inherited;
    }

    /** @return the flag's bit in Linux's {@code FS_IOC_GETFLAGS} word */
    public int linuxBit() {
        return linuxBit;
    }

    /** @return the flag's {@code FS_XFLAG_*} bit in a {@code struct fsxattr}, or 0 if it has none */
    public int xflag() {
        return xflag;
    }

    /**
     * @return whether a regular file or directory created in a directory with this flag gets it too (the
     *     flags Linux's ext4 and XFS pass on; {@link #JOURNAL_DATA}'s inheritance is the adapter's)
     */
    public boolean isInherited() {
        return inherited;
    }

    /**
     * @param directory the flags of the directory a new inode is created in
     * @param type the new inode's type
     * @return the flags the new inode starts with: the {@link #isInherited} ones, for a regular file or a
     *     directory; none for any other type
     */
    public static Set<FileFlag> inheritedFrom(Set<FileFlag> directory, FileType type) {
        Set<FileFlag> flags = EnumSet.noneOf(FileFlag.class);
        if (type == FileType.REGULAR || type == FileType.DIRECTORY) {
            for (FileFlag flag : directory) {
                if (flag.inherited) {
                    flags.add(flag);
                }
            }
        }
        return flags;
    }

    /**
     * @param flags a set of flags
     * @return their {@link #linuxBit()}s
     */
    public static int linuxBits(Set<FileFlag> flags) {
        int bits = 0;
        for (FileFlag flag : flags) {
            bits |= flag.linuxBit;
        }
        return bits;
    }

    /**
     * @param bits a word of {@link #linuxBit()}s
     * @return the flags it names; bits that name no flag are ignored (the adapter's on-disk word may keep
     *     its own bits beside them)
     */
    public static Set<FileFlag> fromLinuxBits(int bits) {
        Set<FileFlag> flags = EnumSet.noneOf(FileFlag.class);
        for (FileFlag flag : values()) {
            if ((bits & flag.linuxBit) != 0) {
                flags.add(flag);
            }
        }
        return flags;
    }
}
