package dev.iomap.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A byte-addressed block device: a range of {@link #capacity()} bytes written in units of
 * {@link #blockSize()}.
 *
 * <p>Contract for every implementation:
 * <ul>
 *   <li>Thread-safe: any number of reads and writes may be in flight at once.</li>
 *   <li>{@code offset} and the length of every read and write are multiples of {@link #blockSize()}
 *       and lie inside {@code [0, capacity())}; anything else fails with {@link DeviceRangeException}
 *       (synchronously for reads, as the future's exception for writes).</li>
 *   <li>A write completes asynchronously, possibly on a thread of the device's own: callbacks on the
 *       future must not block. The device reads the buffers from any thread (so they must not be
 *       confined to one) and leaves their positions unchanged; the caller must not change them until
 *       the future completes. Once it completes normally a read sees the data; it survives a power
 *       cut only after a later {@link #flush()} returns. Concurrent writes to overlapping ranges are
 *       not ordered.</li>
 *   <li>I/O errors are {@link DeviceIoException}s naming the range.</li>
 *   <li>A device that is {@link #readOnly()} refuses writes and discards with
 *       {@link ReadOnlyDeviceException} (a write: as the future's exception).</li>
 *   <li>Every device counts what it does ({@link #stats()}).</li>
 *   <li>After {@link #close()} every I/O operation fails with {@link IOException}; {@link #blockSize()},
 *       {@link #capacity()} and {@link #stats()} keep answering.</li>
 * </ul>
 */
public interface BlockDevice extends AutoCloseable {

    /** @return the logical block size in bytes: a power of two, at least 512 */
    int blockSize();

    /** @return the size in bytes, a multiple of {@link #blockSize()} */
    long capacity();

    /**
     * This device's zone interface, for a filesystem that needs one (zonefs-like): a device asked
     * what it is, instead of an adapter testing its class. A wrapper that passes zone commands on
     * returns itself here only if it is a {@link ZonedBlockDevice} too.
     *
     * @return the device as a zoned device, or empty for a conventional device (the default)
     */
    default Optional<ZonedBlockDevice> zoned() {
        return Optional.empty();
    }

    /**
     * Whether the device refuses every write, discard and zone operation with
     * {@link ReadOnlyDeviceException} (the kernel's {@code bdev_read_only}): a file device opened
     * read-only, or a wrapper over one. Reads and flushes work as on any device. A layer that writes
     * on its own account (a zoned emulation persisting its zone state, a filesystem replaying its
     * journal) asks this first instead of failing half way.
     *
     * @return true if the device was opened read-only; false by default
     */
    default boolean readOnly() {
        return false;
    }

    /**
     * Reads {@code dst.remaining()} bytes at {@code offset} into {@code dst}, advancing its position.
     *
     * @param offset device byte offset, block aligned
     * @param dst where the bytes go; its remaining length is block aligned
     * @throws IOException on an I/O error or a range outside the device
     */
    void read(long offset, ByteBuffer dst) throws IOException;

    /**
     * Writes the remaining bytes of {@code srcs}, one after the other, starting at {@code offset}.
     *
     * @param offset device byte offset, block aligned
     * @param srcs the data; their total remaining length is block aligned
     * @param purpose data or metadata, for the statistics
     * @return a future completing when the data is on the device (not yet durable), or exceptionally
     *     with an {@link IOException}
     */
    CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose);

    /**
     * Writes one buffer; see {@link #write(long, List, IoPurpose)}.
     *
     * @param offset device byte offset, block aligned
     * @param src the data
     * @param purpose data or metadata
     * @return the completion
     */
    default CompletableFuture<Void> write(long offset, ByteBuffer src, IoPurpose purpose) {
        return write(offset, List.of(src), purpose);
    }

    /**
     * Makes every write that completed before this call durable.
     *
     * @throws IOException if the device cannot
     */
    void flush() throws IOException;

    /**
     * Tells the device the range's contents are no longer needed; reads of it may return anything
     * (the RAM and file devices return zeroes).
     *
     * @param offset device byte offset, block aligned
     * @param length bytes, block aligned
     * @throws IOException on an I/O error or a range outside the device
     */
    void discard(long offset, long length) throws IOException;

    /** @return what this device has done so far */
    DeviceStats stats();

    /**
     * Releases the device. Idempotent.
     *
     * @throws IOException if flushing or closing the backing store fails
     */
    @Override
    void close() throws IOException;
}
