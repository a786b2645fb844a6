package dev.iomap.api;

import java.io.IOException;

/**
 * Implemented by a {@link MountedFilesystem} whose files accept only some sizes (a zone file: 0 or the
 * zone capacity). The core calls {@link #checkSetSize} for a truncate under the inode lock, before it
 * touches the page cache, so a refused truncate changes nothing; {@link MountedFilesystem#setSize}
 * comes later and does the work. Without this hook a refusal from {@code setSize} would come after
 * the cache past the new size was already dropped.
 */
public interface SetSizeCheck {

    /**
     * @param inode the file, at its current size
     * @param newSize the size asked for, at least 0
     * @throws IOException to refuse ({@link NotSupportedException} for a size the file cannot take)
     */
    void checkSetSize(IomapInode inode, long newSize) throws IOException;
}
