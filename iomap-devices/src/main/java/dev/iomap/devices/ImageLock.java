package dev.iomap.devices;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.iomap.device.DeviceBusyException;
import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.Charset;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * The lock a {@link FileBlockDevice} holds on its image file for as long as it is open: exclusive for
 * a device opened for writing, shared for one opened read-only, so that any number of read-only
 * devices may share an image but a writer has it alone.
 *
 * <p>On Linux (x86_64 and aarch64) it is an <em>open file description</em> lock, as virtual machine
 * monitors lock disk images: {@code fcntl(F_OFD_SETLK)} on the whole file, {@code F_WRLCK} or
 * {@code F_RDLCK}, through a descriptor of its own that this class opens with {@code open(2)} and
 * keeps until {@link #close()}. Such a lock belongs to that descriptor, not to the process: it
 * conflicts with every other lock on the file, from another descriptor of this process as from
 * another process, and it goes only when its own descriptor is closed, never because the process
 * closes some other channel on the file. A conflict is found at once (the call does not wait).
 *
 * <p>Elsewhere, or if the kernel refuses open file description locks ({@code EINVAL}: a kernel
 * before 3.15), or if native access is denied to this module, it falls back to a {@link FileLock}
 * on the device's channel: an fcntl record lock, owned by the process, with its two weaknesses:
 * closing any other channel this process has on the file drops it for other processes, and two
 * devices of this process conflict only through the JDK's own bookkeeping
 * ({@link OverlappingFileLockException}).
 *
 * <p>Either lock is advisory: it keeps out whoever asks for an fcntl lock (iomap4j devices, QEMU,
 * older iomap4j versions with their record locks), not a program that writes the file without
 * asking, nor one that takes a {@code flock(2)} lock, a kind of its own.
 *
 * <p><b>Cluster members</b> ({@link #acquireClusterMember}): the devices of the nodes of a cluster
 * filesystem (gfs2-like with {@code --cluster}) all write one image, and must keep out everybody else.
 * Such a lock is two open file description locks on one descriptor: {@code F_RDLCK} on bytes 0 to
 * {@link #CLUSTER_BASE} (which conflicts with an exclusive lock, and with no other member's), and
 * {@code F_WRLCK} on the one byte {@code CLUSTER_BASE + k} for the first {@code k} no other member
 * holds (which conflicts with a read-only device's whole-file {@code F_RDLCK}, and with no other
 * member's byte). So members share the image with each other only: a mount of its own, {@code mkfs},
 * {@code fsck} and {@code stat} are refused while one is there, and a member while they are. The
 * locked bytes lie far past the end of any image. There is no fallback for it: where open file
 * description locks are not used, a cluster member's open is refused.
 * Thread-safe; {@link #close()} is idempotent.
 */
final class ImageLock implements Closeable {
    private static final System.Logger LOG = System.getLogger(ImageLock.class.getName());

    /** Linux {@code <fcntl.h>} values, the same on x86_64 and aarch64. */
    static final int F_OFD_GETLK = 36;
    static final int F_OFD_SETLK = 37;
    static final short F_RDLCK = 0;
    static final short F_WRLCK = 1;
    static final short F_UNLCK = 2;
    private static final short SEEK_SET = 0;
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int ENOENT = 2;
    private static final int EAGAIN = 11;
    private static final int EACCES = 13;
    private static final int EINVAL = 22;

    /** Where a cluster member's read lock ends and the bytes of its write locks start: past any image. */
    static final long CLUSTER_BASE = 1L << 62;
    /** How many cluster members may share an image at once. */
    static final int CLUSTER_MEMBERS = 4096;

    /**
     * {@code struct flock} of x86_64 and aarch64 glibc and musl: two shorts, padding to the 8-byte
     * {@code off_t}s, the {@code pid_t} and padding to a multiple of 8; 32 bytes.
     */
    static final StructLayout FLOCK = MemoryLayout.structLayout(
            JAVA_SHORT.withName("l_type"),
            JAVA_SHORT.withName("l_whence"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("l_start"),
            JAVA_LONG.withName("l_len"),
            JAVA_INT.withName("l_pid"),
            MemoryLayout.paddingLayout(4));
    private static final VarHandle L_TYPE = field("l_type");
    private static final VarHandle L_WHENCE = field("l_whence");
    private static final VarHandle L_START = field("l_start");
    private static final VarHandle L_LEN = field("l_len");
    private static final VarHandle L_PID = field("l_pid");

    /** The C library calls, or null where open file description locks are not used. */
    private static final Libc LIBC = Libc.load();

    private final Path path;
    private final boolean shared;
    /** Whether this is a cluster member's lock ({@link #acquireClusterMember}). */
    private final boolean clusterMember;
    /** The descriptor holding the open file description lock; -1 for a {@link FileLock} or once closed. */
    private int fd;
    /** The fallback lock; null for an open file description lock. */
    private final FileLock fileLock;

    private ImageLock(Path path, boolean shared, int fd, FileLock fileLock) {
        this(path, shared, false, fd, fileLock);
    }

    private ImageLock(Path path, boolean shared, boolean clusterMember, int fd, FileLock fileLock) {
        this.path = path;
        this.shared = shared;
        this.clusterMember = clusterMember;
        this.fd = fd;
        this.fileLock = fileLock;
    }

    /**
     * Locks the whole of {@code path}, without waiting.
     *
     * @param path the image, already opened as {@code channel}
     * @param channel the device's channel on it, which the fallback lock is taken on; it must stay
     *     open while the lock is held, and be readable for a shared lock, writable for an exclusive one
     * @param shared a shared (read) lock for a read-only device, else an exclusive (write) lock
     * @return the lock, which the caller must close after the device's channels
     * @throws DeviceBusyException if another device, in this process or another, holds a conflicting
     *     lock: one line naming the image and, where it can be told, whether the holder writes
     * @throws IOException if the file cannot be opened for the lock, or was replaced meanwhile
     */
    static ImageLock acquire(Path path, FileChannel channel, boolean shared) throws IOException {
        if (LIBC != null) {
            ImageLock lock = LIBC.lock(path, shared);
            if (lock != null) {
                return lock;
            }
        }
        return fileLock(path, channel, shared);
    }

    /**
     * Locks {@code path} for one cluster member (see the class comment), without waiting.
     *
     * @param path the image, opened for reading and writing by the device
     * @return the lock, which the caller must close after the device's channels
     * @throws DeviceBusyException if a device that is not a member has the image open (or
     *     {@link #CLUSTER_MEMBERS} members do)
     * @throws dev.iomap.api.NotSupportedException where open file description locks are not used
     * @throws IOException if the file cannot be opened for the lock, or was replaced meanwhile
     */
    static ImageLock acquireClusterMember(Path path) throws IOException {
        ImageLock lock = LIBC == null ? null : LIBC.lockClusterMember(path);
        if (lock == null) {
            throw new dev.iomap.api.NotSupportedException("sharing " + path + " between cluster nodes needs open"
                    + " file description locks (F_OFD_SETLK: Linux 3.15 or later on x86_64 or aarch64, native"
                    + " access enabled)");
        }
        return lock;
    }

    /** @return whether this is a cluster member's lock (shared with other members, for writing) */
    boolean isClusterMember() {
        return clusterMember;
    }

    /** @return whether the lock is an open file description lock (false: the {@link FileLock} fallback) */
    boolean isOpenFileDescriptionLock() {
        return fileLock == null;
    }

    /** @return whether the lock is shared (a read-only device's) */
    boolean isShared() {
        return shared;
    }

    /**
     * Releases the lock: closes its descriptor (the fallback lock is released here too, and anyway
     * when its channel closes). Idempotent.
     *
     * @throws IOException if the descriptor cannot be closed
     */
    @Override
    public synchronized void close() throws IOException {
        if (fileLock != null) {
            if (fileLock.isValid()) {
                fileLock.release();
            }
            return;
        }
        if (fd < 0) {
            return;
        }
        int closing = fd;
        fd = -1;
        Objects.requireNonNull(LIBC, "an open file description lock without the C library");
        LIBC.close(closing, path);
    }

    @Override
    public String toString() {
        return "ImageLock[" + path + ", " + (clusterMember ? "cluster member" : shared ? "shared" : "exclusive") + ", "
                + (fileLock == null ? "open file description" : "fcntl record (FileLock)") + "]";
    }

    /** The fallback: a {@link FileLock} on {@code channel}; package-private for the test of its weakness. */
    static ImageLock fileLock(Path path, FileChannel channel, boolean shared) throws IOException {
        FileLock lock;
        try {
            lock = channel.tryLock(0, Long.MAX_VALUE, shared);
        } catch (OverlappingFileLockException e) {
            throw new DeviceBusyException(path + " is in use: this process already has it open as a"
                    + " device (mounted, or being formatted or checked)", e);
        }
        if (lock == null) {
            throw new DeviceBusyException(path + " is in use by another process (mounted, or being"
                    + " formatted or checked); stop it first");
        }
        return new ImageLock(path, shared, -1, lock);
    }

    /**
     * @param holder the lock that conflicts, as {@code F_OFD_GETLK} reported it: {@link #F_RDLCK},
     *     {@link #F_WRLCK}, or {@link #F_UNLCK} if it went meanwhile or could not be told
     * @param pid the holder's process for a classic fcntl record lock, else -1 or 0
     * @return the one-line message of a refused open
     */
    static String busyMessage(Path path, short holder, int pid) {
        return busyMessage(path, holder, pid, false);
    }

    /**
     * @param clusterMember whether the conflicting lock is a cluster member's (by its range)
     * @return the one-line message of a refused open
     */
    static String busyMessage(Path path, short holder, int pid, boolean clusterMember) {
        String process = pid > 0 ? " (process " + pid + ")" : "";
        if (clusterMember) {
            return path + " is in use: a cluster node has it mounted" + process + " (iomap mount --cluster),"
                    + " in this process or another; unmount every node first";
        }
        return switch (holder) {
            case F_WRLCK -> path + " is in use: another device has it open for writing" + process
                    + " (mounted, or being formatted), in this process or another; stop that first";
            case F_RDLCK -> path + " is in use: another device has it open read-only" + process
                    + " (being checked), in this process or another; wait for that to finish";
            default -> path + " is in use by another device, in this process or another (mounted, or"
                    + " being formatted or checked); stop it first";
        };
    }

    private static VarHandle field(String name) {
        return FLOCK.varHandle(MemoryLayout.PathElement.groupElement(name));
    }

    /** Fills {@code flock} for the whole file: {@code type} from offset 0 to the end, for ever. */
    static void wholeFile(MemorySegment flock, short type) {
        flock.fill((byte) 0);
        L_TYPE.set(flock, 0L, type);
        L_WHENCE.set(flock, 0L, SEEK_SET);
        L_START.set(flock, 0L, 0L);
        L_LEN.set(flock, 0L, 0L);
        L_PID.set(flock, 0L, 0);
    }

    /** Fills {@code flock} for {@code length} bytes from {@code start} ({@code length} 0: to the end, for ever). */
    static void range(MemorySegment flock, short type, long start, long length) {
        wholeFile(flock, type);
        L_START.set(flock, 0L, start);
        L_LEN.set(flock, 0L, length);
    }

    /** @return whether the lock {@code F_OFD_GETLK} reported in {@code flock} is a cluster member's */
    static boolean isClusterMemberRange(MemorySegment flock) {
        long start = (long) L_START.get(flock, 0L);
        long length = (long) L_LEN.get(flock, 0L);
        return start >= CLUSTER_BASE || (start == 0 && length == CLUSTER_BASE);
    }

    /** @return the {@code l_type} of a {@code struct flock} */
    static short type(MemorySegment flock) {
        return (short) L_TYPE.get(flock, 0L);
    }

    /** @return the {@code l_pid} of a {@code struct flock} */
    static int pid(MemorySegment flock) {
        return (int) L_PID.get(flock, 0L);
    }

    /** {@code open}, {@code fcntl} and {@code close} of the C library, with {@code errno}. */
    private record Libc(MethodHandle open, MethodHandle fcntl, MethodHandle close, StructLayout callState,
            VarHandle errno, Charset fileNames) {

        /**
         * @return the calls, or null where they are not to be used: not Linux, not x86_64 or aarch64
         *     (whose {@code struct flock} and constants this class knows), or native access denied
         */
        static Libc load() {
            NativeCalls calls = NativeCalls.load("image locks are FileLocks", System.Logger.Level.WARNING);
            if (calls == null) {
                return null;
            }
            MethodHandle fcntl = calls.downcall("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS),
                    Linker.Option.firstVariadicArg(2));
            return new Libc(calls.open(), fcntl, calls.close(), calls.callState(), calls.errno(), calls.fileNames());
        }

        /**
         * @return the lock, or null if the kernel refuses open file description locks ({@code EINVAL})
         * @throws DeviceBusyException if a conflicting lock is held
         */
        ImageLock lock(Path path, boolean shared) throws IOException {
            int fd = openForLock(path, shared);
            boolean locked = false;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(callState);
                MemorySegment flock = arena.allocate(FLOCK);
                wholeFile(flock, shared ? F_RDLCK : F_WRLCK);
                int result = (int) fcntl.invokeExact(state, fd, F_OFD_SETLK, flock);
                if (result == 0) {
                    checkSameFile(path, fd);
                    locked = true;
                    return new ImageLock(path, shared, fd, null);
                }
                int error = (int) errno.get(state, 0L);
                if (error == EINVAL) {
                    LOG.log(System.Logger.Level.DEBUG, "F_OFD_SETLK refused (EINVAL): FileLock on " + path);
                    return null;
                }
                if (error == EAGAIN || error == EACCES) {
                    throw busy(path, fd, state, flock, shared ? F_RDLCK : F_WRLCK);
                }
                throw new IOException("cannot lock " + path + ": fcntl(F_OFD_SETLK) failed, errno " + error);
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("fcntl downcall failed", e);
            } finally {
                if (!locked) {
                    close(fd, path);
                }
            }
        }

        /**
         * @param wanted the type whose whole-file lock conflicts: {@code F_RDLCK} finds only write
         *     locks, {@code F_WRLCK} any lock
         * @return the refusal, naming the holder {@code F_OFD_GETLK} finds
         */
        private DeviceBusyException busy(Path path, int fd, MemorySegment state, MemorySegment flock, short wanted)
                throws Throwable {
            wholeFile(flock, wanted);
            int asked = (int) fcntl.invokeExact(state, fd, F_OFD_GETLK, flock);
            if (asked != 0) {
                return new DeviceBusyException(busyMessage(path, F_UNLCK, -1));
            }
            return new DeviceBusyException(busyMessage(path, type(flock), pid(flock), isClusterMemberRange(flock)));
        }

        /**
         * @return a cluster member's lock (see the class comment), or null if the kernel refuses open file
         *     description locks ({@code EINVAL})
         * @throws DeviceBusyException if a device that is not a member holds the image
         */
        ImageLock lockClusterMember(Path path) throws IOException {
            int fd = openForLock(path, false);
            boolean locked = false;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(callState);
                MemorySegment flock = arena.allocate(FLOCK);
                range(flock, F_RDLCK, 0, CLUSTER_BASE);
                if ((int) fcntl.invokeExact(state, fd, F_OFD_SETLK, flock) != 0) {
                    int error = (int) errno.get(state, 0L);
                    if (error == EINVAL) {
                        return null;
                    }
                    if (error == EAGAIN || error == EACCES) {
                        throw busy(path, fd, state, flock, F_RDLCK);
                    }
                    throw new IOException("cannot lock " + path + ": fcntl(F_OFD_SETLK) failed, errno " + error);
                }
                for (int k = 0; k < CLUSTER_MEMBERS; k++) {
                    range(flock, F_WRLCK, CLUSTER_BASE + k, 1);
                    if ((int) fcntl.invokeExact(state, fd, F_OFD_SETLK, flock) == 0) {
                        checkSameFile(path, fd);
                        locked = true;
                        return new ImageLock(path, false, true, fd, null);
                    }
                    int error = (int) errno.get(state, 0L);
                    if (error != EAGAIN && error != EACCES) {
                        throw new IOException("cannot lock " + path + ": fcntl(F_OFD_SETLK) failed, errno " + error);
                    }
                    range(flock, F_WRLCK, CLUSTER_BASE + k, 1);
                    if ((int) fcntl.invokeExact(state, fd, F_OFD_GETLK, flock) == 0 && type(flock) == F_RDLCK) {
                        throw new DeviceBusyException(busyMessage(path, F_RDLCK, pid(flock)));
                    }
                }
                throw new DeviceBusyException(path + " is in use by " + CLUSTER_MEMBERS + " cluster nodes already");
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("fcntl downcall failed", e);
            } finally {
                if (!locked) {
                    close(fd, path);
                }
            }
        }

        /** @return a new descriptor of {@code path}: read-only for a shared lock, else read-write */
        private int openForLock(Path path, boolean shared) throws IOException {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(callState);
                MemorySegment name = arena.allocateFrom(path.toString(), fileNames);
                int flags = (shared ? O_RDONLY : O_RDWR) | O_CLOEXEC;
                int fd = (int) open.invokeExact(state, name, flags, 0);
                if (fd >= 0) {
                    return fd;
                }
                int error = (int) errno.get(state, 0L);
                throw switch (error) {
                    case ENOENT -> new NoSuchFileException(path.toString());
                    case EACCES -> new AccessDeniedException(path.toString());
                    default -> new IOException("cannot open " + path + " to lock it: errno " + error);
                };
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("open downcall failed", e);
            }
        }

        /**
         * Checks that the descriptor is the file the path names now (the device's channel opened it
         * by the same path just before): not so if the file was replaced in between, or if the name
         * did not survive the trip through a Java string. Skipped where {@code /proc} cannot tell.
         */
        private static void checkSameFile(Path path, int fd) throws IOException {
            Map<String, Object> named;
            Map<String, Object> locked;
            try {
                named = Files.readAttributes(path, "unix:dev,ino");
                locked = Files.readAttributes(Path.of("/proc/self/fd/" + fd), "unix:dev,ino");
            } catch (UnsupportedOperationException | IOException e) {
                return;
            }
            if (!named.equals(locked)) {
                throw new IOException("cannot lock " + path + ": the file it names changed while it was being"
                        + " opened, or its name cannot be passed to open(2); try again");
            }
        }

        void close(int fd, Path path) throws IOException {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(callState);
                int result = (int) close.invokeExact(state, fd);
                if (result != 0) {
                    throw new IOException("closing the lock descriptor of " + path + " failed: errno "
                            + (int) errno.get(state, 0L));
                }
            } catch (IOException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("close downcall failed", e);
            }
        }
    }
}
