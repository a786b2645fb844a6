package dev.iomap.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A device that passes every call to another; a wrapper (the test devices, a cluster node's fenced
 * device) overrides only what it changes, as {@link java.io.FilterInputStream} does for streams.
 *
 * <p>As thread-safe as the delegate, and as the overrides make it. Each method does what the
 * delegate does, so a bad range gets the delegate's {@link DeviceRangeException},
 * and {@link #close()} closes the delegate, after which the delegate fails every I/O with
 * {@link IOException}.
 */
public abstract class ForwardingBlockDevice implements BlockDevice {
    /** The device calls go to. */
    protected final BlockDevice delegate;

    /**
     * @param delegate the device calls go to, which this device owns (closes)
     * @throws NullPointerException if {@code delegate} is null
     */
    protected ForwardingBlockDevice(BlockDevice delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** @return the delegate's block size */
    @Override
    public int blockSize() {
        return delegate.blockSize();
    }

    /** @return the delegate's capacity */
    @Override
    public long capacity() {
        return delegate.capacity();
    }

    /** @return whether the delegate is read-only */
    @Override
    public boolean readOnly() {
        return delegate.readOnly();
    }

    /** Reads from the delegate; throws what it throws. */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        delegate.read(offset, dst);
    }

    /** @return the delegate's write */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        return delegate.write(offset, srcs, purpose);
    }

    /** Flushes the delegate; throws what it throws. */
    @Override
    public void flush() throws IOException {
        delegate.flush();
    }

    /** Discards on the delegate; throws what it throws. */
    @Override
    public void discard(long offset, long length) throws IOException {
        delegate.discard(offset, length);
    }

    /** @return the delegate's counts */
    @Override
    public DeviceStats stats() {
        return delegate.stats();
    }

    /** Closes the delegate; throws what it throws. */
    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
