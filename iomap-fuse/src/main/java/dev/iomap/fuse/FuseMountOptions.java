package dev.iomap.fuse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * How to mount.
 *
 * @param directIo whether every open that may write bypasses the kernel's page cache
 *     ({@code FOPEN_DIRECT_IO} in the reply to each open and create; {@link CacheMode}), so the data path
 *     is iomap4j's page cache, not the kernel's; on by default. A shared writable {@code mmap} of such a
 *     file needs Linux 6.6 or later ({@link IomapMount#sharedMmapAllowed()}, {@link ReplyFlags}); on an
 *     older kernel it fails with
 *     ENODEV (a private mapping works); without direct I/O files are mapped through the kernel's page
 *     cache
 * @param readCache with {@code directIo}: whether read-only opens use the kernel's
 *     page cache all the same ({@link CacheMode}), so that repeated and sequential reads are served by
 *     the kernel (Linux 6.6 or later, where a direct write drops the cached pages it covers; on an older
 *     kernel the mount ignores it); every open that may write stays direct I/O; on by default. Off: every
 *     open is direct I/O, for images that something else changes too
 * @param writebackCache whether to ask the kernel for its writeback cache ({@code FUSE_CAP_WRITEBACK_CACHE}:
 *     writes gathered in the kernel's page cache and sent in large requests at its writeback; see
 *     {@link CacheMode.Mode#WRITEBACK}); it has no effect with {@code directIo}, so it is off by default
 * @param fuseOptions more {@code -o} options for libfuse (e.g. {@code "allow_other"})
 * @param libraryPath libfuse3's shared object, or null to look in the usual places
 *     ({@link #findLibrary()})
 * @param readAheadBytes the kernel's readahead window for the mount's cached opens, in bytes, a
 *     multiple of 1 KiB; 0 leaves the kernel's own (128 KiB, which the FUSE {@code INIT} reply can
 *     only lower). The mount sets it in {@code /sys/class/bdi/MAJOR:MINOR/read_ahead_kb} once it is up
 *     ({@link KernelReadahead}), which needs root; where it cannot, the kernel's window stays (a
 *     warning says so, unless it is the default window refused to a user who is not root). Default
 *     {@link #DEFAULT_READ_AHEAD_BYTES}
 * @param sharedImage whether other nodes change the image (a cluster node): every open is direct I/O,
 *     whatever the other options say, and the kernel caches no attributes ({@link CacheMode})
 * @param source what the mount table shows as the mount's source ({@code fsname}): the image's path, so
 *     that {@code findmnt -S IMAGE} finds it; null for {@code iomap:ADAPTER}
 * @param blockDevice with {@code source} the path of a block device (a loop device over the image): mount
 *     as {@code fuseblk} over it ({@code blkdev}), so that the kernel holds the device while mounted and
 *     {@code umount} waits for the file system to be closed ({@code FUSE_DESTROY}, {@link IomapMount});
 *     needs root
 */
public record FuseMountOptions(boolean directIo, boolean readCache, boolean writebackCache, List<String> fuseOptions,
        Path libraryPath, long readAheadBytes, boolean sharedImage, String source, boolean blockDevice) {

    /**
     * The default kernel readahead window: 1 MiB, the largest request the mount asks for
     * ({@code max_readahead}, {@code max_pages}), so that a sequential reader's window is one
     * {@code READ} of 1 MiB instead of several of 128-256 KiB.
     */
    public static final long DEFAULT_READ_AHEAD_BYTES = 1 << 20;

    /** The largest readahead window the options take: 1 GiB. */
    public static final long MAX_READ_AHEAD_BYTES = 1L << 30;

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

    /**
     * Copies and checks.
     *
     * @throws IllegalArgumentException if {@code readAheadBytes} is negative, above
     *     {@link #MAX_READ_AHEAD_BYTES} or not a multiple of 1 KiB
     */
    public FuseMountOptions {
        fuseOptions = List.copyOf(Objects.requireNonNull(fuseOptions, "fuseOptions"));
        if (readAheadBytes < 0 || readAheadBytes > MAX_READ_AHEAD_BYTES || readAheadBytes % 1024 != 0) {
            throw new IllegalArgumentException("the readahead window must be 0 (the kernel's own) or a multiple of"
                    + " 1 KiB up to 1 GiB, got " + readAheadBytes + " bytes");
        }
        if (blockDevice && source == null) {
            throw new IllegalArgumentException("a fuseblk mount needs its block device as the source");
        }
    }

    /**
     * @return direct I/O on with read-only opens caching, no writeback cache, no extra options, libfuse3
     *     found in the usual places, a kernel readahead window of {@link #DEFAULT_READ_AHEAD_BYTES}
     */
    public static FuseMountOptions defaults() {
        return new FuseMountOptions(true, true, false, List.of(), null, DEFAULT_READ_AHEAD_BYTES, false, null, false);
    }

    /**
     * @param value whether read-only opens of a direct-I/O mount may use the kernel's page cache
     * @return these options with that setting
     */
    public FuseMountOptions withReadCache(boolean value) {
        return new FuseMountOptions(directIo, value, writebackCache, fuseOptions, libraryPath, readAheadBytes,
                sharedImage, source, blockDevice);
    }

    /**
     * @param value whether the kernel page cache is bypassed
     * @return these options with that setting
     */
    public FuseMountOptions withDirectIo(boolean value) {
        return new FuseMountOptions(value, readCache, writebackCache, fuseOptions, libraryPath, readAheadBytes,
                sharedImage, source, blockDevice);
    }

    /**
     * @param value whether to ask for the kernel's writeback cache (meaningful without direct I/O)
     * @return these options with that setting
     */
    public FuseMountOptions withWritebackCache(boolean value) {
        return new FuseMountOptions(directIo, readCache, value, fuseOptions, libraryPath, readAheadBytes,
                sharedImage, source, blockDevice);
    }

    /**
     * @param options more {@code -o} options
     * @return these options with those
     */
    public FuseMountOptions withFuseOptions(List<String> options) {
        return new FuseMountOptions(directIo, readCache, writebackCache, options, libraryPath, readAheadBytes,
                sharedImage, source, blockDevice);
    }

    /**
     * @param path libfuse3's shared object
     * @return these options with that library
     */
    public FuseMountOptions withLibraryPath(Path path) {
        return new FuseMountOptions(directIo, readCache, writebackCache, fuseOptions, path, readAheadBytes,
                sharedImage, source, blockDevice);
    }

    /**
     * @param bytes the kernel's readahead window for the mount, 0 for the kernel's own
     * @return these options with that window
     * @throws IllegalArgumentException as the record's constructor
     */
    public FuseMountOptions withReadAheadBytes(long bytes) {
        return new FuseMountOptions(directIo, readCache, writebackCache, fuseOptions, libraryPath, bytes,
                sharedImage, source, blockDevice);
    }

    /**
     * @param value whether other nodes change the image (a cluster node)
     * @return these options with that setting
     */
    public FuseMountOptions withSharedImage(boolean value) {
        return new FuseMountOptions(directIo, readCache, writebackCache, fuseOptions, libraryPath, readAheadBytes,
                value, source, blockDevice);
    }

    /**
     * @param value the mount's source as the mount table shows it (the image's path), or null
     * @return these options with that source, as a plain FUSE mount
     */
    public FuseMountOptions withSource(String value) {
        return new FuseMountOptions(directIo, readCache, writebackCache, fuseOptions, libraryPath, readAheadBytes,
                sharedImage, value, false);
    }

    /**
     * @param device a block device over the image (a loop device)
     * @return these options mounting as {@code fuseblk} over that device, which is then the source
     */
    public FuseMountOptions withBlockDevice(Path device) {
        return new FuseMountOptions(directIo, readCache, writebackCache, fuseOptions, libraryPath, readAheadBytes,
                sharedImage, device.toString(), true);
    }

    /**
     * @return whether {@link #fuseOptions()} ask for a read-only mount: {@code ro}, unless a later
     *     {@code rw} takes it back (the last of the two wins, as with mount(8))
     */
    public boolean readOnly() {
        boolean readOnly = false;
        for (String list : fuseOptions) {
            for (String option : list.split(",")) {
                if (option.equals("ro")) {
                    readOnly = true;
                } else if (option.equals("rw")) {
                    readOnly = false;
                }
            }
        }
        return readOnly;
    }

    /** @return the atime options among {@link #fuseOptions()} ({@link AtimePolicy#of}) */
    public AtimePolicy atime() {
        return AtimePolicy.of(fuseOptions);
    }

    /** @return the library to load: the one given, else the first of the usual places that exists, else null */
    public Path findLibrary() {
        if (libraryPath != null) {
            return libraryPath;
        }
        return LIBRARY_CANDIDATES.stream().filter(Files::isReadable).findFirst().orElse(null);
    }
}
