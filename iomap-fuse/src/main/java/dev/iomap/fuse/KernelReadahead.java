package dev.iomap.fuse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * The kernel's readahead window of a FUSE mount: {@code read_ahead_kb} of the mount's backing device
 * info in sysfs ({@code /sys/class/bdi/MAJOR:MINOR}, the numbers of the mount's anonymous device).
 *
 * <p>The kernel starts every FUSE mount with a window of 128 KiB, and the {@code max_readahead} of the
 * FUSE {@code INIT} reply can only lower it. With 128 KiB a sequential reader of a cached open gets
 * {@code READ}s of 128-256 KiB, about two in flight, each a round trip through the mount; with 1 MiB it
 * gets {@code READ}s of 1 MiB (the largest the mount asks for), and the mount moves more per round trip
 * (issue 19's results: 2.1 against 2.8-3.2 GB/s from iomap4j's cache through the mount). Administrators
 * raise the window of FUSE mounts by hand for the same reason; the mount does it itself once it is up.
 * Writing the file needs root.
 */
final class KernelReadahead {
    /** Where sysfs lists backing device infos. */
    static final Path SYSFS_BDI = Path.of("/sys/class/bdi");

    private KernelReadahead() {
    }

    /**
     * Sets the readahead window of the FUSE file system mounted at {@code mountPoint}.
     *
     * @param mountPoint a real path where a FUSE file system is mounted
     * @param bytes the window, a positive multiple of 1 KiB
     * @return the window the kernel now has, in bytes (it may round it to whole pages)
     * @throws IOException if no FUSE file system is mounted there, or the window cannot be written
     *     (not root, say) or read back
     */
    static long set(Path mountPoint, long bytes) throws IOException {
        return set(SYSFS_BDI, MountTable.read(), mountPoint, bytes);
    }

    /**
     * {@link #set(Path, long)} against a given sysfs directory and mount table.
     *
     * @param bdiRoot the directory of backing device infos ({@link #SYSFS_BDI})
     * @param mountinfo the lines of the mount table
     * @param mountPoint a real path where a FUSE file system is mounted
     * @param bytes the window, a positive multiple of 1 KiB
     * @return the window now in {@code read_ahead_kb}, in bytes
     * @throws IOException if no FUSE file system is mounted there, it has no {@code read_ahead_kb}, or
     *     that cannot be written or read back
     */
    static long set(Path bdiRoot, List<String> mountinfo, Path mountPoint, long bytes) throws IOException {
        if (bytes <= 0 || bytes % 1024 != 0) {
            throw new IllegalArgumentException("the readahead window must be a positive multiple of 1 KiB, got "
                    + bytes);
        }
        String device = MountTable.fuseDevice(mountinfo, mountPoint.toString())
                .orElseThrow(() -> new NoSuchFileException(mountPoint.toString(), null, "no FUSE mount there"));
        Path file = bdiRoot.resolve(device).resolve("read_ahead_kb");
        if (!Files.exists(file)) {
            throw new NoSuchFileException(file.toString(), null, "the mount's backing device info has no readahead"
                    + " window");
        }
        Files.writeString(file, Long.toString(bytes / 1024));
        String now = Files.readString(file).strip();
        try {
            return Long.parseLong(now) * 1024;
        } catch (NumberFormatException e) {
            throw new IOException(file + " reads \"" + now + "\", not a number of KiB", e);
        }
    }
}
