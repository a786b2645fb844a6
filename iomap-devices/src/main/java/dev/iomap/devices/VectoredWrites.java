package dev.iomap.devices;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Gathering positional writes ({@code pwritev(2)}) to an image opened with {@code O_DIRECT}, through a
 * descriptor of its own: an ioend of several folios reaches the file as one request, straight from
 * the folios' memory, with no copy through a bounce buffer. The JDK has no positional gathering write
 * (a {@link java.nio.channels.FileChannel}'s gathering write uses the channel's shared position), and
 * a copy costs a core's time per byte written on a machine with two.
 *
 * <p>{@link #open} opens the file again by its path ({@code O_WRONLY | O_DIRECT | O_CLOEXEC}); it
 * returns null where that is not to be used: not Linux on x86_64 or aarch64 (whose {@code O_DIRECT}
 * values this class knows), native access denied to this module, or the kernel refusing the open.
 * The caller then copies through a bounce buffer as before. A sync of any other descriptor of the
 * file ({@code fdatasync}) covers what was written through this one: syncs are per file, not per
 * descriptor.
 *
 * <p>{@link #write} takes a request only if every buffer is a direct buffer whose address and
 * remaining length are multiples of the alignment {@code O_DIRECT} needs; otherwise it writes
 * nothing and returns false. A request of more than {@value #IOV_MAX} buffers is written in calls of
 * at most that many; a short write is continued where it stopped; an interrupted call
 * ({@code EINTR}) is repeated. A downcall is not interruptible, so an interrupt of the writing
 * thread neither cuts a write short nor closes anything.
 *
 * <p>Thread-safe: writes run concurrently; {@link #close()} waits for the writes in progress and
 * then closes the descriptor, so that no write can reach a descriptor number the process has
 * reused. Writes after close fail with {@link IOException}. Each writing thread keeps a small
 * array of {@code struct iovec} for its life.
 */
final class VectoredWrites implements Closeable {
    private static final System.Logger LOG = System.getLogger(VectoredWrites.class.getName());
    /** The most buffers one {@code pwritev} takes ({@code IOV_MAX} on Linux). */
    static final int IOV_MAX = 1024;
    /** The most bytes one call asks for: below {@code MAX_RW_COUNT}, the kernel's cap per call. */
    static final long MAX_CALL_BYTES = 1L << 30;
    private static final int O_WRONLY = 1;
    private static final int O_CLOEXEC = 0x80000;
    private static final int EINTR = 4;

    /** {@code struct iovec}: a base address and a length, 16 bytes on 64-bit Linux. */
    private static final StructLayout IOVEC = MemoryLayout.structLayout(
            ADDRESS.withName("iov_base"), JAVA_LONG.withName("iov_len"));
    private static final long IOVEC_SIZE = IOVEC.byteSize();
    private static final long BASE_OFFSET = IOVEC.byteOffset(MemoryLayout.PathElement.groupElement("iov_base"));
    private static final long LENGTH_OFFSET = IOVEC.byteOffset(MemoryLayout.PathElement.groupElement("iov_len"));

    /** Each writing thread's iovec array and call state, grown as needed, kept for the thread's life. */
    private static final ThreadLocal<Scratch> SCRATCH = new ThreadLocal<>();

    /** The C library calls, or null where this class is not used. */
    private static final Libc LIBC = Libc.load();

    private final Path path;
    private final int alignment;
    /** Writes hold it shared, {@link #close()} exclusively. */
    private final ReentrantReadWriteLock closing = new ReentrantReadWriteLock();
    /** The descriptor; -1 once closed. Guarded by {@link #closing}. */
    private int fd;
    /** {@code pwritev} calls made, for tests and measurements. */
    private final LongAdder calls = new LongAdder();

    private VectoredWrites(Path path, int alignment, int fd) {
        this.path = path;
        this.alignment = alignment;
        this.fd = fd;
    }

    /**
     * Opens {@code path} for gathering direct writes.
     *
     * @param path the image file, which exists
     * @param alignment what {@code O_DIRECT} needs of memory, positions and lengths on its filesystem,
     *     a power of two
     * @return the writer, or null where gathering direct writes are not to be used (see the class
     *     comment); the caller closes it
     */
    static VectoredWrites open(Path path, int alignment) {
        if (Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        if (LIBC == null) {
            return null;
        }
        int fd = LIBC.open(path);
        return fd < 0 ? null : new VectoredWrites(path, alignment, fd);
    }

    /**
     * Writes the remaining bytes of {@code srcs}, one after the other, at {@code position}, if every
     * buffer can go to the kernel as it is; their positions are not changed.
     *
     * @param position file offset, a multiple of the alignment
     * @return true if written; false if a buffer is not a direct one, or its address or remaining
     *     length not aligned (nothing was written then)
     * @throws IOException if the kernel refuses the write (the message names the file, the range and
     *     the errno), writes nothing, or this writer is closed
     */
    boolean write(long position, List<ByteBuffer> srcs) throws IOException {
        int count = srcs.size();
        Scratch scratch = scratch(count);
        MemorySegment iovecs = scratch.iovecs;
        long total = 0;
        for (int i = 0; i < count; i++) {
            ByteBuffer buffer = srcs.get(i);
            int length = buffer.remaining();
            if (!buffer.isDirect() || length % alignment != 0) {
                return false;
            }
            long address = MemorySegment.ofBuffer(buffer).address();
            if (address % alignment != 0) {
                return false;
            }
            iovecs.set(JAVA_LONG, i * IOVEC_SIZE + BASE_OFFSET, address);
            iovecs.set(JAVA_LONG, i * IOVEC_SIZE + LENGTH_OFFSET, length);
            total += length;
        }
        var shared = closing.readLock();
        shared.lock();
        try {
            if (fd < 0) {
                throw new IOException("gathering writes to " + path + " are closed");
            }
            writeAll(scratch, count, position, total);
        } finally {
            shared.unlock();
        }
        return true;
    }

    /** Writes the {@code count} iovecs of {@code scratch}, {@code total} bytes, at {@code position}. */
    private void writeAll(Scratch scratch, int count, long position, long total) throws IOException {
        MemorySegment iovecs = scratch.iovecs;
        int first = 0;
        long done = 0;
        while (done < total) {
            int batch = 0;
            long batchBytes = 0;
            while (first + batch < count && batch < IOV_MAX) {
                long length = iovecs.get(JAVA_LONG, (first + batch) * IOVEC_SIZE + LENGTH_OFFSET);
                if (batch > 0 && batchBytes + length > MAX_CALL_BYTES) {
                    break;
                }
                batchBytes += length;
                batch++;
            }
            long written = LIBC.pwritev(scratch.state, fd, iovecs.asSlice(first * IOVEC_SIZE), batch,
                    position + done);
            calls.increment();
            if (written < 0) {
                int error = LIBC.errno(scratch.state);
                if (error == EINTR) {
                    continue;
                }
                throw new IOException("pwritev of " + (total - done) + " bytes at " + (position + done)
                        + " to " + path + " failed: " + describe(error));
            }
            if (written == 0) {
                throw new IOException("pwritev of " + (total - done) + " bytes at " + (position + done)
                        + " to " + path + " wrote nothing");
            }
            done += written;
            first = skip(iovecs, first, written);
        }
    }

    /**
     * Moves past {@code written} bytes of the iovecs from {@code first}: whole ones are skipped, a
     * partly written one is shortened to what is left of it.
     *
     * @return the first iovec with bytes left
     */
    static int skip(MemorySegment iovecs, int first, long written) {
        int next = first;
        long left = written;
        while (left > 0) {
            long at = next * IOVEC_SIZE;
            long length = iovecs.get(JAVA_LONG, at + LENGTH_OFFSET);
            if (left < length) {
                iovecs.set(JAVA_LONG, at + BASE_OFFSET, iovecs.get(JAVA_LONG, at + BASE_OFFSET) + left);
                iovecs.set(JAVA_LONG, at + LENGTH_OFFSET, length - left);
                return next;
            }
            left -= length;
            next++;
        }
        return next;
    }

    /** @return the errno and, for the ones a write of an image meets, its name and meaning */
    static String describe(int errno) {
        String name = switch (errno) {
            case 5 -> " (EIO: input/output error)";
            case 22 -> " (EINVAL: invalid argument)";
            case 27 -> " (EFBIG: file too large)";
            case 28 -> " (ENOSPC: no space left on device)";
            case 122 -> " (EDQUOT: disk quota exceeded)";
            default -> "";
        };
        return "errno " + errno + name;
    }

    /** @return this thread's scratch, with room for at least {@code count} iovecs */
    private static Scratch scratch(int count) {
        Scratch scratch = SCRATCH.get();
        if (scratch == null || scratch.iovecs.byteSize() < count * IOVEC_SIZE) {
            int capacity = Math.max(64, Integer.highestOneBit(Math.max(1, count - 1)) << 1);
            Arena arena = Arena.ofAuto();
            scratch = new Scratch(arena.allocate(IOVEC_SIZE * capacity, 8), arena.allocate(LIBC.callState));
            SCRATCH.set(scratch);
        }
        return scratch;
    }

    /** @return how many {@code pwritev} calls were made so far */
    long calls() {
        return calls.sum();
    }

    /** Waits for the writes in progress, then closes the descriptor. Idempotent. */
    @Override
    public void close() throws IOException {
        var exclusive = closing.writeLock();
        exclusive.lock();
        try {
            if (fd < 0) {
                return;
            }
            int closed = fd;
            fd = -1;
            LIBC.close(closed, path);
        } finally {
            exclusive.unlock();
        }
    }

    /** A thread's iovec array and the call state its {@code errno} is captured in. */
    private record Scratch(MemorySegment iovecs, MemorySegment state) {}

    /** {@code open}, {@code pwritev} and {@code close} of the C library, with {@code errno}. */
    private record Libc(MethodHandle open, MethodHandle pwritev, MethodHandle close, StructLayout callState,
            VarHandle errno, int directFlag, Charset fileNames) {

        /** @return the calls, or null where they are not to be used (see the class comment) */
        static Libc load() {
            NativeCalls calls = NativeCalls.load("no gathering direct writes", System.Logger.Level.DEBUG);
            if (calls == null) {
                return null;
            }
            // O_DIRECT: 040000 on x86_64, 0200000 on arm64 (the only architectures NativeCalls loads on)
            int direct = System.getProperty("os.arch", "").equals("aarch64") ? 0x10000 : 0x4000;
            MethodHandle pwritev = calls.downcall("pwritev",
                    FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
            return new Libc(calls.open(), pwritev, calls.close(), calls.callState(), calls.errno(), direct,
                    calls.fileNames());
        }

        /** @return a new write-only direct descriptor of {@code path}, or -1 if the kernel refused it */
        int open(Path path) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(callState);
                MemorySegment name = arena.allocateFrom(path.toString(), fileNames);
                int fd = (int) open.invokeExact(state, name, O_WRONLY | directFlag | O_CLOEXEC, 0);
                if (fd < 0) {
                    LOG.log(System.Logger.Level.DEBUG, "no gathering direct writes to " + path + ": open failed, errno "
                            + (int) errno.get(state, 0L));
                }
                return fd;
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("open downcall failed", e);
            }
        }

        long pwritev(MemorySegment state, int fd, MemorySegment iovecs, int count, long position) {
            try {
                return (long) pwritev.invokeExact(state, fd, iovecs, count, position);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("pwritev downcall failed", e);
            }
        }

        int errno(MemorySegment state) {
            return (int) errno.get(state, 0L);
        }

        void close(int fd, Path path) throws IOException {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(callState);
                if ((int) close.invokeExact(state, fd) != 0) {
                    throw new IOException("closing the gathering-write descriptor of " + path
                            + " failed: errno " + (int) errno.get(state, 0L));
                }
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("close downcall failed", e);
            }
        }
    }
}
