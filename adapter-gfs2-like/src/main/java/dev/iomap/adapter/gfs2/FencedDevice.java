package dev.iomap.adapter.gfs2;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.SyncSubmit;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared device as a cluster node writes it: every write, flush and discard asks the node's fence
 * and lease ({@link dev.iomap.spi.lock.ClusterContext#checkWrite}) right before it reaches the device and
 * again once it completed, and fails with the check's typed error without reaching the device once the
 * lease is over or the fence tripped. Everything a cluster mount writes goes through it: the journal,
 * metadata written home, ordered and journaled data, and the core's data writeback (gfs2-like's
 * {@code writebackSubmit} writes to this device, not to the one the core has). Reads pass through. Closing
 * it does not close the device below (the mount does not own it). Reads, the geometry and the counts are
 * {@link ForwardingBlockDevice}'s: the device below's.
 *
 * <h2>Check, then write, in one thread</h2>
 * A check made when a write is queued says nothing about when the device gets it: a process stopped
 * ({@code SIGSTOP}, a pause) between the two writes once it resumes, however late. So the check that
 * counts is made in the thread that makes the device write, right before it: a write whose caller
 * waits for it at once ({@link SyncSubmit}, an fsync's) is checked and written in the caller's thread;
 * any other is handed to this device's own threads, each of which checks and then writes under
 * {@link SyncSubmit} (a file device then writes in that thread, with nothing between the check and the
 * system call but the device's bookkeeping). The caller's thread checks too, so a refused write fails
 * before it is queued. When the write completed, the check is made again: a write that completed after
 * the lease ended fails with the check's error ({@link #lateWrites()} counts them), since it may have
 * reached the device after the other nodes took over; the caller then does not take it as durable.
 * What remains is a pause between the check and the system call (see the cluster's {@code Fence}).
 *
 * <p>Thread-safe.
 */
final class FencedDevice extends ForwardingBlockDevice {
    /** The threads that check and write a write nobody waits for at once, as many as a direct file device has. */
    private static final int WRITE_THREADS = 4;
    private static final long IDLE_THREAD_SECONDS = 10;

    /** The fence check: throws once the node must write nothing (now or for good). */
    @FunctionalInterface
    interface Check {
        /** @throws IOException while the node must not write: the reason, typed */
        void check() throws IOException;
    }

    private volatile Check fence;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong lateWrites = new AtomicLong();
    private final ThreadPoolExecutor writers;

    /**
     * @param below the shared device
     * @param fence the fence, or null until {@link #arm} (no check: joining, before the node has one)
     */
    FencedDevice(BlockDevice below, Check fence) {
        super(below);
        this.fence = fence;
        this.writers = new ThreadPoolExecutor(WRITE_THREADS, WRITE_THREADS, IDLE_THREAD_SECONDS, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), Thread.ofPlatform().name("iomap-fenced-write-", 1).daemon().factory());
        writers.allowCoreThreadTimeOut(true);
    }

    /**
     * Sets the fence checked from now on.
     *
     * @param check the node's fence
     */
    void arm(Check check) {
        this.fence = Objects.requireNonNull(check, "check");
    }

    /** @return how many writes, flushes and discards the fence refused before they reached the device */
    long refused() {
        return refused.get();
    }

    /** @return how many writes, flushes and discards completed only after the lease ended (and failed) */
    long lateWrites() {
        return lateWrites.get();
    }

    private void check() throws IOException {
        Check f = fence;
        if (f != null) {
            try {
                f.check();
            } catch (IOException | RuntimeException e) {
                refused.incrementAndGet();
                throw e;
            }
        }
    }

    /** The check after a write, flush or discard completed: its error means the lease ended meanwhile. */
    private void checkAfter() throws IOException {
        Check f = fence;
        if (f != null) {
            try {
                f.check();
            } catch (IOException | RuntimeException e) {
                lateWrites.incrementAndGet();
                throw e;
            }
        }
    }

    /**
     * @return the device's write, checked right before it in the thread that makes it and again once it
     *     completed; a future failed with the check's error if either failed (before: nothing written)
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        if (fence == null) {
            return delegate.write(offset, srcs, purpose);
        }
        try {
            check();
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (SyncSubmit.callerWaits()) {
            return checkedWrite(offset, srcs, purpose);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            writers.execute(() -> checkedWrite(offset, srcs, purpose).whenComplete((v, e) -> {
                if (e == null) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(e);
                }
            }));
        } catch (RejectedExecutionException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /** Checks, then writes under {@link SyncSubmit} in this thread, then checks again once it completed. */
    private CompletableFuture<Void> checkedWrite(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        List<CompletableFuture<Void>> written = new ArrayList<>(1);
        try {
            check();
            SyncSubmit.run(() -> written.add(delegate.write(offset, srcs, purpose)));
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return written.getFirst().thenCompose(v -> {
            try {
                checkAfter();
                return CompletableFuture.completedFuture(null);
            } catch (IOException | RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        });
    }

    /** @throws IOException the check's error if it fails before (nothing flushed) or after, else as the device's */
    @Override
    public void flush() throws IOException {
        check();
        delegate.flush();
        checkAfter();
    }

    /** @throws IOException the check's error if it fails before (nothing discarded) or after, else as the device's */
    @Override
    public void discard(long offset, long length) throws IOException {
        check();
        delegate.discard(offset, length);
        checkAfter();
    }

    /** Does nothing to the device below, which is the caller's; this device's own threads end when idle. */
    @Override
    public void close() {
    }
}
