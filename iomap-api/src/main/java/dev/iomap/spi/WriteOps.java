package dev.iomap.spi;

import java.io.IOException;

/**
 * Optional per-folio hooks of the buffered write path: the kernel's {@code iomap_write_ops}
 * ({@code get_folio}, {@code put_folio}). A journaling adapter adds the written blocks to its
 * transaction in {@link #putFolio}; an adapter with per-folio space reservations takes them in
 * {@link #getFolio}. Both default to doing nothing.
 */
public interface WriteOps {

    /** Hooks that do nothing. */
    WriteOps NONE = new WriteOps() { };

    /**
     * Called before the core locks the folio that will receive {@code length} bytes at {@code pos}
     * (where the kernel calls {@code get_folio}; this hook cannot supply the folio).
     *
     * @param inode the file
     * @param pos file offset of the write into this folio
     * @param length bytes the core will try to copy
     * @param iomap the mapping the write goes through
     * @throws IOException to fail the write at this folio (nothing was copied)
     */
    default void getFolio(IomapInode inode, long pos, int length, Iomap iomap) throws IOException {
    }

    /**
     * Called after the copy, with the folio still locked (the kernel's {@code put_folio}; the core
     * unlocks the folio afterwards).
     *
     * @param inode the file
     * @param pos file offset of the write into this folio
     * @param copied bytes that were copied and marked dirty (0 after a failed short copy)
     * @param iomap the mapping the write went through
     */
    default void putFolio(IomapInode inode, long pos, int copied, Iomap iomap) {
    }
}
