package dev.iomap.core;

import dev.iomap.device.BlockDevice;
import dev.iomap.devices.ForwardingBlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** Wraps a device and fails writes touching a chosen range while armed; counts the failures. */
public final class FaultyDevice extends ForwardingBlockDevice {
    private volatile long failFrom = -1;
    private volatile long failTo = -1;
    private final AtomicInteger failures = new AtomicInteger();
    private volatile boolean failFlush;

    public FaultyDevice(BlockDevice delegate) {
        super(delegate);
    }

    void failWrites(long from, long to) {
        failFrom = from;
        failTo = to;
    }

    public void failFlushes(boolean fail) {
        failFlush = fail;
    }

    void heal() {
        failFrom = -1;
        failTo = -1;
    }

    int failures() {
        return failures.get();
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        long length = srcs.stream().mapToLong(ByteBuffer::remaining).sum();
        if (offset < failTo && offset + length > failFrom) {
            failures.incrementAndGet();
            return CompletableFuture.failedFuture(
                    new DeviceIoException("injected write error", offset, length, null));
        }
        return delegate.write(offset, srcs, purpose);
    }

    @Override
    public void flush() throws IOException {
        if (failFlush) {
            failures.incrementAndGet();
            throw new DeviceIoException("injected flush error", 0, delegate.capacity(), null);
        }
        delegate.flush();
    }
}
