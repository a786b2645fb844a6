package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletionException;

/**
 * Full preallocation of an image file, as {@code qemu-img}'s {@code preallocation=full}: zeroes written
 * over all of it, so that the host filesystem holds every block allocated and written. A write through
 * the device is then an overwrite on the host: with {@code O_DIRECT}, ext4 takes its inode lock shared
 * and converts no unwritten extents, where a sparse image makes every first write an allocation under
 * the lock held exclusively (the seqwrite-128k job ran about 1.6x faster on a preallocated image; see
 * {@code docs/design-notes.md}). The cost is the image's whole size on the host's disk.
 */
public final class Preallocation {
    /** Bytes of zeroes per write: 8 MiB. */
    static final int CHUNK = 8 << 20;

    private Preallocation() {
    }

    /**
     * {@link #writeZeroes} if asked to, closing the device if that fails.
     *
     * @param <D> the device's type
     * @param device a newly opened device, owned by the caller unless this throws
     * @param capacity bytes to zero, as for {@link #writeZeroes}
     * @param preallocate whether to zero them; false returns the device as it is
     * @return {@code device}
     * @throws IOException if a write or the flush fails (the device is closed then)
     */
    public static <D extends BlockDevice> D zeroedIf(boolean preallocate, D device, long capacity) throws IOException {
        if (preallocate) {
            try {
                writeZeroes(device, capacity);
            } catch (IOException | RuntimeException e) {
                device.close();
                throw e;
            }
        }
        return device;
    }

    /**
     * Writes zeroes over {@code [0, capacity)} of the device, in chunks, and flushes them. Whatever the
     * device held there is gone.
     *
     * @param device an open device, not yet formatted (or to be formatted again)
     * @param capacity bytes, a multiple of the device's block size, at most its capacity
     * @throws IOException if a write or the flush fails
     */
    public static void writeZeroes(BlockDevice device, long capacity) throws IOException {
        ByteBuffer zeroes = ByteBuffer.allocateDirect(CHUNK + 4096).alignedSlice(4096).limit(CHUNK);
        for (long offset = 0; offset < capacity; offset += CHUNK) {
            int length = (int) Math.min(CHUNK, capacity - offset);
            try {
                device.write(offset, zeroes.duplicate().limit(length), IoPurpose.DATA).join();
            } catch (CompletionException e) {
                throw e.getCause() instanceof IOException io ? io
                        : new IOException("preallocating bytes " + offset + "-" + (offset + length) + " failed",
                                e.getCause());
            }
        }
        device.flush();
    }
}
