package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.FileStat;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * An image mounted the way {@code iomap mount} does it ({@link IomapMount#mountForeground} on its own
 * thread), for end-to-end tests, plus the shell helpers they use. {@link #unmount()} is
 * {@code fusermount3 -u} and waits for the foreground mount to return.
 */
final class MountedImage implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** The adapter of the end-to-end tests; {@code -Diomap.test.adapter=snapfs} picks the small one. */
    static final String ADAPTER = System.getProperty("iomap.test.adapter", "xfs-like");

    final String adapter;
    final Path image;
    final Path mountPoint;
    private final IomapFileSystem fs;
    private final CompletableFuture<Integer> foreground;

    private MountedImage(String adapter, Path image, Path mountPoint, IomapFileSystem fs,
            CompletableFuture<Integer> foreground) {
        this.adapter = adapter;
        this.image = image;
        this.mountPoint = mountPoint;
        this.fs = fs;
        this.foreground = foreground;
    }

    /** @return what the mounted file system's cache and device have done so far */
    IoStats stats() {
        return fs.stats();
    }

    /** @return what the mounted file system can do */
    java.util.Set<dev.iomap.api.Capability> capabilities() {
        return fs.capabilities();
    }

    /** @return what the mounted file system says of {@code path} (its own view, such as allocated bytes) */
    FileStat stat(String path) throws IOException {
        return fs.stat(path);
    }

    /** Skips the calling test, with the reason, where FUSE cannot work. */
    static void assumeFuse() {
        assumeTrue(Files.exists(Path.of("/dev/fuse")), "FUSE end-to-end test skipped: /dev/fuse is absent");
        assumeTrue(onPath("fusermount3"), "FUSE end-to-end test skipped: fusermount3 is not installed");
    }

    static boolean onPath(String tool) {
        return List.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")).stream()
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, tool)));
    }

    /** Formats a new image of {@code size} bytes with 4 KiB blocks. */
    static void format(String adapter, Path image, long size) throws IOException {
        try (var device = FileBlockDevice.open(image, 4096, size, false)) {
            IomapFileSystems.format(adapter, device, FormatOptions.blockSize(4096));
        }
    }

    /**
     * The image mounted with the Java API alone (no FUSE), for checks after {@link #unmount()}.
     *
     * @param device the image's device
     * @param fs the file system on it
     */
    record Reopened(FileBlockDevice device, IomapFileSystem fs) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            try {
                fs.close();
            } finally {
                device.close();
            }
        }
    }

    /** @return {@code image} mounted with the Java API; close it */
    static Reopened reopen(String adapter, Path image) throws IOException {
        var device = FileBlockDevice.open(image, 4096, false);
        try {
            return new Reopened(device, IomapFileSystems.mount(adapter, device, MountOptions.defaults()));
        } catch (IOException | RuntimeException e) {
            device.close();
            throw e;
        }
    }

    static FsckReport fsck(String adapter, Path image) throws IOException {
        try (var device = FileBlockDevice.open(image, 4096, false)) {
            return IomapFileSystems.fsck(adapter, device);
        }
    }

    /** Mounts an existing image on a new directory and waits until the kernel mount is up. */
    static MountedImage mount(String adapter, Path image, Path mountPoint) throws Exception {
        return mount(adapter, image, mountPoint, FuseMountOptions.defaults());
    }

    /** As {@link #mount(String, Path, Path)}, with these options. */
    static MountedImage mount(String adapter, Path image, Path mountPoint, FuseMountOptions options)
            throws Exception {
        return mount(adapter, image, mountPoint, options, Map.of());
    }

    /**
     * As {@link #mount(String, Path, Path, FuseMountOptions)}, with the adapter's own mount options
     * ({@code data=journal}; {@link MountOptions#adapterOptions()}).
     */
    static MountedImage mount(String adapter, Path image, Path mountPoint, FuseMountOptions options,
            Map<String, String> adapterOptions) throws Exception {
        Files.createDirectories(mountPoint);
        var device = FileBlockDevice.open(image, 4096, false);
        IomapFileSystem fs;
        try {
            fs = IomapFileSystems.mount(adapter, device, MountOptions.defaults().withAdapterOptions(adapterOptions));
        } catch (IOException | RuntimeException e) {
            device.close();
            throw e;
        }
        CompletableFuture<Integer> foreground = new CompletableFuture<>();
        Thread.ofPlatform().name("foreground-mount").daemon().start(() -> {
            try {
                foreground.complete(IomapMount.mountForeground(fs, device, mountPoint, options));
            } catch (Throwable t) {
                foreground.completeExceptionally(t);
            }
        });
        Path real = mountPoint.toRealPath();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!MountTable.isFuseMounted(real)) {
            if (foreground.isDone()) {
                foreground.join();
                throw new AssertionError("the foreground mount returned before mounting");
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no FUSE mount on " + real + " after " + TIMEOUT);
            }
            Thread.sleep(20);
        }
        return new MountedImage(adapter, image, real, fs, foreground);
    }

    /** {@code fusermount3 -u} (retried while busy for up to 2 s); asserts the foreground mount then returns 0 and leaves a clean image. */
    void unmount() throws Exception {
        ShellResult result = run(mountPoint.getParent(), List.of("fusermount3", "-u", mountPoint.toString()));
        // Seen once just after mounting (cause not established): EBUSY that clears within moments.
        for (int retry = 0; retry < 20 && result.exit() != 0 && result.stderr().contains("busy"); retry++) {
            Thread.sleep(100);
            result = run(mountPoint.getParent(), List.of("fusermount3", "-u", mountPoint.toString()));
        }
        assertThat(result.exit()).as("fusermount3 -u: %s", result.stderr()).isZero();
        assertThat(foreground.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("mountForeground status").isZero();
        assertThat(MountTable.isFuseMounted(mountPoint)).isFalse();
        assertThat(fsck(adapter, image).problems()).as("fsck after unmount").isEmpty();
    }

    /**
     * {@code fusermount3 -u} of a mount that was shut down: asserts the unmount succeeds and the foreground
     * mount returns 0, without looking at the image (the next mount recovers it).
     */
    void unmountShutDown() throws Exception {
        ShellResult result = run(mountPoint.getParent(), List.of("fusermount3", "-u", mountPoint.toString()));
        assertThat(result.exit()).as("fusermount3 -u: %s", result.stderr()).isZero();
        assertThat(foreground.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("mountForeground status").isZero();
        assertThat(MountTable.isFuseMounted(mountPoint)).isFalse();
    }

    /** Unmounts (lazily) if a test left the mount up, and waits for the foreground mount to end. */
    @Override
    public void close() throws IOException {
        if (foreground.isDone()) {
            return;
        }
        try {
            run(mountPoint.getParent(), List.of("fusermount3", "-u", "-z", mountPoint.toString()));
            foreground.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IOException("cleaning up the mount on " + mountPoint + " failed", e);
        }
    }

    /** @return whether util-linux's fallocate(1) is installed and fallocate(2) reaches the file system */
    boolean fallocateTool() {
        return onPath("fallocate");
    }

    /** Runs a bash script in the mount point, asserting it succeeds; returns its standard output. */
    String sh(String script) throws Exception {
        ShellResult result = shell(script);
        assertThat(result.exit()).as("script failed: %s%nstderr: %s", script, result.stderr()).isZero();
        return result.stdout();
    }

    /**
     * Runs a bash script in the mount point, asserting it succeeds; returns its standard output as
     * the bytes it wrote (file names that are not UTF-8 stay as they are).
     */
    byte[] shBytes(String script) throws Exception {
        Path out = Files.createTempFile("iomap-fuse-bytes", ".bin");
        try {
            sh("{ " + script + "; } > '" + out + "'");
            return Files.readAllBytes(out);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** Runs a bash script in the mount point; returns what happened. */
    ShellResult shell(String script) throws Exception {
        return run(mountPoint, List.of("bash", "-euo", "pipefail", "-c", script));
    }

    record ShellResult(int exit, String stdout, String stderr) {
    }

    static ShellResult run(Path dir, List<String> command) throws Exception {
        Path out = Files.createTempFile("iomap-fuse-out", ".txt");
        Path err = Files.createTempFile("iomap-fuse-err", ".txt");
        try {
            Process process = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(5 * TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("timed out: " + command);
            }
            // Lenient: a tool's message may quote a file name that is not UTF-8.
            return new ShellResult(process.exitValue(), new String(Files.readAllBytes(out), StandardCharsets.UTF_8),
                    new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
