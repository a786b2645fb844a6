package dev.iomap.fuse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads the kernel's mount table ({@code /proc/self/mountinfo}): whether a FUSE mount is there, whether it
 * is read-only, and (for the command line, {@link #fuseMounts}) which FUSE mounts there are and of what.
 */
public final class MountTable {
    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private MountTable() {
    }

    /**
     * @param mountPoint a real (symlink-free, absolute) path
     * @return whether a FUSE file system is mounted there
     */
    static boolean isFuseMounted(Path mountPoint) {
        try {
            return isFuseMounted(Files.readAllLines(MOUNTINFO), mountPoint.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + MOUNTINFO, e);
        }
    }

    /**
     * @param mountPoint a real path
     * @param device a FUSE connection's {@code MAJOR:MINOR}, or null for any
     * @return whether that connection (any FUSE file system, for null) is mounted at {@code mountPoint}:
     *     a mount that was unmounted must not take a later mount on the same directory for its own
     */
    static boolean isMountedAs(Path mountPoint, String device) {
        if (device == null) {
            return isFuseMounted(mountPoint);
        }
        try {
            return fuseEntries(Files.readAllLines(MOUNTINFO), mountPoint.toString()).stream()
                    .anyMatch(fields -> fields[2].equals(device));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + MOUNTINFO, e);
        }
    }

    /** Whether mountinfo(5) lines show a FUSE file system at {@code mountPoint}. */
    static boolean isFuseMounted(List<String> mountinfo, String mountPoint) {
        return !fuseEntries(mountinfo, mountPoint).isEmpty();
    }

    /**
     * The device number of the FUSE file system mounted at {@code mountPoint}, as mountinfo(5) gives it in
     * its third field ({@code MAJOR:MINOR}); of the last such line where mounts stack there (the one on
     * top, which a path lookup reaches).
     *
     * @param mountinfo the lines of {@code /proc/self/mountinfo}
     * @param mountPoint a real (symlink-free, absolute) path
     * @return {@code MAJOR:MINOR}, or empty if no FUSE file system is mounted there
     */
    static Optional<String> fuseDevice(List<String> mountinfo, String mountPoint) {
        return fuseEntries(mountinfo, mountPoint).stream().map(fields -> fields[2])
                .filter(device -> device.matches("\\d+:\\d+")).reduce((first, second) -> second);
    }

    /**
     * mountinfo(5): field 5 is the mount point, field 6 its options (octal escapes), the file system type follows " - ".
     *
     * @return the space-separated fields of each line of a FUSE file system mounted at {@code mountPoint},
     *     in the table's order
     */
    private static List<String[]> fuseEntries(List<String> mountinfo, String mountPoint) {
        List<String[]> entries = new ArrayList<>();
        for (String line : mountinfo) {
            String[] fields = line.split(" ");
            int separator = line.indexOf(" - ");
            if (fields.length < 6 || separator < 0) {
                continue;
            }
            String type = line.substring(separator + 3).split(" ")[0];
            if (type.startsWith("fuse") && unescape(fields[4]).equals(mountPoint)) {
                entries.add(fields);
            }
        }
        return entries;
    }

    /**
     * Whether the FUSE mount at {@code mountPoint} is read-only now: mountinfo(5)'s sixth field, the
     * mount's own options, begins {@code ro} (a mount made {@code ro}, or {@code mount -o remount,ro}
     * since, which the kernel does not tell a FUSE file system about); of the mount on top where mounts
     * stack there.
     *
     * @param mountinfo the lines of {@code /proc/self/mountinfo}
     * @param mountPoint a real (symlink-free, absolute) path
     * @return whether it is mounted read-only; false if no FUSE file system is mounted there
     */
    static boolean isReadOnly(List<String> mountinfo, String mountPoint) {
        return fuseEntries(mountinfo, mountPoint).stream().map(fields -> fields[5])
                .reduce((first, second) -> second)
                .map(options -> options.equals("ro") || options.startsWith("ro,")).orElse(false);
    }

    /**
     * A FUSE mount as the mount table lists it, octal escapes undone.
     *
     * @param mountPoint where it is mounted
     * @param type its file system type ({@code fuse.iomap}, {@code fuseblk.iomap}, ...)
     * @param source its source (an image's path, a loop device, ...)
     */
    public record FuseMount(Path mountPoint, String type, String source) {
    }

    /**
     * @param mountinfo the lines of a mount table (mountinfo(5))
     * @return its FUSE mounts, in the table's order; lines too short to read are skipped
     */
    public static List<FuseMount> fuseMounts(List<String> mountinfo) {
        List<FuseMount> mounts = new ArrayList<>();
        for (String line : mountinfo) {
            int separator = line.indexOf(" - ");
            if (separator < 0) {
                continue;
            }
            String[] fields = line.substring(0, separator).split(" ");
            String[] after = line.substring(separator + 3).split(" ");
            if (fields.length >= 5 && after.length >= 2 && after[0].startsWith("fuse")) {
                mounts.add(new FuseMount(Path.of(unescape(fields[4])), after[0], unescape(after[1])));
            }
        }
        return mounts;
    }

    /**
     * @return the lines of {@code /proc/self/mountinfo}
     * @throws IOException if it cannot be read
     */
    public static List<String> read() throws IOException {
        return Files.readAllLines(MOUNTINFO);
    }

    /** mountinfo(5) escapes space, tab, newline and backslash as three octal digits ({@code \040}). */
    static String unescape(String field) {
        var out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && isOctal(field, i + 1)) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isOctal(String field, int from) {
        if (from + 3 > field.length()) {
            return false;
        }
        for (int i = from; i < from + 3; i++) {
            char c = field.charAt(i);
            if (c < '0' || c > '7') {
                return false;
            }
        }
        return true;
    }
}
