package dev.iomap.nio;

import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.NonReadableChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link FileChannel} over an open {@link IomapFile}: reads and writes go through the mount's page
 * cache; {@link #force} is fsync or fdatasync.
 *
 * <p>Thread-safe: operations that use the channel's position are serialised; positional reads and
 * writes are not. In append mode the file is open with {@link dev.iomap.api.OpenFlag#APPEND}: each
 * write goes to the end of the file as the filesystem knows it when the write runs, atomically against
 * writers through other channels and other cluster nodes. {@link #map}, {@link #lock} and {@link #tryLock} throw
 * {@link UnsupportedOperationException}. Interrupting a thread does not close the channel. After
 * {@link #close()} every operation throws {@link ClosedChannelException}.
 */
final class IomapFileChannel extends FileChannel {
    private static final int TRANSFER_CHUNK = 1 << 20;

    private final IomapFile file;
    private final OpenFlags flags;
    private final AfterClose onClose;
    private final ReentrantLock positionLock = new ReentrantLock();
    private long position;

    /**
     * @param file the open file; closed with the channel
     * @param flags how it was opened
     * @param onClose run after the file is closed (delete on close, bookkeeping)
     */
    IomapFileChannel(IomapFile file, OpenFlags flags, AfterClose onClose) {
        this.file = file;
        this.flags = flags;
        this.onClose = onClose;
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    private void ensureReadable() throws ClosedChannelException {
        ensureOpen();
        if (!flags.read()) {
            throw new NonReadableChannelException();
        }
    }

    private void ensureWritable() throws ClosedChannelException {
        ensureOpen();
        if (!flags.write()) {
            throw new NonWritableChannelException();
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        ensureReadable();
        positionLock.lock();
        try {
            int n = readAt(dst, position);
            if (n > 0) {
                position += n;
            }
            return n;
        } finally {
            positionLock.unlock();
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        ensureReadable();
        positionLock.lock();
        try {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                int n = readAt(dsts[i], position);
                if (n < 0) {
                    return total == 0 ? -1 : total;
                }
                position += n;
                total += n;
                if (dsts[i].hasRemaining()) {
                    break;
                }
            }
            return total;
        } finally {
            positionLock.unlock();
        }
    }

    /** Reads until {@code dst} is full or EOF; -1 if nothing was left to read. */
    private int readAt(ByteBuffer dst, long at) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        int total = 0;
        // A direct read is served whole or ends at EOF: never continued at an unaligned offset.
        boolean direct = flags.direct();
        while (dst.hasRemaining()) {
            int n = file.read(at + total, dst);
            if (n <= 0) {
                break;
            }
            total += n;
            if (direct) {
                break;
            }
        }
        return total == 0 ? -1 : total;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        ensureWritable();
        positionLock.lock();
        try {
            int n = writeAt(src, position);   // an append-mode file writes at its end, whatever the position
            position = flags.append() ? file.size() : position + n;
            return n;
        } finally {
            positionLock.unlock();
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        long total = 0;
        for (int i = offset; i < offset + length; i++) {
            total += write(srcs[i]);
        }
        return total;
    }

    private int writeAt(ByteBuffer src, long at) throws IOException {
        int n = file.write(at, src);
        if (flags.sync()) {
            force(!flags.dataSyncOnly());
        }
        return n;
    }

    @Override
    public long position() throws IOException {
        ensureOpen();
        positionLock.lock();
        try {
            return flags.append() ? file.size() : position;
        } finally {
            positionLock.unlock();
        }
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
        if (newPosition < 0) {
            throw new IllegalArgumentException("negative position " + newPosition);
        }
        ensureOpen();
        positionLock.lock();
        try {
            position = newPosition;
            return this;
        } finally {
            positionLock.unlock();
        }
    }

    @Override
    public long size() throws IOException {
        ensureOpen();
        return file.size();
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        if (size < 0) {
            throw new IllegalArgumentException("negative size " + size);
        }
        ensureWritable();
        positionLock.lock();
        try {
            if (size < file.size()) {
                file.truncate(size);
            }
            if (position > size) {
                position = size;
            }
            return this;
        } finally {
            positionLock.unlock();
        }
    }

    @Override
    public void force(boolean metaData) throws IOException {
        ensureOpen();
        if (metaData) {
            file.fsync();
        } else {
            file.fdatasync();
        }
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
        checkTransfer(position, count, target);
        ensureReadable();
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(count, TRANSFER_CHUNK));
        long done = 0;
        while (done < count) {
            buffer.clear().limit((int) Math.min(buffer.capacity(), count - done));
            int n = file.read(position + done, buffer);
            if (n <= 0) {
                break;
            }
            buffer.flip();
            while (buffer.hasRemaining() && target.write(buffer) > 0) {
                // a non-blocking target may take less; what it took is what was transferred
            }
            done += buffer.position();
            if (buffer.hasRemaining()) {
                break;
            }
        }
        return done;
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
        checkTransfer(position, count, src);
        ensureWritable();
        if (position > file.size()) {
            return 0;
        }
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(count, TRANSFER_CHUNK));
        long done = 0;
        while (done < count) {
            buffer.clear().limit((int) Math.min(buffer.capacity(), count - done));
            int n = src.read(buffer);
            if (n <= 0) {
                break;
            }
            buffer.flip();
            done += writeAt(buffer, position + done);
        }
        return done;
    }

    private static void checkTransfer(long position, long count, Object channel) {
        Objects.requireNonNull(channel, "channel");
        if (position < 0 || count < 0) {
            throw new IllegalArgumentException("negative position " + position + " or count " + count);
        }
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        if (position < 0) {
            throw new IllegalArgumentException("negative position " + position);
        }
        ensureReadable();
        return readAt(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        if (position < 0) {
            throw new IllegalArgumentException("negative position " + position);
        }
        ensureWritable();
        return writeAt(src, position);
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) {
        throw new UnsupportedOperationException("iomap file channels cannot be memory-mapped; read and write"
                + " through the channel, or use IomapFile.map() of the iomap API");
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) {
        throw new UnsupportedOperationException("iomap file channels have no file locks");
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) {
        throw new UnsupportedOperationException("iomap file channels have no file locks");
    }

    @Override
    protected void implCloseChannel() throws IOException {
        try {
            file.close();
        } finally {
            onClose.closed(this);
        }
    }

    /** What a channel does once its file is closed. */
    @FunctionalInterface
    interface AfterClose {
        /**
         * @param channel the channel just closed
         * @throws IOException if it fails (the channel is closed anyway)
         */
        void closed(IomapFileChannel channel) throws IOException;
    }
}
