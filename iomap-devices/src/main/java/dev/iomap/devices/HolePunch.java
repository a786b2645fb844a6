package dev.iomap.devices;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Holes punched in an image file: {@code fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)} on a
 * descriptor of its own (the JDK's {@code FileChannel} has no such call), so that a discard gives the
 * host's filesystem the space back, as it does on a thin-provisioned disk, instead of writing zeroes
 * that allocate it. The descriptor is opened at the first punch and closed with this object.
 *
 * <p>Thread-safe: punches are serialized; {@link #close()} waits for the one in progress. Where the C
 * library is not at hand (not Linux, native access denied) or the file's filesystem cannot punch holes
 * ({@code EOPNOTSUPP}), {@link #punch} answers false and the caller writes zeroes instead.
 */
final class HolePunch implements Closeable {
    private static final int O_WRONLY = 1;
    private static final int O_CLOEXEC = 0x80000;
    private static final int EINTR = 4;
    private static final int EOPNOTSUPP = 95;
    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_PUNCH_HOLE = 0x02;

    /** The C library calls, or null where they are not to be used. */
    private static final NativeCalls CALLS = NativeCalls.load("discards write zeroes", System.Logger.Level.DEBUG);
    private static final MethodHandle FALLOCATE = CALLS == null ? null
            : CALLS.downcall("fallocate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));

    private final Path path;
    /** The descriptor: 0 before the first punch, -1 if it cannot be had or once closed. */
    private int fd;
    /** Whether the file's filesystem refused a punch as unsupported: the caller writes zeroes from then on. */
    private boolean unsupported;

    /** @param path the image file, which exists and may be written */
    HolePunch(Path path) {
        this.path = path;
    }

    /**
     * Deallocates {@code [position, position + length)} of the file and keeps its size: later reads
     * return zeroes.
     *
     * @param position file offset
     * @param length bytes, at least 0
     * @return true if punched; false if it cannot be done here (nothing was done)
     * @throws IOException if the kernel refuses for another reason (the message names the file, the
     *     range and the errno), or this object is closed
     */
    synchronized boolean punch(long position, long length) throws IOException {
        if (CALLS == null || unsupported) {
            return false;
        }
        if (length == 0) {
            return true;
        }
        if (fd == 0) {
            fd = openFile();
        }
        if (fd < 0) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALLS.callState());
            while (true) {
                int result = (int) FALLOCATE.invokeExact(state, fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, position,
                        length);
                if (result == 0) {
                    return true;
                }
                int error = (int) CALLS.errno().get(state, 0L);
                if (error == EINTR) {
                    continue;
                }
                if (error == EOPNOTSUPP) {
                    unsupported = true;
                    return false;
                }
                throw new IOException("punching a hole of " + length + " bytes at " + position + " in " + path
                        + " failed: errno " + error);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("fallocate downcall failed", e);
        }
    }

    /** @return a new write-only descriptor of the file, or -1 if the kernel refused it */
    private int openFile() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALLS.callState());
            MemorySegment name = arena.allocateFrom(path.toString(), CALLS.fileNames());
            return (int) CALLS.open().invokeExact(state, name, O_WRONLY | O_CLOEXEC, 0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("open downcall failed", e);
        }
    }

    /** Closes the descriptor, if one was opened. Idempotent. */
    @Override
    public synchronized void close() throws IOException {
        int closing = fd;
        fd = -1;
        if (closing <= 0) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALLS.callState());
            if ((int) CALLS.close().invokeExact(state, closing) != 0) {
                throw new IOException("closing the hole-punching descriptor of " + path + " failed: errno "
                        + (int) CALLS.errno().get(state, 0L));
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("close downcall failed", e);
        }
    }
}
