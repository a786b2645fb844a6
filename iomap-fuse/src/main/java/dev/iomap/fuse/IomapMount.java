package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.iomap.api.Capability;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceNoSpaceException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An {@link IomapFileSystem} mounted with FUSE on a directory, through libfuse 3's low-level API bound
 * with the foreign-function API ({@link Libfuse}, {@link LowLevelOps}): node ids are the file system's
 * inode numbers ({@link Nodes}), requests are served by several worker threads, each with its own
 * {@code /dev/fuse} descriptor ({@code fuse_session_loop_mt} with {@code clone_fd}).
 *
 * <p>The mount owns the file system (and, if given, its device): {@link #close()} unmounts if the
 * kernel mount is still there, waits for libfuse's loop to end, closes the files the kernel left
 * open, closes the file system (everything written back, the image left clean) and then the device.
 * An unmount from outside ({@code fusermount3 -u}, {@code umount}) ends the mount too:
 * {@link #awaitUnmounted()} returns, and {@link #close()} then finishes the job.
 *
 * <p>Needs libfuse3 (3.14 or later for the reply flags of {@link ReplyFlags}; 3.2 or later to mount),
 * {@code /dev/fuse}, Linux on amd64 or aarch64 ({@link FuseStructs}), and
 * {@code --enable-native-access=ALL-UNNAMED}. Thread-safe.
 */
public final class IomapMount implements AutoCloseable {
    private static final Duration POLL = Duration.ofMillis(100);
    /** How long {@link #close()} waits for the loop after unmounting, then again after aborting the connection. */
    static final Duration LOOP_EXIT = Duration.ofSeconds(10);
    private static final System.Logger LOG = System.getLogger(IomapMount.class.getName());

    private final Teardown teardown;
    private final Path mountPoint;
    private final Libfuse libfuse;
    private final MemorySegment session;
    private final FuseBridge bridge;
    private final ReplyFlags replyFlags;
    private final Arena upcalls;
    private final Thread loop;
    private final String connection;
    private final long kernelReadAheadBytes;
    private final CountDownLatch loopEnded;
    private final CountDownLatch closed = new CountDownLatch(1);
    private boolean closing;
    private boolean reported;
    private IOException closeFailure;

    private IomapMount(Teardown teardown, Path mountPoint, Libfuse libfuse, MemorySegment session,
            FuseBridge bridge, ReplyFlags replyFlags, Arena upcalls, Thread loop, CountDownLatch loopEnded,
            long kernelReadAheadBytes) {
        this.teardown = teardown;
        this.mountPoint = mountPoint;
        this.libfuse = libfuse;
        this.session = session;
        this.bridge = bridge;
        this.replyFlags = replyFlags;
        this.upcalls = upcalls;
        this.loop = loop;
        this.loopEnded = loopEnded;
        this.connection = MountTable.fuseDevice(readMountTable(), mountPoint.toString()).orElse(null);
        this.kernelReadAheadBytes = kernelReadAheadBytes;
    }

    private static List<String> readMountTable() {
        try {
            return MountTable.read();
        } catch (IOException e) {
            return List.of();
        }
    }

    /**
     * Mounts and returns once the kernel mount is up.
     *
     * @param fs the file system; owned by the mount from now on, unless this throws
     * @param device the file system's device, closed after it; or null
     * @param mountPoint an existing directory
     * @param options how to mount
     * @return the mount
     * @throws IOException if the mount point is not a directory or is already a FUSE mount point,
     *     libfuse3 cannot be loaded, the architecture is not one the binding knows, or mounting fails;
     *     nothing has been closed then
     */
    @SuppressWarnings("MustBeClosedChecker") // the upcall arena lives as long as the mount, which closes it
    public static IomapMount mount(IomapFileSystem fs, BlockDevice device, Path mountPoint,
            FuseMountOptions options) throws IOException {
        if (!Files.isDirectory(mountPoint)) {
            throw new NotDirectoryException(mountPoint + " (the mount point must be an existing directory)");
        }
        Path real = mountPoint.toRealPath();
        if (MountTable.isFuseMounted(real)) {
            throw new FileSystemException(real.toString(), null, "already a FUSE mount point; unmount it first"
                    + " (fusermount3 -u " + real + ")");
        }
        try {
            FuseStructs.check(System.getProperty("os.arch"));
        } catch (UnsupportedOperationException e) {
            throw new IOException(e.getMessage(), e);
        }
        Libfuse libfuse = load(options.findLibrary());
        var owner = new InodeOperations.Caller(Owner.UID, Owner.GID);
        if (options.atime().mode() == AtimePolicy.Mode.STRICT) {
            // a read the kernel's page cache serves never reaches the mount, which could not update atime
            options = options.withReadCache(false);
        }
        CacheMode cache;
        try {
            cache = CacheMode.of(options, kernelAtLeast(System.getProperty("os.version"), 6, 6));
        } catch (IllegalArgumentException e) {
            throw new IOException("mounting on " + real + ": " + e.getMessage(), e);
        }
        var bridge = new FuseBridge(fs, owner, cache, options.atime());
        var replyFlags = new ReplyFlags(cache.directIo());
        var teardown = new Teardown(bridge, fs, device);
        Arena upcalls = Arena.ofShared();
        MemorySegment session;
        boolean flagsInstalled;
        try {
            session = newSession(libfuse, new LowLevelOps(libfuse, bridge, owner, teardown::onDestroy),
                    arguments(fs, options), upcalls);
            flagsInstalled = mountSession(libfuse, session, real, replyFlags, upcalls);
        } catch (IOException | RuntimeException e) {
            upcalls.close();
            throw new IOException("mounting " + fs.adapterName() + " on " + real + " failed: " + e.getMessage(), e);
        }
        bridge.readOnlyWhen(new ReadOnlyProbe(real));
        bridge.onAttributesChanged(nodeid -> invalidateAttributes(libfuse, session, nodeid));
        bridge.onShutDown(() -> invalidateAll(libfuse, session, bridge));
        var loopEnded = new CountDownLatch(1);
        Thread loop = Thread.ofPlatform().name("iomap-fuse-loop").daemon().start(() -> runLoop(libfuse, session,
                loopEnded));
        if (flagsInstalled) {
            awaitInit(replyFlags, real);
        }
        return new IomapMount(teardown, real, libfuse, session, bridge, replyFlags, upcalls, loop, loopEnded,
                cache.directIo() && !cache.readCache() ? -1 : setReadAhead(real, options.readAheadBytes()));
    }

    /** Waits (up to {@link #LOOP_EXIT}) for the INIT reply, so that the mount is fully up when mount returns. */
    private static void awaitInit(ReplyFlags replyFlags, Path mountPoint) {
        try {
            if (!replyFlags.awaitInit(LOOP_EXIT)) {
                LOG.log(System.Logger.Level.WARNING, "the kernel has not sent FUSE_INIT to " + mountPoint + " yet");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Libfuse load(Path library) throws IOException {
        try {
            return Libfuse.load(library);
        } catch (IllegalArgumentException | IllegalStateException | UnsatisfiedLinkError e) {
            throw new IOException("cannot load libfuse3 (" + (library != null ? library : "libfuse3.so.3")
                    + "): install fuse3, or give its path; " + e.getMessage(), e);
        }
    }

    /** {@code fuse_session_new} with libfuse's command line ({@link #arguments}). */
    private static MemorySegment newSession(Libfuse libfuse, LowLevelOps ops, List<String> arguments, Arena arena)
            throws IOException {
        MemorySegment operations;
        try {
            operations = ops.operations(arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("binding the FUSE operations failed", e);
        }
        List<String> argv = new ArrayList<>();
        argv.add("iomap");
        argv.addAll(arguments);
        MemorySegment vector = arena.allocate(ADDRESS, argv.size() + 1L);
        for (int i = 0; i < argv.size(); i++) {
            vector.setAtIndex(ADDRESS, i, arena.allocateFrom(argv.get(i)));
        }
        MemorySegment args = arena.allocate(FuseStructs.ARGS);
        args.set(JAVA_INT, FuseStructs.offset(FuseStructs.ARGS, "argc"), argv.size());
        args.set(ADDRESS, FuseStructs.offset(FuseStructs.ARGS, "argv"), vector);
        MemorySegment session;
        try {
            session = (MemorySegment) libfuse.sessionNew.invokeExact(args, operations,
                    FuseStructs.LOWLEVEL_OPS.byteSize(), MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IOException("fuse_session_new failed", t);
        }
        if (session.equals(MemorySegment.NULL)) {
            throw new IOException("fuse_session_new refused the options " + arguments + " (libfuse said why above)");
        }
        return session;
    }

    /**
     * {@code fuse_session_mount}, then the reply flags' custom I/O; the session is destroyed if mounting fails.
     *
     * @return whether the reply flags are installed
     */
    private static boolean mountSession(Libfuse libfuse, MemorySegment session, Path mountPoint, ReplyFlags replyFlags,
            Arena arena) throws IOException {
        try {
            int result = (int) libfuse.sessionMount.invokeExact(session, arena.allocateFrom(mountPoint.toString()));
            if (result != 0) {
                libfuse.sessionDestroy.invokeExact(session);
                throw new IOException("fuse_session_mount failed (is /dev/fuse there, and fusermount3?)");
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("fuse_session_mount failed", t);
        }
        try {
            replyFlags.install(libfuse, session, arena);
            return true;
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING, "cannot set the reply flags libfuse 3.14 lacks (set-user-ID is"
                    + " not cleared by non-root writes, shared mmap of direct-I/O files is ENODEV)", t);
            return false;
        }
    }

    private static void runLoop(Libfuse libfuse, MemorySegment session, CountDownLatch ended) {
        try {
            int result = libfuse.loop(session, Arena.global());
            if (result != 0) {
                LOG.log(System.Logger.Level.WARNING, "the FUSE loop ended with errno " + -result);
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "the FUSE loop failed", t);
        } finally {
            ended.countDown();
        }
    }

    /** {@code fuse_lowlevel_notify_inval_inode(se, ino, -1, 0)}: the kernel drops the inode's cached attributes. */
    private static void invalidateAttributes(Libfuse libfuse, MemorySegment session, long nodeid) {
        try {
            int ignored = (int) libfuse.notifyInvalInode.invokeExact(session, nodeid, -1L, 0L);
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.DEBUG, "notify_inval_inode " + nodeid + " failed", t);
        }
    }

    /**
     * After a shutdown ({@link FuseBridge#shutDown}): drops the attributes and cached pages the kernel
     * holds of every node it knows ({@code notify_inval_inode} from offset 0, all of it), so that reads
     * it would have served from its page cache come here and fail with EIO. Dirty pages of the kernel's
     * writeback cache are written first, which fails the same way: a shutdown drops them. Runs in the
     * ioctl's request, before its reply (the session is alive until then).
     */
    private static void invalidateAll(Libfuse libfuse, MemorySegment session, FuseBridge bridge) {
        for (long nodeid : bridge.nodes().nodeids()) {
            try {
                int ignored = (int) libfuse.notifyInvalInode.invokeExact(session, nodeid, 0L, 0L);
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.DEBUG, "notify_inval_inode " + nodeid + " failed", t);
            }
        }
    }

    /**
     * Sets the kernel's readahead window of the new mount ({@link KernelReadahead}), if asked to.
     *
     * @return the window now in effect, in bytes, or -1 where the kernel's own stays (not asked to, or it
     *     could not be set: logged as a warning, or at debug level for the default window where sysfs
     *     refuses a user who is not root; the mount works as before). A mount whose opens are all direct
     *     I/O does not ask: the kernel reads nothing ahead for it
     */
    private static long setReadAhead(Path mountPoint, long bytes) {
        if (bytes == 0) {
            return -1;
        }
        try {
            return KernelReadahead.set(mountPoint, bytes);
        } catch (IOException | RuntimeException e) {
            LOG.log(readAheadFailureLevel(e, bytes), "cannot set the kernel's"
                    + " readahead window of " + mountPoint + " to " + bytes / 1024 + " KiB (writing read_ahead_kb"
                    + " needs root); the kernel's own stays: " + e);
            return -1;
        }
    }

    /**
     * libfuse's command line after the program name ({@code fuse_session_new}'s options):
     * fsname, subtype, {@code default_permissions} where the file system keeps POSIX attributes (the
     * kernel then checks every access against the mode, owner and group {@code getattr} reports, as
     * for a local filesystem; without them it checks nothing and only the mounting user, or everyone
     * with {@code allow_other}, gets in); for a mount by root, mount(8)'s {@code suid} and (where the
     * file system keeps device nodes) {@code dev} unless {@code nosuid}/{@code nodev} are given, then {@link FuseMountOptions#fuseOptions()} but for the high-level
     * API's options ({@link HighLevelOptions}, which become the mount's {@link CacheMode}).
     */
    static List<String> arguments(IomapFileSystem fs, FuseMountOptions options) throws IOException {
        List<String> args = new ArrayList<>();
        String source = options.source() != null ? options.source() : "iomap:" + fs.adapterName();
        args.add("-ofsname=" + escapeOption(source));
        args.add("-osubtype=iomap");
        if (options.blockDevice()) {
            args.add("-oblkdev");
            // fuseblk's block size is the super block's: 512 up to a page
            args.add("-oblksize=" + Math.clamp(fs.statfs().blockSize(), 512, 4096));
        }
        List<String> libfuse = HighLevelOptions.of(options.fuseOptions()).libfuse();
        if (fs.capabilities().contains(Capability.POSIX_ATTRIBUTES) && !libfuse.contains("default_permissions")) {
            args.add("-odefault_permissions");
        }
        if (runByRoot()) {
            // mount(8)'s defaults for a kernel file system that root mounts (libfuse's are nosuid and nodev).
            if (fs.capabilities().contains(Capability.SPECIAL_FILES) && !libfuse.contains("nodev")
                    && !libfuse.contains("dev")) {
                args.add("-odev");
            }
            if (!libfuse.contains("nosuid") && !libfuse.contains("suid")) {
                args.add("-osuid");
            }
        }
        for (String option : libfuse) {
            args.add("-o" + option);
        }
        return args;
    }

    /** @return whether this process runs as root (user id 0), whose mounts take mount(8)'s defaults */
    private static boolean runByRoot() {
        try {
            return ((Integer) java.nio.file.Files.getAttribute(java.nio.file.Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /**
     * @param value an option's value
     * @return it as one element of libfuse's {@code -o} comma list: backslash and comma escaped with a
     *     backslash ({@code fuse_opt_parse})
     */
    static String escapeOption(String value) {
        return value.replace("\\", "\\\\").replace(",", "\\,");
    }

    /**
     * Mounts, blocks until unmounted, and leaves the file system closed and its image clean. Ctrl-C
     * (SIGINT) or SIGTERM shuts the JVM down, and a shutdown hook unmounts and closes first;
     * {@code fusermount3 -u} from outside ends it too. (A background job of a non-interactive shell
     * ignores SIGINT, and so does the JVM then: use SIGTERM or {@code fusermount3 -u} in scripts.)
     * Says on {@code System.err} when it is mounted and when the image is clean.
     *
     * @param fs the file system, owned (and closed) by this call unless mounting fails
     * @param device the file system's device, closed after it; or null
     * @param mountPoint an existing directory
     * @param options how to mount
     * @return 0 when unmounted and closed cleanly, 1 if closing the file system failed (reported)
     * @throws IOException if mounting fails (nothing is closed then)
     */
    public static int mountForeground(IomapFileSystem fs, BlockDevice device, Path mountPoint,
            FuseMountOptions options) throws IOException {
        return mount(fs, device, mountPoint, options).serveUntilUnmounted();
    }

    /**
     * Serves this mount until it is unmounted, and leaves the file system closed and its image clean, as
     * {@link #mountForeground(IomapFileSystem, BlockDevice, Path, FuseMountOptions)} after mounting: says on
     * {@code System.err} that it is mounted, and when the image is clean; SIGINT or SIGTERM unmount (a
     * shutdown hook), as does {@code umount} or {@code fusermount3 -u} from outside.
     *
     * @return 0 when unmounted and closed cleanly, 1 if closing the file system failed (reported)
     */
    public int serveUntilUnmounted() {
        System.err.println("iomap: " + teardown.fs.adapterName() + " mounted on " + mountPoint
                + cachingNote(this) + "; umount " + mountPoint + " unmounts");
        System.err.flush();
        Thread hook = Thread.ofPlatform().name("iomap-unmount").unstarted(this::closeAndReport);
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            awaitUnmounted();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run: it closes the mount
            }
            closeAndReport();
        }
        return closeFailure() == null ? 0 : 1;
    }

    private static String cachingNote(IomapMount mount) {
        CacheMode cache = mount.bridge().cache();
        String readAhead = mount.kernelReadAheadBytes() > 0
                ? "; kernel readahead " + mount.kernelReadAheadBytes() / 1024 + " KiB" : "";
        return switch (cache.mode()) {
            case KERNEL -> " (kernel page cache" + readAhead + ")";
            case WRITEBACK -> " (kernel writeback cache" + readAhead + ")";
            case DIRECT -> cache.readCache() ? " (direct I/O; read-only opens cached" + readAhead + ")" : " (direct I/O)";
        };
    }

    /**
     * @param release a Linux release such as {@code 6.18.4-foo} ({@code os.version})
     * @param major the least major version
     * @param minor the least minor version with that major
     * @return whether the release is at least {@code major.minor}; false if it does not start with two numbers
     */
    static boolean kernelAtLeast(String release, int major, int minor) {
        Matcher version = Pattern.compile("^(\\d+)\\.(\\d+)").matcher(release);
        if (!version.find()) {
            return false;
        }
        int kernelMajor = Integer.parseInt(version.group(1));
        return kernelMajor > major || (kernelMajor == major && Integer.parseInt(version.group(2)) >= minor);
    }

    /**
     * {@link #mountForeground(IomapFileSystem, BlockDevice, Path, FuseMountOptions)} without a device
     * to close.
     *
     * @param fs the file system
     * @param mountPoint an existing directory
     * @param options how to mount
     * @return 0 when unmounted cleanly, 1 if closing failed
     * @throws IOException if mounting fails
     */
    public static int mountForeground(IomapFileSystem fs, Path mountPoint, FuseMountOptions options)
            throws IOException {
        return mountForeground(fs, null, mountPoint, options);
    }

    /**
     * How loudly a readahead window that could not be set is logged: a user's own mount cannot write
     * sysfs, so the default window refused is a quiet miss (debug); a window asked for, or any other
     * failure, is a warning.
     *
     * @param failure why the window could not be set
     * @param bytes the window that was asked for
     * @return the level to log at
     */
    static System.Logger.Level readAheadFailureLevel(Exception failure, long bytes) {
        boolean quiet = failure instanceof AccessDeniedException && bytes == FuseMountOptions.DEFAULT_READ_AHEAD_BYTES;
        return quiet ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING;
    }

    /**
     * @return the kernel's readahead window of this mount as the mount set it, in bytes
     *     ({@link FuseMountOptions#readAheadBytes()}), or -1 where the kernel's own stays
     */
    public long kernelReadAheadBytes() {
        return kernelReadAheadBytes;
    }

    /** @return the real path of the mount point */
    public Path mountPoint() {
        return mountPoint;
    }

    /** @return the operations libfuse calls */
    public FuseBridge bridge() {
        return bridge;
    }

    /**
     * @return whether the mount asked the kernel to allow shared writable {@code mmap} of its
     *     direct-I/O files ({@code FUSE_DIRECT_IO_ALLOW_MMAP}, {@link ReplyFlags}); false on a mount
     *     without direct I/O (where the kernel page cache allows it anyway) or where the request could
     *     not be made (shared mappings then fail with ENODEV)
     */
    public boolean sharedMmapAllowed() {
        return replyFlags.mmapAllowed();
    }

    /** @return whether the kernel mount is there (false after an unmount from outside or {@link #close()}) */
    public boolean isMounted() {
        return closed.getCount() > 0 && MountTable.isMountedAs(mountPoint, connection);
    }

    /**
     * Blocks until the kernel mount is gone or {@link #close()} has finished.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitUnmounted() throws InterruptedException {
        while (!closed.await(POLL.toMillis(), TimeUnit.MILLISECONDS)) {
            if (loopEnded.getCount() == 0 || !MountTable.isMountedAs(mountPoint, connection)) {
                return;
            }
        }
    }

    /**
     * Unmounts (if still mounted), waits for the FUSE loop, closes open files, the file system and
     * the device. Idempotent: later calls return at once (after the first finished).
     *
     * @throws IOException the first failure; the rest is still done
     */
    @Override
    public synchronized void close() throws IOException {
        if (closing) {
            return;
        }
        closing = true;
        var failures = new ArrayList<Exception>();
        run(failures, this::stopLoop);
        failures.addAll(teardown.run());
        closed.countDown();
        if (!failures.isEmpty()) {
            closeFailure = new IOException("unmounting " + mountPoint + " failed: " + failures.getFirst(),
                    failures.getFirst());
            failures.stream().skip(1).forEach(closeFailure::addSuppressed);
            throw closeFailure;
        }
    }

    private synchronized IOException closeFailure() {
        return closeFailure;
    }

    /** Closes, and says once on {@code System.err} how it went (from the shutdown hook or the caller). */
    private synchronized void closeAndReport() {
        if (reported) {
            return;
        }
        reported = true;
        try {
            close();
            System.err.println("iomap: unmounted " + mountPoint + (bridge.isShutDown()
                    ? "; it was shut down: nothing was written back, the next mount recovers the image"
                    : "; the image is clean"));
        } catch (IOException e) {
            System.err.println("iomap: " + e.getMessage());
            if (!hostFull(e)) {
                e.printStackTrace(System.err);
            }
        }
    }

    /**
     * @return whether {@code failure} came from the host filesystem under the image being full: the
     *     message says all there is to know (free space on the host), so no stack trace follows it
     */
    private static boolean hostFull(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof DeviceNoSpaceException) {
                return true;
            }
        }
        return false;
    }

    @FunctionalInterface
    private interface Step {
        void run() throws Exception;
    }

    private static void run(List<Exception> failures, Step step) {
        try {
            step.run();
        } catch (Exception e) {
            failures.add(e);
        }
    }

    /**
     * Unmounts (lazily, as {@code fuse_session_unmount} does; nothing if the kernel mount is gone already)
     * and waits for the loop; if it still runs after {@link #LOOP_EXIT} (a lazy unmount whose files are
     * still open), aborts the connection ({@code /sys/fs/fuse/connections/N/abort}) and waits again; then
     * destroys the session. The upcall arena is closed only once the loop has ended.
     */
    private void stopLoop() throws Exception {
        if (MountTable.isMountedAs(mountPoint, connection)) {   // not after umount (EINVAL), nor a later mount's
            try {
                libfuse.sessionUnmount.invokeExact(session);
            } catch (Throwable t) {
                throw new IOException("fuse_session_unmount failed", t);
            }
        }
        if (!loopEnded.await(LOOP_EXIT.toMillis(), TimeUnit.MILLISECONDS)) {
            abortConnection();
            if (!loopEnded.await(LOOP_EXIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("the FUSE loop on " + mountPoint + " did not stop");
            }
        }
        loop.join();
        try {
            libfuse.sessionDestroy.invokeExact(session);
        } catch (Throwable t) {
            throw new IOException("fuse_session_destroy failed", t);
        }
        upcalls.close();
    }

    private void abortConnection() {
        if (connection == null) {
            return;
        }
        String minor = connection.substring(connection.indexOf(':') + 1);
        try {
            Files.writeString(Path.of("/sys/fs/fuse/connections", minor, "abort"), "1");
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot abort the FUSE connection of " + mountPoint, e);
        }
    }

    /**
     * What unmounting closes, once: the files the kernel left open, the file system (everything written
     * back, the image clean) and the device (its lock released). Run by the {@code destroy} upcall
     * ({@code FUSE_DESTROY}, which the kernel sends to a {@code fuseblk} mount at unmount and waits for, so
     * that {@code umount} returns once the image is clean and free for the next mount; libfuse calls it at
     * {@code fuse_session_destroy} for other mounts), or by {@link #close()}, whichever comes first.
     */
    private static final class Teardown {
        private final FuseBridge bridge;
        private final IomapFileSystem fs;
        private final BlockDevice device;
        private List<Exception> failures;

        Teardown(FuseBridge bridge, IomapFileSystem fs, BlockDevice device) {
            this.bridge = bridge;
            this.fs = fs;
            this.device = device;
        }

        /** @return the failures of the one run (empty if all went well), running it if it has not run */
        synchronized List<Exception> run() {
            if (failures == null) {
                failures = new ArrayList<>();
                IomapMount.run(failures, bridge::releaseAll);
                IomapMount.run(failures, this::closeFileSystem);
                if (device != null) {
                    IomapMount.run(failures, device::close);
                }
            }
            return failures;
        }

        /**
         * Closes the file system; after a shutdown on request ({@link FuseBridge#shutDown}) its refusal to
         * write anything ({@link FileSystemShutdownException}) is what was asked for, not a failure.
         */
        private void closeFileSystem() throws IOException {
            try {
                fs.close();
            } catch (FileSystemShutdownException e) {
                if (!bridge.isShutDown()) {
                    throw e;
                }
                LOG.log(System.Logger.Level.INFO, "closed the shut-down mount without writing: " + e.getMessage());
            }
        }

        /** The {@code destroy} upcall: runs, and logs what failed (the caller of close reports it again). */
        void onDestroy() {
            for (Exception failure : run()) {
                LOG.log(System.Logger.Level.ERROR, "closing at FUSE_DESTROY failed", failure);
            }
        }
    }

    /** The owner every file is shown with: the user running the JVM. */
    private static final class Owner {
        static final int UID = id("uid");
        static final int GID = id("gid");

        private static int id(String which) {
            try {
                return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:" + which);
            } catch (IOException | RuntimeException e) {
                return 0;
            }
        }
    }
}
