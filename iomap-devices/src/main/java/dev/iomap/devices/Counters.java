package dev.iomap.devices;

import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/** The counters behind {@link dev.iomap.device.BlockDevice#stats()} of the kit's devices, and request checks. */
final class Counters {
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final LongAdder dataBytesWritten = new LongAdder();
    private final LongAdder metadataBytesWritten = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder discardedBytes = new LongAdder();

    void read(long bytes) {
        reads.increment();
        bytesRead.add(bytes);
    }

    void write(long bytes, IoPurpose purpose) {
        writes.increment();
        (purpose == IoPurpose.METADATA ? metadataBytesWritten : dataBytesWritten).add(bytes);
    }

    void flush() {
        flushes.increment();
    }

    void discard(long bytes) {
        discardedBytes.add(bytes);
    }

    DeviceStats snapshot() {
        return new DeviceStats(bytesRead.sum(), reads.sum(), dataBytesWritten.sum(), metadataBytesWritten.sum(),
                writes.sum(), flushes.sum(), discardedBytes.sum());
    }

    /**
     * @throws DeviceRangeException unless {@code [offset, offset + length)} is whole blocks inside the
     *     device
     */
    static void checkRange(String what, long offset, long length, int blockSize, long capacity)
            throws DeviceRangeException {
        if (offset < 0 || length < 0 || offset + length < 0 || offset + length > capacity) {
            throw new DeviceRangeException(what + " [" + offset + ", +" + length + ") is outside the device of "
                    + capacity + " bytes");
        }
        if (((offset | length) & (blockSize - 1)) != 0) {
            throw new DeviceRangeException(what + " [" + offset + ", +" + length
                    + ") is not aligned to the device block size " + blockSize);
        }
    }

    static long remaining(List<ByteBuffer> srcs) {
        long total = 0;
        for (ByteBuffer src : srcs) {
            total += src.remaining();
        }
        return total;
    }

    /** @return the remaining bytes of {@code srcs}, concatenated, positions untouched */
    static byte[] gather(List<ByteBuffer> srcs) {
        byte[] data = new byte[Math.toIntExact(remaining(srcs))];
        int at = 0;
        for (ByteBuffer src : srcs) {
            int n = src.remaining();
            src.duplicate().get(data, at, n);
            at += n;
        }
        return data;
    }
}
