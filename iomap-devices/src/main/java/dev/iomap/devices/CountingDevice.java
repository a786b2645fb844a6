package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Wraps a device, counts what passes through it ({@link #stats()}, independent of the wrapped
 * device's own counters) and, while recording is on, remembers every request so that a test can
 * learn where a filesystem put its data or whether an fsync flushed.
 *
 * <p>Thread-safe if the wrapped device is. Only requests the wrapped device carries out are counted
 * and recorded (a write when its future completes normally); a bad range gets the wrapped device's
 * {@link dev.iomap.device.DeviceRangeException}. {@link #close()} closes the wrapped device, which
 * then fails every I/O; the counts and the record stay readable.
 */
public final class CountingDevice extends ForwardingBlockDevice {
    private final DeviceCounters counters = new DeviceCounters();
    private final List<Request> requests = new ArrayList<>();
    private boolean recording;

    /**
     * One request seen while recording.
     *
     * @param kind read, write, flush or discard
     * @param offset device offset (0 for a flush)
     * @param length bytes (0 for a flush)
     * @param purpose for writes, the purpose; else null
     */
    public record Request(Fault.Kind kind, long offset, long length, IoPurpose purpose) {
    }

    /**
     * @param inner the device to count, which this device owns (closes)
     * @throws NullPointerException if {@code inner} is null
     */
    public CountingDevice(BlockDevice inner) {
        super(inner);
    }

    /** @return the wrapped device */
    public BlockDevice inner() {
        return delegate;
    }

    /**
     * Starts or stops remembering requests (counting never stops).
     *
     * @param on whether to record
     */
    public synchronized void record(boolean on) {
        recording = on;
    }

    /** @return the requests recorded so far, oldest first */
    public synchronized List<Request> requests() {
        return List.copyOf(requests);
    }

    /** Forgets the recorded requests. */
    public synchronized void clearRequests() {
        requests.clear();
    }

    private synchronized void note(Fault.Kind kind, long offset, long length, IoPurpose purpose) {
        if (recording) {
            requests.add(new Request(kind, offset, length, purpose));
        }
    }

    /** Reads from the wrapped device, then counts and records the read; throws what it throws. */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int length = dst.remaining();
        delegate.read(offset, dst);
        counters.countRead(length);
        note(Fault.Kind.READ, offset, length, null);
    }

    /**
     * @return the wrapped device's write, followed by counting and recording it if it completes
     *     normally
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        long length = DeviceCounters.totalRemaining(srcs);
        return delegate.write(offset, srcs, purpose).thenRun(() -> {
            counters.countWrite(length, purpose);
            note(Fault.Kind.WRITE, offset, length, purpose);
        });
    }

    /** Flushes the wrapped device, then counts and records the flush; throws what it throws. */
    @Override
    public void flush() throws IOException {
        delegate.flush();
        counters.countFlush();
        note(Fault.Kind.FLUSH, 0, 0, null);
    }

    /** Discards on the wrapped device, then counts and records the discard; throws what it throws. */
    @Override
    public void discard(long offset, long length) throws IOException {
        delegate.discard(offset, length);
        counters.countDiscard(length);
        note(Fault.Kind.DISCARD, offset, length, null);
    }

    /** @return what passed through this device (not the wrapped device's own counts) */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }
}
