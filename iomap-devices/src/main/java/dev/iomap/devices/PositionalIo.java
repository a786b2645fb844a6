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
 * kernel would refuse: one that is on the heap, or whose address or length is not aligned.
 *
 * <p>Thread-safe: it makes only positional channel calls and has no state of its own. Checking the
 * range is the caller's job; with {@code O_DIRECT} positions and lengths must be multiples of the
 * alignment. Errors are the channel's own {@link IOException}s, and an {@link EOFException} if the
 * file ends before a read does.
 */
final class PositionalIo {
    /** Largest bounce buffer allocated for one direct I/O, unless the alignment is larger. */
    private static final int BOUNCE_SIZE = 1 << 20;

    private final FileChannel channel;
    /** Alignment {@code O_DIRECT} needs of memory, positions and lengths; 0 without it. */
    private final int directIoAlignment;

    /**
     * @param channel the file, opened for reading and writing
     * @param directIoAlignment the alignment if the channel was opened with {@code O_DIRECT}, a
     *     power of two; 0 if it was not
     */
    PositionalIo(FileChannel channel, int directIoAlignment) {
        this.channel = channel;
        this.directIoAlignment = directIoAlignment;
    }

    /** Fills {@code dst} from {@code position}, moving its position to its limit. */
    void read(long position, ByteBuffer dst) throws IOException {
        if (usableAsItIs(dst)) {
            readFully(position, dst);
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            ByteBuffer bounce = allocateBounce(arena, dst.remaining());
            long next = position;
            while (dst.hasRemaining()) {
                bounce.clear().limit(Math.min(bounce.capacity(), dst.remaining()));
                readFully(next, bounce);
                next += bounce.flip().remaining();
                dst.put(bounce);
            }
        }
    }

    /** Writes all of {@code src} at {@code position}, moving its position to its limit. */
    void write(long position, ByteBuffer src) throws IOException {
        write(position, List.of(src));
    }

    /**
     * Writes the remaining bytes of {@code srcs}, one after the other, from {@code position}, moving
     * each one's position to its limit.
     */
    void write(long position, List<ByteBuffer> srcs) throws IOException {
        if (srcs.stream().allMatch(this::usableAsItIs)) {
            long next = position;
            for (ByteBuffer src : srcs) {
                int bytes = src.remaining();
                writeFully(next, src);
                next += bytes;
            }
            return;
        }
        long length = DeviceCounters.totalRemaining(srcs);
        try (Arena arena = Arena.ofConfined()) {
            ByteBuffer bounce = allocateBounce(arena, length);
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

    /** @return an aligned buffer of at most {@code length} bytes, a multiple of the alignment */
    private ByteBuffer allocateBounce(Arena arena, long length) {
        long size = Math.min(length, Math.max(BOUNCE_SIZE, directIoAlignment));
        return arena.allocate(size, directIoAlignment).asByteBuffer();
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
