package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A device that passes every call to another; test wrappers override only what they change. */
public abstract class ForwardingBlockDevice implements BlockDevice {
    /** The device calls go to. */
    protected final BlockDevice delegate;

    /** @param delegate the device calls go to */
    protected ForwardingBlockDevice(BlockDevice delegate) {
        this.delegate = delegate;
    }

    @Override
    public int blockSize() {
        return delegate.blockSize();
    }

    @Override
    public long capacity() {
        return delegate.capacity();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        delegate.read(offset, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        return delegate.write(offset, srcs, purpose);
    }

    @Override
    public void flush() throws IOException {
        delegate.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        delegate.discard(offset, length);
    }

    @Override
    public DeviceStats stats() {
        return delegate.stats();
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
