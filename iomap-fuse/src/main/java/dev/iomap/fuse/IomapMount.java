package dev.iomap.fuse;

import dev.iomap.api.Capability;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceNoSpaceException;
import java.io.IOException;
import java.lang.foreign.Arena;
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
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.cryptomator.jfuse.api.Fuse;
import org.cryptomator.jfuse.api.FuseBuilder;
import org.cryptomator.jfuse.api.FuseMountFailedException;

/**
 * An {@link IomapFileSystem} mounted with FUSE (jfuse over libfuse3) on a directory.
 *
 * <p>The mount owns the file system (and, if given, its device): {@link #close()} unmounts if the
 * kernel mount is still there, waits for libfuse's loop to end, closes the files the kernel left
 * open, closes the file system (everything written back, the image left clean) and then the device.
 * An unmount from outside ({@code fusermount3 -u}, {@code umount}) ends the mount too:
 * {@link #awaitUnmounted()} returns, and {@link #close()} then finishes the job.
 *
 * <p>Needs libfuse3, {@code /dev/fuse}, and {@code --enable-native-access=ALL-UNNAMED}. Thread-safe.
 */
public final class IomapMount implements AutoCloseable {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final System.Logger LOG = System.getLogger(IomapMount.class.getName());

    private final IomapFileSystem fs;
    private final BlockDevice device;
    private final Path mountPoint;
    private final Fuse fuse;
    private final FuseBridge bridge;
    private final Arena upcalls;
    private final boolean fallocateBound;
    private final DirectIoMmap sharedMmap;
    private final long kernelReadAheadBytes;
    private final CountDownLatch closed = new CountDownLatch(1);
    private boolean closing;
    private boolean reported;
    private IOException closeFailure;

    private IomapMount(IomapFileSystem fs, BlockDevice device, Path mountPoint, Fuse fuse, FuseBridge bridge,
            Arena upcalls, boolean fallocateBound, DirectIoMmap sharedMmap, long kernelReadAheadBytes) {
        this.fs = fs;
        this.device = device;
        this.mountPoint = mountPoint;
        this.fuse = fuse;
        this.bridge = bridge;
        this.upcalls = upcalls;
        this.fallocateBound = fallocateBound;
        this.sharedMmap = sharedMmap;
        this.kernelReadAheadBytes = kernelReadAheadBytes;
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
     *     libfuse3 cannot be loaded, or mounting fails; nothing has been closed then
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
        FuseBuilder builder = Fuse.builder();
        Path library = options.findLibrary();
        if (library != null) {
            builder.setLibraryPath(library.toString());
        }
        var bridge = new FuseBridge(fs, builder.errno(), Owner.UID, Owner.GID, options.directIo());
        bridge.writebackCache(options.writebackCache());
        bridge.readCache(options.readCache() && kernelAtLeast(System.getProperty("os.version"), 6, 6));
        Fuse fuse;
        try {
            fuse = builder.build(bridge);
        } catch (UnsatisfiedLinkError e) {
            throw new IOException("cannot load libfuse3 (" + (library != null ? library : "fuse3 on java.library.path")
                    + "): install fuse3, or give its path; " + e.getMessage(), e);
        }
        Arena upcalls = Arena.ofShared();
        boolean fallocate = RawPathBinding.bind(fuse, bridge, upcalls);
        DirectIoMmap sharedMmap = null;
        var context = FuseContext.find(library);
        if (context.isPresent()) {
            bridge.inodes().useCallers(context.get()::caller);
            if (options.directIo()) {
                sharedMmap = new DirectIoMmap(context.get(), upcalls);
                bridge.onInit(sharedMmap::install);
            }
        }
        try {
            fuse.mount("iomap", real, arguments(fs, options).toArray(String[]::new));
        } catch (FuseMountFailedException | RuntimeException e) {
            closeQuietly(fuse);
            upcalls.close();
            throw new IOException("mounting " + fs.adapterName() + " on " + real + " failed: " + e.getMessage(), e);
        }
        return new IomapMount(fs, device, real, fuse, bridge, upcalls, fallocate, sharedMmap,
                options.directIo() && !options.readCache() ? -1 : setReadAhead(real, options.readAheadBytes()));
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
     * libfuse's command line after the program name (jfuse adds {@code -f} and the mount point):
     * fsname, subtype, {@code default_permissions} where the file system keeps POSIX attributes (the
     * kernel then checks every access against the mode, owner and group {@code getattr} reports, as
     * for a local filesystem; without them it checks nothing and only the mounting user, or everyone
     * with {@code allow_other}, gets in), then {@link FuseMountOptions#fuseOptions()}.
     */
    static List<String> arguments(IomapFileSystem fs, FuseMountOptions options) {
        List<String> args = new ArrayList<>();
        args.add("-ofsname=iomap:" + fs.adapterName());
        args.add("-osubtype=iomap");
        if (fs.capabilities().contains(Capability.POSIX_ATTRIBUTES)
                && !options.fuseOptions().contains("default_permissions")) {
            args.add("-odefault_permissions");
        }
        for (String option : options.fuseOptions()) {
            args.add("-o" + option);
        }
        return args;
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
        IomapMount mount = mount(fs, device, mountPoint, options);
        System.err.println("iomap: " + fs.adapterName() + " mounted on " + mount.mountPoint()
                + cachingNote(mount) + "; Ctrl-C or fusermount3 -u "
                + mount.mountPoint() + " unmounts");
        Thread hook = Thread.ofPlatform().name("iomap-unmount").unstarted(mount::closeAndReport);
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            mount.awaitUnmounted();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run: it closes the mount
            }
            mount.closeAndReport();
        }
        return mount.closeFailure() == null ? 0 : 1;
    }

