package dev.iomap.core.dio;

import dev.iomap.api.IomapException;
import dev.iomap.core.DirectIoAccess;
import dev.iomap.core.IomapIter;
import dev.iomap.spi.DirectFallbackException;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A direct write: the write half of the kernel's {@code iomap_dio_rw}, with the locking XFS's
 * {@code xfs_file_dio_write_aligned} does around it.
 *
 * <p>Steps: take the inode lock (shared for a pure overwrite within EOF, exclusive otherwise: see
 * {@link #write}); zero the gap between EOF and the write, if any, through the cache; write back and
 * drop the cache over the range ({@code kiocb_invalidate_pages}); map the range with
 * {@code WRITE|DIRECT} and submit one device write per mapping through the adapter's
 * {@code writebackSubmit} (as a {@link DirectIoend}), all in flight at once; wait for them, then, in file
 * order, raise the size over each run that landed and run the adapter's completion
 * ({@code iomap_dio_complete} and the filesystem's {@code end_io}); drop the cache over the range
 * again ({@code kiocb_invalidate_post_direct_write}).
 */
final class DirectWrite {
    private static final Set<IomapRequest> DIRECT_WRITE = EnumSet.of(IomapRequest.WRITE, IomapRequest.DIRECT);
    private static final Set<IomapRequest> ATOMIC_WRITE = EnumSet.of(IomapRequest.WRITE, IomapRequest.DIRECT,
            IomapRequest.ATOMIC);
    private static final Set<IomapRequest> REPORT = EnumSet.of(IomapRequest.REPORT);

    /** One device write in flight, and what its completion tells the adapter. */
    private record Run(long offset, long length, IomapType type, Set<IomapFlag> flags, long address,
            CompletableFuture<Void> write) {
    }

    private DirectWrite() {
    }

    /**
     * Writes all of {@code src} at {@code pos}.
     *
     * <p>The inode lock is taken shared when the write ends within EOF and the adapter reports only
     * written, unshared blocks over it (so it allocates, converts and remaps nothing, and concurrent
     * overwrites of disjoint ranges run in parallel, as in XFS); otherwise, and always for a file
     * whose writeback goes in file order, and for an atomic write, exclusively.
     *
     * <p>An atomic write ({@link IomapRequest#ATOMIC}) never falls back to buffered I/O and completes all
     * its runs together ({@link #completeAtomic}): all of it is written, or none.
     *
     * @param access the file
     * @param pos file offset, block aligned (checked by the caller)
     * @param src the bytes, a block-aligned count; its position advances by what was written
     * @param atomic whether this is an atomic write (its rules checked by the caller)
     * @return bytes written, all of them
     * @throws IOException from the adapter or the device: nothing past the first failed run is
     *     converted or counted in the size, and {@code src}'s position has advanced over the bytes
     *     before it that were written and completed (a short write, as the kernel's)
     */
    static int write(DirectIoAccess access, long pos, ByteBuffer src, boolean atomic) throws IOException {
        long end = pos + src.remaining();
        boolean exclusive = atomic || access.writesInFileOrder();
        if (!exclusive) {
            access.lockShared();
            if (end > access.inode().size() || !pureOverwrite(access, pos, end)) {
                access.unlockShared();
                exclusive = true;
            }
        }
        if (exclusive) {
            access.lockExclusive();
        }
        try {
            long size = access.inode().size();
            if (pos > size) {
                // Stale bytes past the old EOF in its last block must not show inside the new size.
                access.inode().zeroRange(size, pos - size);
            }
            access.writeAndWaitBefore(pos, end);
            access.dropCleanRange(pos, end);
            long[] landed = new long[2];
            ByteBuffer data = src.slice(src.position(), src.remaining());
            IOException failure = submitAndComplete(access, pos, data, landed, atomic);
            long direct = landed[0];
            long buffered = 0;
            if (failure == null && landed[1] >= 0) {
                if (!exclusive) {
                    // The fallback writes through the cache, which needs the inode lock exclusively.
                    access.unlockShared();
                    access.lockExclusive();
                    exclusive = true;
                }
                long from = landed[1];
                failure = BufferedFallback.write(access, from, data.slice((int) (from - pos), (int) (end - from)));
                buffered = failure == null ? end - from : 0;   // counted by the buffered write itself
            }
            access.dropCleanRange(pos, end);
            src.position(src.position() + (int) (direct + buffered));
            access.countWritten(direct);
            if (failure != null) {
                throw failure;
            }
            return (int) (direct + buffered);
        } finally {
            if (exclusive) {
                access.unlockExclusive();
            } else {
                access.unlockShared();
            }
        }
    }

    /** Whether the adapter reports only written blocks it owns alone over {@code [pos, end)}. */
    private static boolean pureOverwrite(DirectIoAccess access, long pos, long end) throws IOException {
        IomapIter iter = new IomapIter(access.inode(), access.ops(), pos, end - pos, REPORT);
        boolean pure = true;
        try {
            while (iter.next()) {
                Iomap iomap = iter.iomap();
                if (iomap.type() != IomapType.MAPPED || iomap.has(IomapFlag.SHARED) || iomap.has(IomapFlag.NEW)) {
                    pure = false;
                } else {
                    iter.advance(iter.length());
                }
            }
        } catch (IOException | RuntimeException e) {
            abort(iter, e);
            throw e;
        }
        return pure;
    }

    /**
     * Maps, submits and completes the whole range.
     *
     * @return the error that ended the write, or null; {@code landed[0]} is set to the bytes from
     *     {@code pos} that were written directly and completed, {@code landed[1]} to where the adapter
     *     asked for a buffered fallback, -1 if it did not
     */
    private static IOException submitAndComplete(DirectIoAccess access, long pos, ByteBuffer data, long[] landed,
            boolean atomic) {
        List<Run> runs = new ArrayList<>();
        IomapIter iter = new IomapIter(access.inode(), access.ops(), pos, data.remaining(),
                atomic ? ATOMIC_WRITE : DIRECT_WRITE);
        IOException failure = null;
        long fallback = -1;
        try {
            while (iter.next()) {
                long at = iter.pos();
                int length = (int) iter.length();
                ByteBuffer part = data.slice((int) (at - pos), length);
                Iomap iomap = iter.iomap();
                switch (iomap.type()) {
                    case MAPPED, UNWRITTEN -> runs.add(submit(access, iomap, at, length, part));
                    case INLINE -> {
                        if (atomic) {
                            throw new IomapException("atomic write to inode " + access.inode().ino() + " at " + at
                                    + ": the adapter returned " + iomap + "; an atomic write needs blocks out of place");
                        }
                        part.get(0, iomap.inlineData(), (int) (at - iomap.offset()), length);
                        runs.add(new Run(at, length, IomapType.INLINE, Set.of(), Iomap.NULL_ADDR,
                                CompletableFuture.completedFuture(null)));
                    }
                    case HOLE, DELALLOC -> throw new IomapException("direct write to inode "
                            + access.inode().ino() + " at " + at + ": the adapter returned " + iomap
                            + "; a direct write needs real blocks (MAPPED, UNWRITTEN, or INLINE)");
                }
                iter.advance(length);
            }
        } catch (DirectFallbackException e) {
            abort(iter, e);
            if (atomic) {
                failure = new IomapException("atomic write to inode " + access.inode().ino() + " at " + iter.pos()
                        + ": the adapter declined direct I/O there, and an atomic write has no buffered fallback", e);
            } else {
                fallback = iter.pos();
            }
        } catch (IOException | RuntimeException e) {
            abort(iter, e);
            failure = e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
        IOException error = atomic ? completeAtomic(access, pos, runs, failure, landed)
                : complete(access, pos, runs, failure, landed);
        landed[1] = error == null ? fallback : -1;
        return error;
    }

    private static Run submit(DirectIoAccess access, Iomap iomap, long at, int length, ByteBuffer part) {
        Iomap run = new Iomap(at, length, iomap.type(), iomap.flags(), iomap.deviceAddress(at), null,
                iomap.validityCookie());
        CompletableFuture<Void> write;
        try {
            write = access.writebackOps().writebackSubmit(access.inode(), new DirectIoend(run, part, access.device()));
            if (write == null) {
                throw new IllegalStateException("writebackSubmit returned no future for " + run);
            }
        } catch (IOException | RuntimeException e) {
            write = CompletableFuture.failedFuture(e);
        }
        return new Run(at, length, iomap.type(), iomap.flags(), run.address(), write);
    }

    /**
     * Waits for every run (they use the caller's buffer until then), then completes them in file
     * order: each run that landed, before any device failure, raises the size over it and is completed
     * as written; every run from the first device failure on is completed with an error (its own, or
     * that failure), so the adapter converts nothing past it.
     *
     * @param mapFailure the error that stopped the mapping, or null
     * @return the first error (a device failure, a completion error, or {@code mapFailure}), or null
     */
    private static IOException complete(DirectIoAccess access, long pos, List<Run> runs, IOException mapFailure,
            long[] landed) {
        List<IOException> errors = new ArrayList<>(runs.size());
        for (Run run : runs) {
            errors.add(await(run.write()));
        }
        IOException failure = null;
        long done = pos;
        for (int i = 0; i < runs.size(); i++) {
            Run run = runs.get(i);
            IOException own = errors.get(i);
            if (failure == null && own != null) {
                failure = own;
            }
            IOException reported = own != null ? own : failure;
            if (reported == null) {
                access.extendSize(run.offset() + run.length());
            }
            if (run.type() != IomapType.INLINE) {
                try {
                    access.writebackOps().ioendCompleted(access.inode(), new IoendCompletion(run.offset(),
                            run.length(), run.type(), run.flags(), run.address(), reported));
                } catch (IOException | RuntimeException e) {
                    failure = addFailure(failure, e);
                }
            }
            if (failure == null) {
                done = run.offset() + run.length();
            }
        }
        landed[0] = done - pos;
        return mapFailure == null ? failure : addFailure(failure, mapFailure);
    }

    /**
     * Waits for every run, then completes them all with one
     * {@link dev.iomap.spi.WritebackOps#atomicWriteCompleted}: if none failed (and the mapping did not),
     * after raising the size over the whole write, each as written; otherwise each with the first
     * error, so the adapter releases what it staged and the file shows none of the write.
     *
     * @param mapFailure the error that stopped the mapping, or null
     * @return the first error, or null; {@code landed[0]} is set to the whole length, or 0 on error
     */
    private static IOException completeAtomic(DirectIoAccess access, long pos, List<Run> runs, IOException mapFailure,
            long[] landed) {
        IOException failure = mapFailure;
        for (Run run : runs) {
            IOException own = await(run.write());
            if (own != null) {
                failure = addFailure(failure, own);
            }
        }
        landed[0] = 0;
        if (runs.isEmpty()) {
            return failure;
        }
        Run last = runs.getLast();
        long end = last.offset() + last.length();
        if (failure == null) {
            access.extendSize(end);
        }
        List<IoendCompletion> completions = new ArrayList<>(runs.size());
        for (Run run : runs) {
            completions.add(new IoendCompletion(run.offset(), run.length(), run.type(), run.flags(), run.address(),
                    failure));
        }
        try {
            access.writebackOps().atomicWriteCompleted(access.inode(), completions);
        } catch (IOException | RuntimeException e) {
            failure = addFailure(failure, e);
        }
        if (failure == null) {
            landed[0] = end - pos;
        }
        return failure;
    }

    private static IOException addFailure(IOException failure, Exception e) {
        if (failure == null) {
            return e instanceof IOException io ? io : new IOException(e.toString(), e);
        }
        failure.addSuppressed(e);
        return failure;
    }

    /** Waits, uninterruptibly (the device may still be reading the caller's buffer), for one run. */
    private static IOException await(CompletableFuture<Void> write) {
        try {
            write.join();
            return null;
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            Throwable cause = e;
            while (cause instanceof CompletionException && cause.getCause() != null) {
                cause = cause.getCause();
            }
            return cause instanceof IOException io ? io : new IOException(String.valueOf(cause), cause);
        }
    }

    private static void abort(IomapIter iter, Exception failure) {
        try {
            iter.abort();
        } catch (IOException | RuntimeException suppressed) {
            failure.addSuppressed(suppressed);
        }
    }
}
