package dev.iomap.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where an image is mounted, as the kernel's mount table of this mount namespace says
 * ({@code /proc/self/mountinfo}): a {@code fuse.iomap} mount whose source is the image, or a
 * {@code fuseblk.iomap} mount over a loop device whose backing file is the image. A mount refused because
 * its image is busy asks this first: a mounted image is refused at once ("mounted on DIR"), and only an
 * image that is not in the table (a mount unmounted a moment ago, still writing back) is waited for.
 */
final class MountedImages {
    private static final Path MOUNT_INFO = Path.of("/proc/self/mountinfo");

    private MountedImages() {
    }

    /**
     * @param image an image file
     * @return the mount point of a mount of it, if the mount table lists one
     * @throws IOException if the mount table cannot be read
     */
    static Optional<Path> mountPointOf(Path image) throws IOException {
        return mountPointOf(image, Files.readAllLines(MOUNT_INFO, StandardCharsets.UTF_8));
    }

    /**
     * @param image an image file
     * @param mountInfo the lines of a mount table (mountinfo(5))
     * @return the mount point of the first iomap mount whose source is the image (or a loop device over it)
     */
    static Optional<Path> mountPointOf(Path image, List<String> mountInfo) {
        Path target = canonical(image);
        for (String line : mountInfo) {
            int separator = line.indexOf(" - ");
            if (separator < 0) {
                continue;
            }
            String[] fields = line.substring(0, separator).split(" ");
            String[] after = line.substring(separator + 3).split(" ");
            if (fields.length < 5 || after.length < 2) {
                continue;
            }
            String type = after[0];
            if (!type.equals("fuse.iomap") && !type.equals("fuseblk.iomap")) {
                continue;
            }
            Path source = Path.of(unescape(after[1]));
            if (type.equals("fuseblk.iomap")) {
                Optional<Path> backing = backingFile(source);
                if (backing.isEmpty()) {
                    continue;
                }
                source = backing.get();
            }
            if (canonical(source).equals(target)) {
                return Optional.of(Path.of(unescape(fields[4])));
            }
        }
        return Optional.empty();
    }

    /** @return the backing file of a loop device, if it is one with a backing file */
    private static Optional<Path> backingFile(Path device) {
        try {
            return Optional.of(LoopDevice.backingFile(device));
        } catch (IOException | UsageException e) {
            return Optional.empty();
        }
    }

    private static Path canonical(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException e) {
            return path.toAbsolutePath().normalize();
        }
    }

    /** mountinfo(5) escapes space, tab, newline and backslash as octal ({@code \040}). */
    static String unescape(String field) {
        StringBuilder text = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && isOctal(field, i + 1)) {
                text.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                text.append(c);
            }
        }
        return text.toString();
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
