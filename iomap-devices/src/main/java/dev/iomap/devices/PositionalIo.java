package dev.iomap.devices;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Iterator;
import java.util.List;

/**
 * Moves bytes between buffers and a file at absolute positions, looping until every byte is done.
 * For a channel opened with {@code O_DIRECT} it copies, through aligned memory, any buffer the
 * kernel would refuse: one that is on the heap, or whose address or length is not aligned. It also
 * copies a write of several buffers into one, so that it reaches the file as one request instead of
 * one per buffer: with {@code O_DIRECT} every {@code pwrite} is a device request its caller waits for
 * (on this machine's ext4 image, 128 KiB requests, an ioend of large folios written buffer by buffer,
 * moved 294 MiB/s and 1 MiB ones 834 MiB/s), and the JDK has no positional gathering write
 * ({@code pwritev}) while the channel's position is shared. Where {@link VectoredWrites} is at hand
 * (Linux), a write of several buffers the kernel can take as they are goes out through it instead:
 * one {@code pwritev} straight from the buffers, no copy. The aligned memory is one
 * {@value #BOUNCE_SIZE}-byte buffer per thread, kept for the thread's life.
 *
 * <p>Thread-safe: it makes only positional channel calls and its only state is per thread. Checking the
 * range is the caller's job; with {@code O_DIRECT} positions and lengths must be multiples of the
 * alignment. Errors are the channel's own {@link IOException}s, and an {@link EOFException} if the
 * file ends before a read does.
 */
final class PositionalIo {
    /** Bytes of each thread's bounce buffer: the largest request a copy goes out in. */
    static final int BOUNCE_SIZE = 1 << 20;
    /** Each thread's bounce buffer (device write threads, fsync callers writing inline, readers). */
    private static final ThreadLocal<ByteBuffer> BOUNCE = new ThreadLocal<>();

    private final FileChannel channel;
    /** Alignment {@code O_DIRECT} needs of memory, positions and lengths; 0 without it. */
    private final int directIoAlignment;
    /** Gathering direct writes to the same file, or null; not owned. */
    private final VectoredWrites vectored;

    /**
     * @param channel the file, opened for reading and writing
     * @param directIoAlignment the alignment if the channel was opened with {@code O_DIRECT}, a
     *     power of two; 0 if it was not
     */
    PositionalIo(FileChannel channel, int directIoAlignment) {
        this(channel, directIoAlignment, null);
    }

    /**
     * @param channel the file, opened for reading and writing
     * @param directIoAlignment the alignment if the channel was opened with {@code O_DIRECT}, a
     *     power of two; 0 if it was not
     * @param vectored gathering direct writes to the same file (only with {@code O_DIRECT}), or null
     */
    PositionalIo(FileChannel channel, int directIoAlignment, VectoredWrites vectored) {
        if (vectored != null && directIoAlignment == 0) {
            throw new IllegalArgumentException("gathering direct writes need a direct channel");
        }
        this.channel = channel;
        this.directIoAlignment = directIoAlignment;
        this.vectored = vectored;
    }

    /** Fills {@code dst} from {@code position}, moving its position to its limit. */
    void read(long position, ByteBuffer dst) throws IOException {
        if (usableAsItIs(dst)) {
            readFully(position, dst);
            return;
        }
        ByteBuffer bounce = bounce();
        long next = position;
        while (dst.hasRemaining()) {
            bounce.clear().limit(Math.min(bounce.capacity(), dst.remaining()));
            readFully(next, bounce);
            next += bounce.flip().remaining();
            dst.put(bounce);
        }
    }

    /** Writes all of {@code src} at {@code position}, moving its position to its limit. */
    void write(long position, ByteBuffer src) throws IOException {
        write(position, List.of(src));
    }

    /**
     * Writes the remaining bytes of {@code srcs}, one after the other, from {@code position}, moving
     * each one's position to its limit: each buffer as it is without {@code O_DIRECT} (a copy into the
     * host's page cache per buffer costs nothing more) and for one usable buffer, else in one
     * gathering write if every buffer is usable and {@link VectoredWrites} is at hand, else through
     * the bounce buffer, as few requests as it takes.
     */
    void write(long position, List<ByteBuffer> srcs) throws IOException {
        if (directIoAlignment == 0 || (srcs.size() == 1 && usableAsItIs(srcs.getFirst()))) {
            long next = position;
            for (ByteBuffer src : srcs) {
                int bytes = src.remaining();
                writeFully(next, src);
                next += bytes;
            }
            return;
        }
        if (vectored != null && vectored.write(position, srcs)) {
            for (ByteBuffer src : srcs) {
                src.position(src.limit());
            }
            return;
        }
        long length = DeviceCounters.totalRemaining(srcs);
        ByteBuffer bounce = bounce();
        Iterator<ByteBuffer> sources = srcs.iterator();
        ByteBuffer source = ByteBuffer.allocate(0);
        long done = 0;
        while (done < length) {
            bounce.clear().limit((int) Math.min(bounce.capacity(), length - done));
            source = fill(bounce, source, sources);
            int bytes = bounce.flip().remaining();
            writeFully(position + done, bounce);
            done += bytes;
        }
    }

    /**
     * @return this thread's bounce buffer, aligned for this channel and a multiple of its alignment
     *     long; its memory goes when the thread does
     */
    private ByteBuffer bounce() {
        ByteBuffer buffer = BOUNCE.get();
        if (buffer == null || buffer.capacity() % directIoAlignment != 0
                || buffer.alignmentOffset(0, directIoAlignment) != 0) {
            int alignment = Math.max(directIoAlignment, 4096);
            buffer = Arena.ofAuto().allocate(Math.max(BOUNCE_SIZE, alignment), alignment).asByteBuffer();
            BOUNCE.set(buffer);
        }
        return buffer;
    }

    /**
     * Copies into {@code bounce} until it is full, from {@code source} and then the next sources.
     *
     * @return the source the next fill starts from
     */
    private static ByteBuffer fill(ByteBuffer bounce, ByteBuffer source, Iterator<ByteBuffer> sources) {
        ByteBuffer current = source;
        while (bounce.hasRemaining()) {
            while (!current.hasRemaining()) {
                current = sources.next();
            }
            int bytes = Math.min(bounce.remaining(), current.remaining());
            bounce.put(current.slice(current.position(), bytes));
            current.position(current.position() + bytes);
        }
        return current;
    }

    /** @return whether the channel can take {@code buffer} without a copy */
    private boolean usableAsItIs(ByteBuffer buffer) {
        if (directIoAlignment == 0) {
            return true;
        }
        return buffer.isDirect()
                && buffer.remaining() % directIoAlignment == 0
                && MemorySegment.ofBuffer(buffer).address() % directIoAlignment == 0;
    }

    private void readFully(long position, ByteBuffer dst) throws IOException {
        long next = position;
        while (dst.hasRemaining()) {
            int bytes = channel.read(dst, next);
            if (bytes < 0) {
                throw new EOFException("the file ends at byte " + channel.size()
                        + ", before byte " + (next + dst.remaining()) + " that was to be read");
            }
            next += bytes;
        }
    }

    private void writeFully(long position, ByteBuffer src) throws IOException {
        long next = position;
        while (src.hasRemaining()) {
            next += channel.write(src, next);
        }
    }
}
