package dev.iomap.api;

/**
 * A per-inode flag, as Linux's inode flags ({@code FS_IOC_GETFLAGS}/{@code FS_IOC_SETFLAGS}, shown by
 * {@code lsattr} and set by {@code chattr}). An adapter supports the flags its capabilities name and
 * refuses the others with {@link NotSupportedException}.
 */
public enum FileFlag {
    /**
     * {@code FS_JOURNAL_DATA_FL} ({@code chattr +j}): on a regular file, its data goes through the
     * filesystem's journal before it reaches its home blocks, so a power cut after a successful fsync
     * never shows a mix of old and new blocks of that file's journaled writes (GFS2's
     * {@code GFS2_DIF_JDATA}); on a directory, files and directories created in it inherit the flag
     * (GFS2's {@code GFS2_DIF_INHERIT_JDATA}). Supported by adapters with
     * {@link Capability#JOURNALED_DATA}.
     */
    JOURNAL_DATA(0x0000_4000);

    private final int linuxBit;

    FileFlag(int linuxBit) {
        this.linuxBit = linuxBit;
    }

    /** @return the flag's bit in Linux's {@code FS_IOC_GETFLAGS} word */
    public int linuxBit() {
        return linuxBit;
    }
}
