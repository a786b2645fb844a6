package dev.iomap.fuse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * How to mount.
 *
 * @param directIo whether every open bypasses the kernel's page cache (libfuse's
 *     {@code fuse_config.direct_io}, which sets {@code direct_io} in the {@code fuse_file_info} of each
 *     open and create; see {@link DirectIoConfig}), so the data path is iomap4j's page cache, not the
 *     kernel's; on by default. A shared writable {@code mmap} of such a file needs Linux 6.6 or later
 *     ({@link IomapMount#sharedMmapAllowed()}, {@link DirectIoMmap}); on an older kernel it fails with
 *     ENODEV (a private mapping works); without direct I/O files are mapped through the kernel's page
 *     cache
 * @param readCache with {@code directIo}: whether read-only opens of files with one name use the kernel's
 *     page cache all the same ({@link OpenCaching}), so that repeated and sequential reads are served by
 *     the kernel (Linux 6.6 or later, where a direct write drops the cached pages it covers; on an older
 *     kernel the mount ignores it); every open that may write stays direct I/O; on by default. Off: every
 *     open is direct I/O (the behaviour before issue 19), for images that something else changes too
 * @param writebackCache whether to ask the kernel for its writeback cache ({@code FUSE_CAP_WRITEBACK_CACHE}:
 *     writes gathered in the kernel's page cache and sent in large requests at its writeback; see
 *     {@link FuseBridge#writebackCache}); it has no effect with {@code directIo}, so it is off by default
 * @param fuseOptions more {@code -o} options for libfuse (e.g. {@code "allow_other"})
 * @param libraryPath libfuse3's shared object, or null to look in the usual places
 *     ({@link #findLibrary()})
 */
public record FuseMountOptions(boolean directIo, boolean readCache, boolean writebackCache, List<String> fuseOptions, Path libraryPath) {

    /** Places Debian, Fedora and others keep libfuse3, tried in order. */
    static final List<Path> LIBRARY_CANDIDATES = List.of(
            Path.of("/usr/lib/x86_64-linux-gnu/libfuse3.so.3"),
            Path.of("/lib/x86_64-linux-gnu/libfuse3.so.3"),
            Path.of("/usr/lib/aarch64-linux-gnu/libfuse3.so.3"),
            Path.of("/lib/aarch64-linux-gnu/libfuse3.so.3"),
            Path.of("/usr/lib64/libfuse3.so.3"),
            Path.of("/lib64/libfuse3.so.3"),
            Path.of("/usr/lib/libfuse3.so.3"),
            Path.of("/usr/local/lib/libfuse3.so.3"));

    /** Copies. */
    public FuseMountOptions {
        fuseOptions = List.copyOf(Objects.requireNonNull(fuseOptions, "fuseOptions"));
    }

    /**
     * @return direct I/O on with read-only opens caching, no writeback cache, no extra options, libfuse3
     *     found in the usual places
     */
    public static FuseMountOptions defaults() {
        return new FuseMountOptions(true, true, false, List.of(), null);
    }

    /**
     * @param value whether read-only opens of a direct-I/O mount may use the kernel's page cache
     * @return these options with that setting
     */
    public FuseMountOptions withReadCache(boolean value) {
        return new FuseMountOptions(directIo, value, writebackCache, fuseOptions, libraryPath);
    }

    /**
     * @param value whether the kernel page cache is bypassed
     * @return these options with that setting
     */
    public FuseMountOptions withDirectIo(boolean value) {
        return new FuseMountOptions(value, readCache, writebackCache, fuseOptions, libraryPath);
    }

    /**
     * @param value whether to ask for the kernel's writeback cache (meaningful without direct I/O)
     * @return these options with that setting
     */
    public FuseMountOptions withWritebackCache(boolean value) {
        return new FuseMountOptions(directIo, readCache, value, fuseOptions, libraryPath);
    }

    /**
     * @param options more {@code -o} options
     * @return these options with those
     */
    public FuseMountOptions withFuseOptions(List<String> options) {
        return new FuseMountOptions(directIo, readCache, writebackCache, options, libraryPath);
    }

    /**
     * @param path libfuse3's shared object
     * @return these options with that library
     */
    public FuseMountOptions withLibraryPath(Path path) {
        return new FuseMountOptions(directIo, readCache, writebackCache, fuseOptions, path);
    }

    /** @return the library to load: the one given, else the first of the usual places that exists, else null */
    public Path findLibrary() {
        if (libraryPath != null) {
            return libraryPath;
        }
        return LIBRARY_CANDIDATES.stream().filter(Files::isReadable).findFirst().orElse(null);
    }
}
