package dev.iomap.core.vfs;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FileStat;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.MappedFile;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.RwFlag;
import dev.iomap.core.dio.DirectIo;
import dev.iomap.spi.FileOps;
import dev.iomap.core.CachedInode;
import dev.iomap.core.CopySource;
import dev.iomap.core.OpenFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link IomapFile}: the order in which page-cache work and adapter work happen for each operation,
 * as a filesystem's file operations do it in the kernel.
 */
final class CoreFile implements IomapFile {
    private final CoreFileSystem fs;
    private final CachedInode inode;
    private final OpenFile handle;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<OpenFlag> flags;
    /** The direct I/O path for a {@link OpenFlag#DIRECT} open, else null. */
    private final DirectIo direct;

    CoreFile(CoreFileSystem fs, CachedInode inode, Set<OpenFlag> flags) {
        this.fs = fs;
        this.inode = inode;
        this.handle = inode.open();
        this.flags = flags;
        this.direct = flags.contains(OpenFlag.DIRECT) ? new DirectIo(inode) : null;
    }

    @Override
    public Set<OpenFlag> openFlags() {
        return flags;
    }

    CoreFileSystem fs() {
        return fs;
    }

    CachedInode inode() {
        return inode;
    }

    void ensureOpen() throws IOException {
        fs.ensureOpen();
        if (closed.get()) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public long ino() {
        return inode.ino();
    }

    @Override
    public long size() {
        return inode.size();
    }

    @Override
    public int read(long pos, ByteBuffer dst) throws IOException {
        return read(pos, dst, false);
    }

    /** {@inheritDoc} {@link RwFlag#DONTCACHE} is taken on every filesystem (the buffered path is the engine's). */
    @Override
    public int read(long pos, ByteBuffer dst, Set<RwFlag> flags) throws IOException {
        return read(pos, dst, flags.contains(RwFlag.DONTCACHE));
    }

    private int read(long pos, ByteBuffer dst, boolean uncached) throws IOException {
        ensureOpen();
        try (FileOps.FileUse _ = fs.files().use(inode, false)) {
            return direct != null ? direct.read(pos, dst) : handle.read(pos, dst, uncached);
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    @Override
    public long seekData(long offset) throws IOException {
        ensureOpen();
        try (FileOps.FileUse _ = fs.files().use(inode, false)) {
            return inode.seekData(offset);
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    @Override
    public long seekHole(long offset) throws IOException {
        ensureOpen();
        try (FileOps.FileUse _ = fs.files().use(inode, false)) {
            return inode.seekHole(offset);
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    @Override
    public List<FileExtent> fiemap(long offset, long length, boolean sync) throws IOException {
        ensureOpen();
        try (FileOps.FileUse _ = fs.files().use(inode, false)) {
            return inode.fiemap(offset, length, sync);
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>An {@link OpenFlag#APPEND} open takes the offset from the size under the exclusive inode lock,
     * held until the write ended (the kernel's {@code generic_write_checks} under {@code inode_lock}), and
     * inside the adapter's {@link FileOps#use}, which on a cluster node holds the file's glock
     * and has set the size other nodes left.
     */
    @Override
    public int write(long pos, ByteBuffer src) throws IOException {
        return write(pos, src, false, false);
    }

    /** {@inheritDoc} {@link RwFlag#DONTCACHE} is taken on every filesystem (the buffered path is the engine's). */
    @Override
    public int write(long pos, ByteBuffer src, Set<RwFlag> flags) throws IOException {
        return write(pos, src, flags.contains(RwFlag.DONTCACHE), false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Checked before anything changes, in the kernel's order: the capability (EOPNOTSUPP,
     * {@code kiocb_set_rw_flags}), the length and offset rules (EINVAL, an {@link OpenFlag#APPEND} write's
     * offset at the size it lands at), then the direct open (EOPNOTSUPP, the end of
     * {@code generic_atomic_write_valid}). The direct write then maps with
     * {@link dev.iomap.spi.IomapRequest#ATOMIC}.
     */
    @Override
    public int writeAtomic(long pos, ByteBuffer src) throws IOException {
        ensureOpen();
        fs.require(Capability.ATOMIC_WRITES, "an atomic write");
        if (!flags.contains(OpenFlag.APPEND)) {
            fs.atomicWriteLimits().check("atomic write to inode " + inode.ino(), pos, src.remaining());
        }
        if (direct == null) {
            throw new NotSupportedException("atomic write of " + src.remaining() + " bytes at " + pos + " to inode "
                    + inode.ino() + ": atomic writes are direct I/O only; open the file with DIRECT (EOPNOTSUPP)");
        }
        return write(pos, src, false, true);
    }

    private int write(long pos, ByteBuffer src, boolean uncached, boolean atomic) throws IOException {
        ensureOpen();
        mayChange("write", false);
        try (FileOps.FileUse _ = fs.files().use(inode, true)) {
            if (src.hasRemaining()) {
                fs.touch(inode);
            }
            if (flags.contains(OpenFlag.APPEND)) {
                return append(src, uncached, atomic);
            }
            // the message is built only when refused: this runs on every write
            if (pos != inode.size() && !fs.capabilities().contains(Capability.RANDOM_WRITE)) {
                fs.require(Capability.RANDOM_WRITE, "a write at " + pos + " (not at EOF " + inode.size() + ")");
            }
            int written = writeAt(pos, src, uncached, atomic);
            if (written > 0 && synchronous()) {
                dataSync(pos, pos + written);
            }
            return written;
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    /**
     * An {@link OpenFlag#APPEND} write: the offset is the size under the exclusive inode lock, held
     * until the write ended (the kernel's {@code generic_write_checks} under {@code inode_lock}); the
     * caller's {@link FileOps#use} holds the file's glock on a cluster node and has set the
     * size other nodes left.
     */
    private int append(ByteBuffer src, boolean uncached, boolean atomic) throws IOException {
        long[] landed = new long[2];
        inode.withExclusiveLock(() -> {
            landed[0] = inode.size();
            landed[1] = writeAt(landed[0], src, uncached, atomic);
        });
        if (landed[1] > 0 && synchronous()) {
            dataSync(landed[0], landed[0] + landed[1]);
        }
        return (int) landed[1];
    }

    /** @return whether writes are synchronous: {@link OpenFlag#DSYNC}, or the inode's {@link FileFlag#SYNC} */
    private boolean synchronous() {
        return flags.contains(OpenFlag.DSYNC) || inode.fileFlags().contains(FileFlag.SYNC);
    }

    /**
     * Linux's refusals of a change through an open file, EPERM: a {@link OpenFlag#READ_ONLY} open (Linux:
     * EBADF), an immutable inode ({@code IS_IMMUTABLE}, as ext4 and {@code generic_copy_file_checks}
     * check it for a file opened before it became immutable) and, for a change that is no append, an
     * append-only one ({@code IS_APPEND}: truncate, punch, collapse, clone into it).
     *
     * @param what the change, for the message
     * @param appendOnlyRefuses whether an append-only inode refuses it
     */
    private void mayChange(String what, boolean appendOnlyRefuses) throws OperationNotPermittedException {
        String path = "inode " + inode.ino();
        if (flags.contains(OpenFlag.READ_ONLY)) {
            throw new OperationNotPermittedException(path, what + " through a read-only open");
        }
        Set<FileFlag> inodeFlags = inode.fileFlags();
        if (inodeFlags.contains(FileFlag.IMMUTABLE)) {
            throw new OperationNotPermittedException(path, what + " of an immutable file");
        }
        if (appendOnlyRefuses && inodeFlags.contains(FileFlag.APPEND)) {
            throw new OperationNotPermittedException(path, what + " of an append-only file");
        }
    }

    private int writeAt(long pos, ByteBuffer src, boolean uncached, boolean atomic) throws IOException {
        if (atomic) {
            return direct.writeAtomic(pos, src, fs.atomicWriteLimits());
        }
        return direct != null ? direct.write(pos, src)
                : (int) inode.write(pos, CopySource.of(src), src.remaining(), uncached);
    }

    /**
     * What {@link OpenFlag#DSYNC} adds to a write (the kernel's {@code generic_write_sync}): the range
     * written back (nothing to do for a direct write), the adapter's fdatasync commit, a device flush,
     * and the writeback error of this file, if any.
     */
    private void dataSync(long start, long end) throws IOException {
        if (direct == null) {
            inode.writeAndWait(start, end);
        }
        fs.files().fsync(inode, true);
        fs.cache().device().flush();
        handle.checkWritebackError();
    }

    @Override
    public void truncate(long size) throws IOException {
        ensureOpen();
        fs.require(Capability.TRUNCATE, "truncate");
        InvalidRangeException.checkRange("truncate of inode " + inode.ino(), size, 0, inode.maxFileSize());
        mayChange("truncate", true);
        try (FileOps.FileUse _ = fs.files().use(inode, true)) {
            inode.withExclusiveLock(() -> {
                fs.files().checkSetSize(inode, size);
                inode.truncate(size, () -> fs.files().setSize(inode, size));
            });
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    @Override
    public void fallocate(FallocateMode mode, long offset, long length, boolean keepSize) throws IOException {
        ensureOpen();
        InvalidRangeException.checkRange("fallocate of inode " + inode.ino(), offset, length, inode.maxFileSize());
        if (length == 0) {
            throw new InvalidRangeException("fallocate of inode " + inode.ino() + ": length 0");
        }
        switch (mode) {
            case ALLOCATE -> fs.require(Capability.FALLOCATE, "fallocate");
            case PUNCH_HOLE -> fs.require(Capability.PUNCH_HOLE, "punch hole");
            case ZERO_RANGE -> fs.require(Capability.ZERO_RANGE, "zero range");
            default -> throw new IllegalStateException(mode.name());
        }
        mayChange("fallocate " + mode, mode != FallocateMode.ALLOCATE);
        long end = offset + length;
        try (FileOps.FileUse _ = fs.files().use(inode, true)) {
            inode.withExclusiveLock(() -> {
                if (mode == FallocateMode.ALLOCATE) {
                    long block = inode.blockSize();
                    long start = offset & -block;
                    fs.files().fallocate(inode, mode, start, ((end + block - 1) & -block) - start);
                } else {
                    clearRange(mode, offset, end);
                }
                if (!keepSize && mode != FallocateMode.PUNCH_HOLE && end > inode.size()) {
                    // [offset, end) reads as zeros now (unwritten, zeroed or just cleared): only the part
                    // between the old size and offset may hold stale bytes to zero.
                    inode.truncate(end, offset, () -> fs.files().setSize(inode, end));
                }
            });
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
    }

    /**
     * Punch or zero: the partial blocks at the edges are zeroed through the cache; the whole blocks
     * between are written back, dropped from the cache, then handed to the adapter.
     */
    private void clearRange(FallocateMode mode, long offset, long end) throws IOException {
        long block = inode.blockSize();
        long first = (offset + block - 1) & -block;
        long last = end & -block;
        if (last <= first) {
            inode.zeroRange(offset, end - offset);
            return;
        }
        inode.zeroRange(offset, first - offset);
        inode.zeroRange(last, end - last);
        inode.flushAndInvalidate(first, last);
        fs.files().fallocate(inode, mode, first, last - first);
    }

    @Override
    public void unshare(long offset, long length) throws IOException {
        ensureOpen();
        fs.require(Capability.COPY_ON_WRITE, "unshare");
        mayChange("unshare", true);
        inode.unshare(offset, length);
    }

    @Override
    public void cloneRange(IomapFile source, long srcOffset, long dstOffset, long length) throws IOException {
        ensureOpen();
        fs.require(Capability.CLONE, "clone");
        if (!(source instanceof CoreFile src) || src.fs != fs) {
            throw new InvalidRangeException("clone source must be an open file of the same filesystem");
        }
        src.ensureOpen();
        mayChange("clone", true);
        CloneRange.clone(fs.files(), src.inode, srcOffset, inode, dstOffset, length);
    }

    @Override
    public void fsync() throws IOException {
        sync(false);
    }

    @Override
    public void fdatasync() throws IOException {
        sync(true);
    }

    private void sync(boolean dataOnly) throws IOException {
        ensureOpen();
        try {
            inode.writeAndWait(0, Long.MAX_VALUE);
            fs.files().fsync(inode, dataOnly);
        } catch (OutOfMemoryError e) {
            throw fs.shutDown(e);
        }
        fs.cache().device().flush();
        handle.checkWritebackError();
    }

    @Override
    public IomapFile reopen(Set<OpenFlag> flags) throws IOException {
        ensureOpen();
        return fs.reopen(inode.ino(), flags);
    }

    @Override
    public MappedFile map() {
        return new CoreMappedFile(this, inode.map());
    }

    @Override
    public FileStat stat() throws IOException {
        ensureOpen();
        return fs.stat(inode.ino());
    }

    @Override
    public void close() throws IOException {
        if (closed.compareAndSet(false, true)) {
            fs.released(inode.ino());
        }
    }
}
