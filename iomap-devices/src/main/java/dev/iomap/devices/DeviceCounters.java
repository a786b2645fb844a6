package dev.iomap.devices;

import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a block device has done: the counters behind {@link dev.iomap.device.BlockDevice#stats()}, and
 * the range check every device applies to a request.
 *
 * <p>Thread-safe and lock-free: any number of threads may count at once. A {@link #snapshot()} taken
 * while others count sees each counter at some moment during the call, not all of them at one moment:
 * a concurrent write may show up in {@code writes} but not yet in its bytes. Snapshots taken when no
 * operation is in progress are exact. There is nothing to close; counting never fails.
 */
public final class DeviceCounters {
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final LongAdder dataBytesWritten = new LongAdder();
    private final LongAdder metadataBytesWritten = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder discardedBytes = new LongAdder();

    /** Creates counters that are all zero. */
    public DeviceCounters() {
    }

    /**
     * Counts one read.
     *
     * @param bytes bytes it read, at least 0
     */
    public void countRead(long bytes) {
        reads.increment();
        bytesRead.add(bytes);
    }

    /**
     * Counts one write call, however many buffers it gathered.
     *
     * @param bytes bytes it wrote, at least 0
     * @param purpose whether they were data or metadata; not null
     * @throws NullPointerException if {@code purpose} is null (nothing is counted)
     */
    public void countWrite(long bytes, IoPurpose purpose) {
        LongAdder bytesWritten = switch (purpose) {
            case DATA -> dataBytesWritten;
            case METADATA -> metadataBytesWritten;
        };
        writes.increment();
        bytesWritten.add(bytes);
    }

    /** Counts one flush. */
    public void countFlush() {
        flushes.increment();
    }

    /**
     * Counts one discard.
     *
     * @param bytes bytes discarded, at least 0
     */
    public void countDiscard(long bytes) {
        discardedBytes.add(bytes);
    }

    /** @return the counts so far (see the class comment for what a concurrent snapshot sees) */
    public DeviceStats snapshot() {
        return new DeviceStats(
                bytesRead.sum(),
                reads.sum(),
                dataBytesWritten.sum(),
                metadataBytesWritten.sum(),
                writes.sum(),
                flushes.sum(),
                discardedBytes.sum());
    }

    /**
     * Checks that a device request covers whole blocks inside the device: {@code offset} and
     * {@code length} are non-negative multiples of {@code blockSize} and {@code offset + length}
     * neither overflows nor passes {@code capacity}. An empty request ({@code length == 0}) is valid
     * at any block-aligned offset up to and including {@code capacity}.
     *
     * <p>Pure function of its arguments; thread-safe.
     *
     * @param operation what the request is ("read", "write", "discard"), for the message
     * @param offset device byte offset of the request
     * @param length bytes in the request
     * @param blockSize the device's block size, a power of two
     * @param capacity the device's size in bytes
     * @throws DeviceRangeException naming the operation and the offending values if the request is
     *     negative, unaligned, overflowing or past the end of the device
     */
    public static void checkRequest(String operation, long offset, long length, int blockSize,
            long capacity) throws DeviceRangeException {
        if (offset < 0) {
            throw new DeviceRangeException(operation + ": negative offset " + offset);
        }
        if (length < 0) {
            throw new DeviceRangeException(operation + ": negative length " + length);
        }
        if (offset % blockSize != 0) {
            throw new DeviceRangeException(operation + ": offset " + offset
                    + " is not a multiple of the block size " + blockSize);
        }
        if (length % blockSize != 0) {
            throw new DeviceRangeException(operation + ": length " + length
                    + " is not a multiple of the block size " + blockSize);
        }
        if (offset + length < 0 || offset + length > capacity) {
            throw new DeviceRangeException(operation + ": range [" + offset + ", +" + length
                    + ") ends past the device capacity " + capacity);
        }
    }

    /**
     * Checks the geometry a device is created with.
     *
     * @param blockSize must be a power of two, at least 512
     * @param capacity must be a positive multiple of {@code blockSize}
     * @throws IllegalArgumentException naming the bad value
     */
    static void checkGeometry(int blockSize, long capacity) {
        checkBlockSize(blockSize);
        if (capacity <= 0 || capacity % blockSize != 0) {
            throw new IllegalArgumentException("capacity " + capacity
                    + " is not a positive multiple of the block size " + blockSize);
        }
    }

    /**
     * @param blockSize must be a power of two, at least 512
     * @throws IllegalArgumentException naming the bad value
     */
    static void checkBlockSize(int blockSize) {
        if (blockSize < 512 || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException(
                    "block size " + blockSize + " is not a power of two of at least 512");
        }
    }

    /**
     * @param buffers the buffers of a gather write
     * @return the sum of their remaining bytes (cannot overflow: at most 2^31 buffers of under 2^31)
     * @throws NullPointerException if the list or one of its buffers is null
     */
    public static long totalRemaining(List<ByteBuffer> buffers) {
        long total = 0;
        for (ByteBuffer buffer : buffers) {
            total += buffer.remaining();
        }
        return total;
    }

    /**
     * @param buffers the buffers of a gather write, whose remaining bytes fit in one array
     * @return their remaining bytes, one buffer after the other; their positions are not changed
     * @throws NullPointerException if the list or one of its buffers is null
     * @throws ArithmeticException if they hold more than {@code Integer.MAX_VALUE} bytes
     */
    static byte[] gather(List<ByteBuffer> buffers) {
        byte[] data = new byte[Math.toIntExact(totalRemaining(buffers))];
        int at = 0;
        for (ByteBuffer buffer : buffers) {
            int n = buffer.remaining();
            buffer.get(buffer.position(), data, at, n);
            at += n;
        }
        return data;
    }
}
