package dev.iomap.spi;

import java.io.IOException;

/**
 * Releases an adapter's delayed-allocation reservation over a file range: the kernel's
 * {@code iomap_punch_t}. Called by {@link IomapInode#releaseDelalloc} only for ranges whose cache is
 * clean, so no dirty data loses its reservation.
 */
@FunctionalInterface
public interface DelallocPunch {

    /**
     * Releases the reservation over one clean range (a call of the kernel's {@code iomap_punch_t}).
     *
     * @param inode the file
     * @param offset first byte of the range, block aligned
     * @param length bytes, block aligned, at least one block
     * @throws IOException if the adapter cannot release it
     */
    void punch(IomapInode inode, long offset, long length) throws IOException;
}
