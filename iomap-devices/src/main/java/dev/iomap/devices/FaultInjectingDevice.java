package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Wraps a device and fails chosen requests with {@link DeviceIoException}, by {@link Fault} rules.
 * Requests that match no rule go to the wrapped device unchanged. Every injected error is recorded
 * ({@link #injected()}), so a test can tell whether a fault was hit at all.
 *
 * <p>Thread-safe if the wrapped device is (the rules are guarded by this device's lock). A request
 * is matched against the rules before the wrapped device sees it: one that hits a rule fails with
 * {@link DeviceIoException} even if its range is bad; any other bad range gets the wrapped device's
 * {@link dev.iomap.device.DeviceRangeException}. {@link #stats()} are the wrapped device's, so
 * failed requests are not counted (a torn write's first part is). {@link #close()} closes the
 * wrapped device, which then fails every I/O; rules and the record stay usable.
 */
public final class FaultInjectingDevice extends ForwardingBlockDevice {
    private final List<Rule> rules = new ArrayList<>();
    private final List<Injected> injected = new ArrayList<>();

    /**
     * What failed.
     *
     * @param kind the operation
     * @param offset device offset of the request
     * @param length bytes of the request
     * @param purpose for writes, the purpose; else null
     */
    public record Injected(Fault.Kind kind, long offset, long length, IoPurpose purpose) {
    }

    /** A fault and how many matching requests it lets pass and fails still. */
    private static final class Rule {
        final Fault fault;
        int passing;
        int left;

        Rule(Fault fault) {
            this.fault = fault;
            this.passing = fault.after();
            this.left = fault.times();
        }
    }

    /**
     * @param inner the device to pass requests to, which this device owns (closes)
     * @throws NullPointerException if {@code inner} is null
     */
    public FaultInjectingDevice(BlockDevice inner) {
        super(inner);
    }

    /** @return the wrapped device */
    public BlockDevice inner() {
        return delegate;
    }

    /**
     * Adds a rule. A request is checked against the rules in the order they were added; the first
     * it hits fails it.
     *
     * @param fault what to fail
     * @return this device
     * @throws NullPointerException if {@code fault} is null
     */
    public synchronized FaultInjectingDevice inject(Fault fault) {
        rules.add(new Rule(Objects.requireNonNull(fault, "fault")));
        return this;
    }

    /** Removes every rule (the record of injected errors stays). */
    public synchronized void clearFaults() {
        rules.clear();
    }

    /** @return the errors injected so far, oldest first */
    public synchronized List<Injected> injected() {
        return List.copyOf(injected);
    }

    /** Forgets the record of injected errors. */
    public synchronized void clearInjected() {
        injected.clear();
    }

    /**
     * @return the first rule a request hits, consuming one of its {@code times}, or null; a rule
     *     that lets the request pass (its {@code after}) does not stop the search
     */
    private synchronized Fault hit(Fault.Kind kind, long offset, long length, IoPurpose purpose) {
        for (Rule rule : rules) {
            if (rule.left != 0 && rule.fault.matches(kind, offset, length, purpose)) {
                if (rule.passing > 0) {
                    rule.passing--;
                    continue;
                }
                if (rule.left > 0) {
                    rule.left--;
                }
                injected.add(new Injected(kind, offset, length, purpose));
                return rule.fault;
            }
        }
        return null;
    }

    /** Fails with {@link DeviceIoException} if the read hits a rule, else reads from the wrapped device. */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        if (hit(Fault.Kind.READ, offset, dst.remaining(), null) != null) {
            throw new DeviceIoException("injected read error", offset, dst.remaining(), null);
        }
        delegate.read(offset, dst);
    }

    /**
     * @return a failed future if the write hits a rule (a torn fault first writes, whole blocks, what
     *     lies before its range), else the wrapped device's write
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        long length = DeviceCounters.totalRemaining(srcs);
        Fault fault = hit(Fault.Kind.WRITE, offset, length, purpose);
        if (fault == null) {
            return delegate.write(offset, srcs, purpose);
        }
        DeviceIoException error = new DeviceIoException("injected write error", offset, length, null);
        if (!fault.tornWrite() || fault.offset() <= offset) {
            return CompletableFuture.failedFuture(error);
        }
        long before = fault.offset() - offset;
        long aligned = before - before % delegate.blockSize();
        if (aligned == 0) {
            return CompletableFuture.failedFuture(error);
        }
        byte[] data = DeviceCounters.gather(srcs);
        return delegate.write(offset, ByteBuffer.wrap(data, 0, (int) aligned), purpose)
                .thenCompose(ignored -> CompletableFuture.failedFuture(error));
    }

    /** Fails with {@link DeviceIoException} if the flush hits a rule, else flushes the wrapped device. */
    @Override
    public void flush() throws IOException {
        if (hit(Fault.Kind.FLUSH, 0, 0, null) != null) {
            throw new DeviceIoException("injected flush error", 0, 0, null);
        }
        delegate.flush();
    }

    /** Fails with {@link DeviceIoException} if the discard hits a rule, else discards on the wrapped device. */
    @Override
    public void discard(long offset, long length) throws IOException {
        if (hit(Fault.Kind.DISCARD, offset, length, null) != null) {
            throw new DeviceIoException("injected discard error", offset, length, null);
        }
        delegate.discard(offset, length);
    }
}
