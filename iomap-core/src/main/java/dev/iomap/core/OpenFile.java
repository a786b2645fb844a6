package dev.iomap.core;

import dev.iomap.api.WritebackException;
import dev.iomap.core.mm.ReadaheadState;
import dev.iomap.core.mm.WritebackError;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * An open file of a {@link CachedInode}: positional buffered reads and writes, fsync and fdatasync.
 *
 * <p>Each open file sees every writeback error of its inode once, at its next {@link #fsync()} or
 * {@link #fdatasync()} (errors recorded before it was opened are not its concern). Thread-safe.
 */
public final class OpenFile {
    private final CachedInode inode;
    /** This open file's readahead state (the kernel's {@code file->f_ra}). */
    private final ReadaheadState readahead = new ReadaheadState();
    private long errorSeen;

    OpenFile(CachedInode inode, long errorSeen) {
        this.inode = inode;
        this.errorSeen = errorSeen;
    }

    /** @return the inode */
    public CachedInode inode() {
        return inode;
    }

    /** @return this open file's readahead state */
    public ReadaheadState readahead() {
        return readahead;
    }

    /** @return the file size */
    public long size() {
        return inode.size();
    }

    /**
     * Writes all remaining bytes of {@code src} at {@code pos}.
     *
     * @param pos file offset, at least 0
     * @param src the bytes; its position advances by what was written
     * @return bytes written
     * @throws IOException on a bad range or an adapter or device error
     */
    public int write(long pos, ByteBuffer src) throws IOException {
        return (int) inode.write(pos, CopySource.of(src), src.remaining());
    }

    /**
     * Writes {@code length} bytes from a source that may copy short.
     *
     * @param pos file offset, at least 0
     * @param src the bytes
     * @param length bytes wanted
     * @return bytes written
     * @throws IOException on a bad range or an adapter or device error
     */
    public long write(long pos, CopySource src, long length) throws IOException {
        return inode.write(pos, src, length);
    }

    /**
     * Changes the file size through the cache alone (no adapter work); see
     * {@link CachedInode#truncate}.
     *
     * @param newSize the new size
     * @throws IOException on a bad size or an adapter or device error
     */
    public void truncate(long newSize) throws IOException {
        inode.truncate(newSize, null);
    }

    /**
     * Reads into {@code dst} from {@code pos}, reading ahead as this open file's access pattern
     * suggests (see {@link Readahead}).
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go
     * @return bytes read, or -1 at EOF
     * @throws IOException on a bad offset or an adapter or device error
     */
    public int read(long pos, ByteBuffer dst) throws IOException {
        return inode.read(pos, dst, readahead);
    }

    /**
     * As {@link #read(long, ByteBuffer)}, uncached if asked ({@code RWF_DONTCACHE}: see
     * {@link CachedInode#read(long, ByteBuffer, ReadaheadState, boolean)}).
     *
     * @param pos file offset, at least 0
     * @param dst where the bytes go
     * @param uncached whether the folios this read brings into the cache leave it once copied from
     * @return bytes read, or -1 at EOF
     * @throws IOException on a bad offset or an adapter or device error
     */
    public int read(long pos, ByteBuffer dst, boolean uncached) throws IOException {
        return inode.read(pos, dst, readahead, uncached);
    }

    /**
     * As {@link #write(long, ByteBuffer)}, uncached if asked ({@code RWF_DONTCACHE}: see
     * {@link CachedInode#write(long, CopySource, long, boolean)}).
     *
     * @param pos file offset, at least 0
     * @param src the bytes; its position advances by what was written
     * @param uncached whether the folios this write brings into the cache leave it once written back
     * @return bytes written
     * @throws IOException on a bad range or an adapter or device error
     */
    public int write(long pos, ByteBuffer src, boolean uncached) throws IOException {
        return (int) inode.write(pos, CopySource.of(src), src.remaining(), uncached);
    }

    /**
     * Writes back every dirty byte of the file, waits for it, flushes the device and reports a
     * writeback error recorded since this file last looked (the kernel's
     * {@code file_write_and_wait_range}, then a cache flush).
     *
     * @throws WritebackException if data written through the cache could not be written back
     * @throws IOException if the device flush fails
     */
    public void fsync() throws IOException {
        inode.writeAndWait(0, Long.MAX_VALUE);
        inode.device().flush();
        checkWritebackError();
    }

    /**
     * Like {@link #fsync()}; the core has no metadata of its own, so the two differ only in what an
     * adapter does for them.
     *
     * @throws IOException as {@link #fsync()}
     */
    public void fdatasync() throws IOException {
        fsync();
    }

    /**
     * Reports a writeback error recorded since this file last looked, once (the kernel's
     * {@code file_check_and_advance_wb_err}, {@code errseq_check_and_advance}).
     *
     * @throws WritebackException if there is one
     */
    public synchronized void checkWritebackError() throws WritebackException {
        WritebackError errors = inode.writebackError();
        long now = errors.sample();
        IOException error = errors.since(errorSeen);
        errorSeen = now;
        if (error != null) {
            throw new WritebackException("writeback of inode " + inode.ino() + " failed: "
                    + error.getMessage(), error);
        }
    }
}
