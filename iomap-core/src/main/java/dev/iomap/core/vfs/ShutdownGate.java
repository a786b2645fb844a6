package dev.iomap.core.vfs;

import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A mount's device as its adapter and its cache see it, and the mount's forced shutdown (XFS's
 * {@code xfs_force_shutdown}, after which every buffer submitted fails with EIO): until
 * {@link #shutDown} it passes everything through; afterwards every write, flush and discard fails with
 * the shutdown's {@link FileSystemShutdownException} and reaches nothing, so the image stays as it was
 * at that instant, as after a crash, and the adapter's journal replay (or fsck) at the next mount
 * recovers it. Reads still pass. A zoned device's zone operations ({@link #zoned()}) are not gated.
 *
 * <p>Thread-safe; the first shutdown wins and later ones return its exception.
 */
final class ShutdownGate implements BlockDevice {
    private final BlockDevice device;
    private volatile FileSystemShutdownException shutdown;

    /** @param device the device the mount was given */
    ShutdownGate(BlockDevice device) {
        this.device = device;
    }

    /**
     * Shuts the mount down (the first call only).
     *
     * @param reason the one-line reason
     * @param cause what caused it
     * @return the shutdown's exception: the one of the first call
     */
    synchronized FileSystemShutdownException shutDown(String reason, Throwable cause) {
        if (shutdown == null) {
            FileSystemShutdownException e = new FileSystemShutdownException(reason);
            e.initCause(cause);
            shutdown = e;
        }
        return shutdown;
    }

    /**
     * Flushes the device below the gate, whether or not the mount is shut down: a shutdown on request
     * makes durable what reached the device before it ({@link CoreFileSystem#shutDown()}).
     *
     * @throws IOException as the device's flush
     */
    void flushBelow() throws IOException {
        device.flush();
    }

    /** @return whether the mount was shut down */
    boolean isShutDown() {
        return shutdown != null;
    }

    /**
     * @throws FileSystemShutdownException a new one with the shutdown's message, if the mount was shut
     *     down (without its cause: the first one, which {@link #shutDown} returned, carries that)
     */
    void check() throws FileSystemShutdownException {
        FileSystemShutdownException first = shutdown;
        if (first != null) {
            throw new FileSystemShutdownException(first.getMessage());
        }
    }

    @Override
    public int blockSize() {
        return device.blockSize();
    }

    @Override
    public long capacity() {
        return device.capacity();
    }

    @Override
    public Optional<ZonedBlockDevice> zoned() {
        return device.zoned();
    }

    @Override
    public boolean readOnly() {
        return device.readOnly();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        device.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            check();
        } catch (FileSystemShutdownException e) {
            return CompletableFuture.failedFuture(e);
        }
        return device.write(offset, srcs, purpose);
    }

    @Override
    public void flush() throws IOException {
        check();
        device.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        check();
        device.discard(offset, length);
    }

    @Override
    public DeviceStats stats() {
        return device.stats();
    }

    /** Closes the device below. */
    @Override
    public void close() throws IOException {
        device.close();
    }
}