    private static String cachingNote(IomapMount mount) {
        FuseBridge bridge = mount.bridge();
        String readAhead = mount.kernelReadAheadBytes() > 0
                ? "; kernel readahead " + mount.kernelReadAheadBytes() / 1024 + " KiB" : "";
        if (!bridge.kernelDirectIo()) {
            return " (kernel page cache" + readAhead + ")";
        }
        return bridge.perOpenCaching() ? " (direct I/O; read-only opens cached" + readAhead + ")" : " (direct I/O)";
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
     * @return whether fallocate(2) reaches the file system and names are the kernel's bytes
     *     ({@link RawPathBinding}; also {@code bridge().exactNames()})
     */
    public boolean fallocateBound() {
        return fallocateBound;
    }

    /**
     * @return whether the mount asked the kernel to allow shared writable {@code mmap} of its
     *     direct-I/O files ({@code FUSE_DIRECT_IO_ALLOW_MMAP}, {@link DirectIoMmap}); false on a mount
     *     without direct I/O (where the kernel page cache allows it anyway) or where the request could
     *     not be made (shared mappings then fail with ENODEV)
     */
    public boolean sharedMmapAllowed() {
        return sharedMmap != null && sharedMmap.asked();
    }

    /** @return whether the kernel mount is there (false after an unmount from outside or {@link #close()}) */
    public boolean isMounted() {
        return closed.getCount() > 0 && MountTable.isFuseMounted(mountPoint);
    }

    /**
     * Blocks until the kernel mount is gone or {@link #close()} has finished.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitUnmounted() throws InterruptedException {
        while (!closed.await(POLL.toMillis(), TimeUnit.MILLISECONDS)) {
            if (!MountTable.isFuseMounted(mountPoint)) {
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
        try {
            fuse.close();
        } catch (TimeoutException e) {
            failures.add(new IOException("the FUSE loop on " + mountPoint + " did not stop", e));
        } catch (RuntimeException e) {
            failures.add(e);
        }
        upcalls.close();
        run(failures, bridge::releaseAll);
        run(failures, fs::close);
        if (device != null) {
            run(failures, device::close);
        }
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
            System.err.println("iomap: unmounted " + mountPoint + "; the image is clean");
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

    private static void closeQuietly(Fuse fuse) {
        try {
            fuse.close();
        } catch (TimeoutException | RuntimeException ignored) {
            // mounting already failed; that is the error worth reporting
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
